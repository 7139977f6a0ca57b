#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// "Did you mean" suggestions, for every error message that names an unknown word (a key, a backend,
// a hint, a model). Here, in the backends' contract library, because backends may depend on nothing
// else of ours; the harness uses the same functions (using-declarations in ckpt::harness).
namespace ckpt::backends {

// Levenshtein distance (insert, delete, substitute all cost 1), case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is plausibly a misspelling of it (distance at most
// max(2, word.size() / 3)); ties keep the earlier candidate; nullopt otherwise.
std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates);
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// " — did you mean `x`?" or "" — for appending to error messages.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace ckpt::backends
