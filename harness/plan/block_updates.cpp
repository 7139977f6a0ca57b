#include "harness/plan/block_updates.hpp"

#include <algorithm>

#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness {

bool block_changed(std::uint64_t key, std::uint64_t block, std::int64_t step,
                   std::uint32_t changed_per_million) {
  const std::uint64_t h = pattern::splitmix64(
      key ^ pattern::splitmix64(0x64656c7461ULL + block * 0x9e3779b97f4a7c15ULL +
                                static_cast<std::uint64_t>(step)));
  return h % 1'000'000 < changed_per_million;
}

std::int64_t last_changed(const BlockUpdates& u, std::uint64_t key, std::uint64_t block) {
  if (!u.active()) return 0;
  for (std::int64_t s = u.step; s >= 1; --s) {
    if (block_changed(key, block, s, u.changed_per_million)) return s;
  }
  return 0;
}

std::uint64_t block_key(std::uint64_t key, std::uint64_t block, std::int64_t version) {
  if (version == 0) return key;
  const std::uint64_t mixed =
      pattern::splitmix64(key ^ pattern::splitmix64(block * 0xd1b54a32d192ed03ULL ^
                                                    static_cast<std::uint64_t>(version)));
  return pattern::with_content(mixed, key);
}

void split_into_blocks(const BlockUpdates& u, std::uint64_t key, std::uint64_t local,
                       std::uint64_t global, std::uint64_t bytes, std::vector<BlockPart>& out) {
  if (!u.active()) {
    out.push_back({local, bytes, global, 0});
    return;
  }
  while (bytes > 0) {
    const std::uint64_t block = global / u.block_bytes;
    const std::uint64_t take = std::min(bytes, (block + 1) * u.block_bytes - global);
    out.push_back({local, take, global, last_changed(u, key, block)});
    local += take;
    global += take;
    bytes -= take;
  }
}

}  // namespace ckpt::harness
