#pragma once

// Strategies that make a checkpoint smaller than the state it holds, as the save planner applies
// them: lossless compression of each stored piece (strategy.compression), selective checkpoints
// that hold a rotating subset of the layers (strategy.selective_every) or experts
// (strategy.partial_experts), and delta checkpoints (strategy.delta_every).

#include <cstdint>
#include <string_view>

namespace ckpt::harness {

// The codec each stored piece goes through: none (the raw bytes), zstd, or bytegroup (ZipNN's
// byte grouping: bf16/fp32 exponents apart from the mantissas, each plane zstd-coded; pieces of
// other dtypes fall back to zstd).
enum class Compression { none, zstd, bytegroup };
// One frame per shard, or one per strategy.compression_chunk_bytes of a shard (frames back to
// back; a reader can decode a chunk without the rest of the piece's frames).
enum class CompressionUnit { shard, chunk };

struct CompressionSpec {
  Compression codec = Compression::none;
  int level = 3;
  CompressionUnit unit = CompressionUnit::shard;
  std::uint64_t chunk_bytes = std::uint64_t{4} << 20;  // unit = chunk: raw bytes per frame
  int threads = 1;                                     // codec threads per process

  bool enabled() const { return codec != Compression::none; }
  // Raw bytes per frame of a piece of `bytes` bytes.
  std::uint64_t frame_raw_bytes(std::uint64_t bytes) const {
    return unit == CompressionUnit::chunk && chunk_bytes < bytes ? chunk_bytes : bytes;
  }
};

// Checkpoints that hold a rotating subset of the state; the manifest points each other piece at
// the earlier checkpoint holding its newest copy, and a restore merges those copies.
// strategy.selective_every = N > 1: checkpoint t holds the layers whose index modulo N is t modulo
// N (tensors outside the layers with layer 0), so every layer is saved every N checkpoints
// (LLMTailor). strategy.partial_experts = k > 0: checkpoint t holds k of the E routed experts of
// every MoE layer, the next k after checkpoint t - 1's (wrapping), and every tensor outside the
// routed experts (MoC-System). strategy.delta_every = N > 1: a full checkpoint, then N - 1 that
// hold only the blocks changed since it (Check-N-Run's differential checkpoints); the emulated
// training update changes a chosen fraction of each tensor's blocks between two checkpoints
// (BlockUpdates), so that every byte stays verifiable.
struct SelectiveSpec {
  std::int64_t every = 1;
  std::int64_t experts = 0;        // k; 0: every expert in every checkpoint
  std::int64_t total_experts = 0;  // E: the model's routed experts per MoE layer
  std::int64_t delta_every = 1;    // N; 1: no delta checkpoints
  // strategy.delta_block_bytes: the blocks the update changes and a delta checkpoint stores.
  std::uint64_t block_bytes = std::uint64_t{64} << 10;
  // strategy.delta_changed_fraction, in millionths: the share of blocks one update changes.
  std::uint32_t changed_per_million = 50'000;

  bool delta() const { return delta_every > 1; }
  bool enabled() const { return every > 1 || experts > 0 || delta(); }
};

std::string_view compression_name(Compression codec);
std::string_view compression_unit_name(CompressionUnit unit);

}  // namespace ckpt::harness
