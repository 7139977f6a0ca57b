#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ckpt::harness {

// Levenshtein distance (insert, delete, substitute all cost 1), case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is plausibly a misspelling of it (distance at most
// max(2, word.size() / 3)); nullopt otherwise.
std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates);

// " — did you mean `x`?" or "" — for appending to error messages.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace ckpt::harness
