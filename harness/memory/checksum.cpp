#include "harness/memory/checksum.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <new>
#include <stdexcept>

namespace ckpt::harness {

std::uint64_t checksum64(const std::byte* data, std::uint64_t bytes) {
  return XXH3_64bits(data, bytes);
}

std::uint64_t checksum64(std::string_view text) {
  return XXH3_64bits(text.data(), text.size());
}

std::string checksum_hex(std::uint64_t sum) {
  return fmt::format("{:016x}", sum);
}

void Checksum64::FreeState::operator()(XXH3_state_s* state) const {
  XXH3_freeState(state);
}

Checksum64::Checksum64() : state_(XXH3_createState()) {
  if (!state_ || XXH3_64bits_reset(state_.get()) != XXH_OK) throw std::bad_alloc();
}

void Checksum64::update(const std::byte* data, std::uint64_t bytes) {
  // Fails only for a null state (a moved-from object) or a null pointer with bytes > 0.
  if (XXH3_64bits_update(state_.get(), data, bytes) != XXH_OK) {
    throw std::logic_error("Checksum64::update: no hash state or no data");
  }
}

std::uint64_t Checksum64::value() const {
  return XXH3_64bits_digest(state_.get());
}

}  // namespace ckpt::harness
