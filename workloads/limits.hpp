#pragma once

#include <cstdint>

// Upper bounds on the settings that drive work. Each is far above any published model or
// training job (the largest in the zoo: hidden 18,432, vocab 256,000, 126 layers, 256 experts,
// 16,384 ranks), and low enough that every size, count and offset the layout computes fits in
// signed 64-bit arithmetic and `layout` / `--dry-run` of any accepted input finish in seconds.
namespace ckpt::workloads::limits {

inline constexpr std::int64_t kHiddenSize = std::int64_t{1} << 20;             // 1,048,576
inline constexpr std::int64_t kIntermediateSize = std::int64_t{1} << 22;       // 4,194,304
inline constexpr std::int64_t kVocabSize = std::int64_t{1} << 24;              // 16,777,216
inline constexpr std::int64_t kMaxPositionEmbeddings = std::int64_t{1} << 27;  // 134,217,728
inline constexpr std::int64_t kLayers = 16384;
inline constexpr std::int64_t kHeads = 16384;    // attention and key/value heads
inline constexpr std::int64_t kHeadDim = 65536;  // head_dim and the MLA head/rank sizes
inline constexpr std::int64_t kExperts = 16384;  // num_local_experts
inline constexpr std::int64_t kSharedExperts = 1024;
inline constexpr std::int64_t kTensors = std::int64_t{1} << 18;    // tensors of one model's weights
inline constexpr std::int64_t kWorldSize = std::int64_t{1} << 20;  // tp × pp × dp ranks
inline constexpr std::int64_t kVocabDivisor = 65536;

}  // namespace ckpt::workloads::limits
