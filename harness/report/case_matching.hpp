#pragma once

// Which case of one run is which case of another, for compare and gate.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace ckpt::harness {

inline constexpr std::size_t kNoPartner = std::numeric_limits<std::size_t>::max();

// What makes two cases the same case: their whole configuration (config_hash: the same campaign
// run again) or only the bytes they write (workload_hash: the same workload on another system,
// target or tuning, as MLPerf Storage compares; see `workload_hash`).
enum class CaseMatch { config, workload };

// For each case of `next`, the index of its partner in `base` (kNoPartner when none): equal
// `key` first (a hash, text; an empty one matches nothing), then (among the rest) equal swept
// keys; each base case is used once. Base and Next have a member `swept` (JSON).
template <typename Base, typename Next, typename BaseKey, typename NextKey>
std::vector<std::size_t> match_cases_on(const std::vector<Base>& base,
                                        const std::vector<Next>& next, BaseKey base_key,
                                        NextKey next_key) {
  std::vector<std::size_t> partner(next.size(), kNoPartner);
  std::vector<bool> used(base.size(), false);
  const auto match = [&](auto same) {
    for (std::size_t i = 0; i < next.size(); ++i) {
      for (std::size_t j = 0; j < base.size() && partner[i] == kNoPartner; ++j) {
        if (!used[j] && same(base[j], next[i])) {
          partner[i] = j;
          used[j] = true;
        }
      }
    }
  };
  match([&](const Base& b, const Next& n) {
    return !next_key(n).empty() && base_key(b) == next_key(n);
  });
  match([](const Base& b, const Next& n) { return b.swept == n.swept; });
  return partner;
}

// The same on config_hash: Base and Next have members `config_hash` (text) and `swept` (JSON).
template <typename Base, typename Next>
std::vector<std::size_t> match_cases(const std::vector<Base>& base, const std::vector<Next>& next) {
  return match_cases_on(
      base, next, [](const Base& b) -> const std::string& { return b.config_hash; },
      [](const Next& n) -> const std::string& { return n.config_hash; });
}

}  // namespace ckpt::harness
