#pragma once

#include <type_traits>

#include "harness/memory/data_pattern_kind.hpp"

namespace ckpt::harness {

// Calls `body` with std::integral_constant<DataPattern, P> for the run-time `pattern`, so that
// fill and verify loops are compiled once per pattern (decltype(p)::value inside `body`).
template <typename Body>
decltype(auto) with_pattern(DataPattern pattern, Body&& body) {
  switch (pattern) {
    case DataPattern::bf16:
      return body(std::integral_constant<DataPattern, DataPattern::bf16>{});
    case DataPattern::zeros:
      return body(std::integral_constant<DataPattern, DataPattern::zeros>{});
    case DataPattern::trained:
      return body(std::integral_constant<DataPattern, DataPattern::trained>{});
    case DataPattern::random:
      break;
  }
  return body(std::integral_constant<DataPattern, DataPattern::random>{});
}

}  // namespace ckpt::harness
