#pragma once

namespace ckpt::harness {

// What the deterministic shard contents look like (campaign key data.pattern). Its own small
// header so that device code (pattern::pattern_word) can use it without the campaign's headers.
// trained: bf16 and fp32 values with the exponent and mantissa statistics of a trained model's
// weights and optimizer states (pattern::trained_bf16_word and its fp32 sibling).
enum class DataPattern { random, zeros, bf16, trained };

}  // namespace ckpt::harness
