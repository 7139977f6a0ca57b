#include "harness/exec/durability_probe.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {
namespace {

// The probe file's descriptor; closed and the file removed when it goes.
class ProbeFile {
 public:
  explicit ProbeFile(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  }
  ~ProbeFile() {
    if (fd_ < 0) return;
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  ProbeFile(const ProbeFile&) = delete;
  ProbeFile& operator=(const ProbeFile&) = delete;
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

std::string failed(const char* call, const std::filesystem::path& path) {
  return fmt::format("{} {}: {}", call, path.string(), std::strerror(errno));
}

// xorshift64: bytes no file system compresses or deduplicates away.
std::vector<std::uint64_t> probe_bytes() {
  std::vector<std::uint64_t> words(kDurabilityProbeBytes / sizeof(std::uint64_t));
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (std::uint64_t& w : words) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w = x;
  }
  return words;
}

}  // namespace

DurabilityProbe probe_durability(const std::filesystem::path& directory) {
  DurabilityProbe probe;
  probe.bytes = kDurabilityProbeBytes;
  ProbeFile file(directory / fmt::format(".ckptbench-durability-probe-{}", ::getpid()));
  if (file.fd() < 0) {
    probe.why_not = failed("open", file.path());
    return probe;
  }
  const std::vector<std::uint64_t> words = probe_bytes();
  constexpr int kRounds = 2;
  for (int round = 0; round < kRounds; ++round) {
    const auto start = Clock::now();
    const ssize_t n = ::pwrite(file.fd(), words.data(), kDurabilityProbeBytes, 0);
    const double write_seconds = seconds_since(start);
    if (n != static_cast<ssize_t>(kDurabilityProbeBytes)) {
      probe.why_not = n < 0 ? failed("pwrite", file.path())
                            : fmt::format("pwrite {}: short write", file.path().string());
      return probe;
    }
    const auto synced = Clock::now();
    if (::fsync(file.fd()) != 0) {
      probe.why_not = failed("fsync", file.path());
      return probe;
    }
    const double fsync_seconds = seconds_since(synced);
    if (round == 0 || fsync_seconds < probe.fsync_seconds) {
      probe.fsync_seconds = fsync_seconds;
      probe.write_seconds = write_seconds;
    }
  }
  probe.probed = true;
  return probe;
}

}  // namespace ckpt::harness
