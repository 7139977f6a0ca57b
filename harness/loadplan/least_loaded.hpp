#pragma once

// Who reads a piece in a cooperative read: of the processes that could, the one with the fewest
// bytes to read so far, the first on a tie (DCP's cooperative load planner picks the least-loaded
// rank so). Picking in one order on every process gives every process the same answers.

#include <cstdint>
#include <map>
#include <vector>

namespace ckpt::harness {

class LeastLoaded {
 public:
  // The pick among `candidates` (not empty), charged `bytes`.
  int pick(const std::vector<int>& candidates, std::uint64_t bytes) {
    int best = candidates.front();
    for (const int q : candidates) {
      if (load_[q] < load_[best]) best = q;
    }
    load_[best] += bytes;
    return best;
  }

 private:
  std::map<int, std::uint64_t> load_;
};

}  // namespace ckpt::harness
