#pragma once

// The pieces of weight_loader.cpp: an owned descriptor, reads with their errors, and the
// pipelined loader's reader threads and chunk pool.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/load/weight_loader.hpp"
#include "harness/memory/host_buffer.hpp"

namespace ckpt::harness {

// An open file, closed on destruction. Throws std::runtime_error naming the path when it cannot open.
class PosixFd {
 public:
  PosixFd(const std::string& path, int flags);
  ~PosixFd();
  PosixFd(const PosixFd&) = delete;
  PosixFd& operator=(const PosixFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

[[noreturn]] void load_io_error(std::string_view operation, const std::string& path, std::uint64_t offset, int error);

// pread of [offset, offset + length), retried until done or end of file; returns bytes read.
std::uint64_t read_fully(int fd, const std::string& path, std::byte* into, std::uint64_t offset, std::uint64_t length);

// The pipelined method's pool (pre-touched, so made before the clock starts): chunks of
// chunk_bytes (or of the largest file, when smaller), as many as pool_bytes holds and the files need.
HostBuffer make_chunk_pool(const std::vector<LoadFile>& files, const LoadSettings& settings);
// The pipelined method (settings checked by the caller) through `pool`; returns its chunk count.
int load_pipelined(const std::vector<LoadFile>& files, std::byte* destination, const LoadSettings& settings,
                   const HostBuffer& pool);

}  // namespace ckpt::harness
