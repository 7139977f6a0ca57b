#include "harness/comm/comm.hpp"

#include <stdexcept>

namespace ckpt::harness {

std::string Comm::first_problem(const std::string& mine) {
  if (all(mine.empty())) return "";
  std::string first;
  for (const std::string& problem : gather(mine)) {
    if (first.empty()) first = problem;
  }
  return broadcast(first);
}

void Comm::send(int to, std::span<const std::byte>) {
  throw std::logic_error("Comm::send to process " + std::to_string(to) + ": a " + kind() +
                         " run has no other process");
}

void Comm::receive(int from, std::span<std::byte>) {
  throw std::logic_error("Comm::receive from process " + std::to_string(from) + ": a " + kind() +
                         " run has no other process");
}

void Comm::exchange(int to, std::span<const std::byte>, int, std::span<std::byte>) {
  throw std::logic_error("Comm::exchange with process " + std::to_string(to) + ": a " + kind() +
                         " run has no other process");
}

}  // namespace ckpt::harness
