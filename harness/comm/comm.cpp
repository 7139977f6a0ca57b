#include "harness/comm/comm.hpp"

namespace ckpt::harness {

std::string Comm::first_problem(const std::string& mine) {
  if (all(mine.empty())) return "";
  std::string first;
  for (const std::string& problem : gather(mine)) {
    if (first.empty()) first = problem;
  }
  return broadcast(first);
}

}  // namespace ckpt::harness
