#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct XXH3_state_s;

namespace ckpt::harness {

// Every checksum and digest ckptbench records (shard checksums, config_hash, checkpoint_hash)
// is XXH3_64 of xxHash (≥ 0.8, seed 0), not a hash of its own, so that any xxHash binding can
// check a shard: in Python, xxhash.xxh3_64_hexdigest(shard_bytes) == the manifest's checksum.
inline constexpr const char* kChecksumAlgorithm = "xxh3_64";

std::uint64_t checksum64(const std::byte* data, std::uint64_t bytes);
std::uint64_t checksum64(std::string_view text);

// 16 lowercase hex digits, most significant first: xxHash's canonical form, what hexdigest()
// prints.
std::string checksum_hex(std::uint64_t sum);

// checksum64 computed piece by piece, for memory the host reads back in chunks (device
// buffers): consecutive pieces of any sizes give the one-shot value. Move-only, one thread.
class Checksum64 {
 public:
  Checksum64();  // throws std::bad_alloc
  void update(const std::byte* data, std::uint64_t bytes);
  std::uint64_t value() const;

 private:
  struct FreeState {
    void operator()(XXH3_state_s* state) const;
  };
  std::unique_ptr<XXH3_state_s, FreeState> state_;
};

}  // namespace ckpt::harness
