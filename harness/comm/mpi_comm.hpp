#pragma once

#include "harness/comm/comm.hpp"

namespace ckpt::harness {

// MPI_COMM_WORLD. Initialises MPI on construction (MPI_THREAD_FUNNELED, or MPI_THREAD_MULTIPLE
// when asked), finalises on destruction.
class MpiComm final : public Comm {
 public:
  explicit MpiComm(bool thread_multiple = false);
  ~MpiComm() override;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }
  std::optional<int> mpi_handle() const override;
  std::string thread_level() const override { return thread_level_; }
  void barrier() override;
  double max(double value) override;
  double min(double value) override;
  std::uint64_t sum(std::uint64_t value) override;
  bool all(bool value) override;
  std::vector<std::string> gather(const std::string& mine) override;
  std::string broadcast(const std::string& from_root) override;
  void send(int to, std::span<const std::byte> bytes) override;
  void receive(int from, std::span<std::byte> bytes) override;
  void exchange(int to, std::span<const std::byte> out, int from, std::span<std::byte> in) override;
  [[noreturn]] void abort(int status) override;

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string thread_level_;
};

}  // namespace ckpt::harness
