#include "backends/suggest.hpp"

#include <algorithm>
#include <numeric>

namespace ckpt::backends {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the Wagner–Fischer table: row[j] is the distance between the first i
  // characters of a and the first j characters of b.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // distance(a[0, i-1), b[0, j-1))
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string_view> candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::optional<std::string_view> best;
  std::size_t best_distance = limit + 1;
  for (const std::string_view candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {  // strict: ties keep the earlier candidate
      best = candidate;
      best_distance = distance;
    }
  }
  if (!best) return std::nullopt;
  return std::string(*best);
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  const std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return closest_match(word, std::span<const std::string_view>(views));
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const std::optional<std::string> match = closest_match(word, candidates);
  if (!match) return {};
  return " — did you mean `" + *match + "`?";
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return did_you_mean(word, std::span<const std::string_view>(views));
}

}  // namespace ckpt::backends
