#pragma once

namespace ckpt::harness {

// What the deterministic shard contents look like (campaign key data.pattern). Its own small
// header so that device code (pattern_words.hpp) can use it without the campaign's headers.
enum class DataPattern { random, zeros, bf16 };

}  // namespace ckpt::harness
