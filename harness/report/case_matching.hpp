#pragma once

// Which case of one run is which case of another, for compare and gate.
#include <cstddef>
#include <limits>
#include <vector>

namespace ckpt::harness {

inline constexpr std::size_t kNoPartner = std::numeric_limits<std::size_t>::max();

// For each case of `next`, the index of its partner in `base` (kNoPartner when none): equal
// config_hash first, then (among the rest) equal swept keys; each base case is used once.
// Base and Next have members `config_hash` (text) and `swept` (JSON).
template <typename Base, typename Next>
std::vector<std::size_t> match_cases(const std::vector<Base>& base, const std::vector<Next>& next) {
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
  match([](const Base& b, const Next& n) {
    return !n.config_hash.empty() && b.config_hash == n.config_hash;
  });
  match([](const Base& b, const Next& n) { return b.swept == n.swept; });
  return partner;
}

}  // namespace ckpt::harness
