#pragma once

#include "harness/comm/comm.hpp"

namespace ckpt::harness {

class SingleComm final : public Comm {
 public:
  int rank() const override;
  int size() const override;
  std::string kind() const override;
  void barrier() override;
  double max(double value) override;
  double min(double value) override;
  std::uint64_t sum(std::uint64_t value) override;
  bool all(bool value) override;
  std::vector<std::string> gather(const std::string& mine) override;
  std::string broadcast(const std::string& from_root) override;
  [[noreturn]] void abort(int status) override;
};

}  // namespace ckpt::harness
