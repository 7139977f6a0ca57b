#pragma once

// The emulated training update of a delta run (strategy.delta_every): between two checkpoints the
// update changes a chosen fraction of each tensor's blocks. A block is block_bytes of the tensor's
// global row-major bytes (so any slicing sees the same blocks), and whether the update of step s
// changes block b of tensor `key` is a hash of (key, b, s). The bytes of block b at step s are the
// data pattern seeded by block_key(key, b, v), v the last step at or before s that changed it (0:
// never, the tensor's own key): a function of (tensor, block, the step it last changed), which a
// restore regenerates and verifies from the step its manifest names.

#include <cstdint>
#include <vector>

namespace ckpt::harness {

// A shard's update model and the step its bytes are at; inactive (the bytes as fill_pattern
// writes them) when any field is 0.
struct BlockUpdates {
  std::uint64_t block_bytes = 0;
  std::uint32_t changed_per_million = 0;  // the share of blocks one step's update changes
  std::int64_t step = 0;

  bool active() const { return block_bytes > 0 && changed_per_million > 0 && step > 0; }
};

// Whether the update of step `step` (>= 1) changes block `block` of tensor `key`.
bool block_changed(std::uint64_t key, std::uint64_t block, std::int64_t step,
                   std::uint32_t changed_per_million);

// The last step in [1, u.step] whose update changed block `block` of tensor `key`; 0: none.
std::int64_t last_changed(const BlockUpdates& u, std::uint64_t key, std::uint64_t block);

// The seed of block `block`'s bytes after the update of step `version`; version 0: `key`. The key's
// content bits (the trained pattern's state and format) are kept.
std::uint64_t block_key(std::uint64_t key, std::uint64_t block, std::int64_t version);

// A run of a shard's bytes inside one block: bytes [local, local + bytes) of the shard are the
// tensor's global bytes [global, global + bytes), last changed at step `version`.
struct BlockPart {
  std::uint64_t local = 0;
  std::uint64_t bytes = 0;
  std::uint64_t global = 0;
  std::int64_t version = 0;
};

// Appends the parts of a run of `bytes` shard bytes from `local` (global bytes from `global`) of
// tensor `key`: split where a block ends, each with its version at u.step; one part of version 0
// when `u` is inactive.
void split_into_blocks(const BlockUpdates& u, std::uint64_t key, std::uint64_t local,
                       std::uint64_t global, std::uint64_t bytes, std::vector<BlockPart>& out);

}  // namespace ckpt::harness
