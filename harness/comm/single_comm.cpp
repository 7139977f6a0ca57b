#include "harness/comm/single_comm.hpp"

#include <cstdlib>

#include "harness/comm/comm.hpp"

namespace ckpt::harness {

int SingleComm::rank() const {
  return 0;
}
int SingleComm::size() const {
  return 1;
}
std::string SingleComm::kind() const {
  return "single";
}
void SingleComm::barrier() {}
double SingleComm::max(double value) {
  return value;
}
double SingleComm::min(double value) {
  return value;
}
std::uint64_t SingleComm::sum(std::uint64_t value) {
  return value;
}
bool SingleComm::all(bool value) {
  return value;
}
std::vector<std::string> SingleComm::gather(const std::string& mine) {
  return {mine};
}
std::string SingleComm::broadcast(const std::string& from_root) {
  return from_root;
}
void SingleComm::abort(int status) {
  std::exit(status);
}

}  // namespace ckpt::harness
