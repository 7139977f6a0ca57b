#include "harness/exec/calibration.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "backends/file_common/posix_file.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/exec/cache_policy.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using backends::file_common::PosixFile;

constexpr std::uint64_t kMaxCall = std::uint64_t{1} << 30;  // bytes per write(2) / read(2) call

std::string call_failed(const char* call, const fs::path& path, int error) {
  return fmt::format("calibration {} of {}: {}", call, path.string(), std::strerror(error));
}

// Opens, writes `bytes` from `data` sequentially, syncs as the case does, closes; "" or the error.
std::string write_file(const fs::path& path, const std::byte* data, std::uint64_t bytes,
                       backends::SyncPolicy sync) {
  PosixFile file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!file.is_open()) return call_failed("open", path, errno);
  for (std::uint64_t done = 0; done < bytes;) {
    const ssize_t n = ::write(file.fd(), data + done, std::min(bytes - done, kMaxCall));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return call_failed("write", path, n < 0 ? errno : ENOSPC);
    done += static_cast<std::uint64_t>(n);
  }
  const int synced = sync == backends::SyncPolicy::fsync       ? ::fsync(file.fd())
                     : sync == backends::SyncPolicy::fdatasync ? ::fdatasync(file.fd())
                                                               : 0;
  if (synced != 0)
    return call_failed(sync == backends::SyncPolicy::fsync ? "fsync" : "fdatasync", path, errno);
  if (const int error = file.close(); error != 0) return call_failed("close", path, error);
  return "";
}

std::string read_file(const fs::path& path, std::byte* data, std::uint64_t bytes) {
  PosixFile file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.is_open()) return call_failed("open", path, errno);
  for (std::uint64_t done = 0; done < bytes;) {
    const ssize_t n = ::read(file.fd(), data + done, std::min(bytes - done, kMaxCall));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return call_failed("read", path, errno);
    if (n == 0)
      return fmt::format("calibration read of {}: the file ends at {} of {} bytes", path.string(),
                         done, bytes);
    done += static_cast<std::uint64_t>(n);
  }
  return "";
}

}  // namespace

Calibration::Calibration(fs::path directory, std::uint64_t bytes, backends::MemoryView source,
                         Comm& comm)
    : directory_(std::move(directory)), bytes_(bytes), comm_(comm) {
  file_ = directory_ / fmt::format("process-{}.bin", comm_.rank());
  std::string problem;
  if (comm_.rank() == 0) {
    std::error_code ec;
    fs::create_directories(directory_, ec);
    if (ec)
      problem = fmt::format("calibration directory {}: {}", directory_.string(), ec.message());
  }
  if (const std::string first = comm_.first_problem(problem); !first.empty())
    throw std::runtime_error(first);
  if (source.kind != backends::MemoryKind::device && source.data != nullptr &&
      source.size >= bytes_) {
    data_ = source.data;
  } else {
    own_ = HostBuffer(std::max<std::uint64_t>(bytes_, 1));
    data_ = own_.data();
  }
}

Calibration::~Calibration() {
  if (finished_) return;
  std::error_code ec;
  fs::remove(file_, ec);
}

CalibrationSample Calibration::measure(const backends::IoSettings& io, CachePolicy policy,
                                       bool read) {
  CalibrationSample sample;
  std::error_code ec;
  fs::remove(file_, ec);  // a fresh file each time, as each checkpoint is; not timed
  comm_.barrier();
  auto start = Clock::now();
  std::string problem = write_file(file_, data_, bytes_, io.sync);
  double mine = seconds_since(start);
  if (const std::string first = comm_.first_problem(problem); !first.empty())
    throw std::runtime_error(first);
  sample.write_seconds = comm_.max(mine);
  if (!read) return sample;
  backends::IoPlan plan;
  plan.files.push_back(backends::FilePlan{.path = file_.string()});
  apply_cache_policy(policy == CachePolicy::read_shift ? CachePolicy::fadvise : policy, {plan});
  comm_.barrier();
  start = Clock::now();
  problem = read_file(file_, data_, bytes_);
  mine = seconds_since(start);
  if (const std::string first = comm_.first_problem(problem); !first.empty())
    throw std::runtime_error(first);
  sample.read_seconds = comm_.max(mine);
  return sample;
}

void Calibration::finish() {
  std::error_code ec;
  fs::remove(file_, ec);
  comm_.barrier();
  if (comm_.rank() == 0) fs::remove(directory_, ec);
  finished_ = true;
}

}  // namespace ckpt::harness
