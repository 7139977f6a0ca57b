#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::backends {

// The candidate closest to `word` by edit distance when it is plausibly a misspelling
// (distance at most max(2, size / 3)), for "did you mean" messages. The harness has its own;
// backends do not depend on the harness.
std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace ckpt::backends
