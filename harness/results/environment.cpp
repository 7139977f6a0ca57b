#include "harness/results/environment.hpp"

#include <fmt/format.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <utility>

#include "harness/memory/memory_spaces.hpp"

#ifndef CKPT_GIT_REVISION
#define CKPT_GIT_REVISION "unknown"
#endif
#ifndef CKPT_BUILD_TYPE
#define CKPT_BUILD_TYPE "unknown"
#endif

namespace ckpt::harness {

std::string file_system_type(const std::filesystem::path& path) {
  struct statfs info {};
  std::filesystem::path probe = path;
  while (!probe.empty() && ::statfs(probe.c_str(), &info) != 0) probe = probe.parent_path();
  static constexpr std::array<std::pair<unsigned long, const char*>, 14> kTypes{
      {{0xEF53, "ext4"},
       {0x58465342, "xfs"},
       {0x01021994, "tmpfs"},
       {0x6969, "nfs"},
       {0x0BD00BD0, "lustre"},
       {0x47504653, "gpfs"},
       {0x19830326, "beegfs"},
       {0x9123683E, "btrfs"},
       {0x2FC12FC1, "zfs"},
       {0x794C7630, "overlayfs"},
       {0x65735546, "fuse"},
       {0xFF534D42, "cifs"},
       {0x00C36400, "ceph"},
       {0x5346414F, "afs"}}};
  const auto type = static_cast<unsigned long>(info.f_type);
  for (const auto& [magic, name] : kTypes) {
    if (magic == type) return name;
  }
  return fmt::format("unknown (0x{:x})", type);
}

std::string host_name() {
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  return host.data();
}

std::string shell_quote(const std::string& word) {
  const auto safe = [](unsigned char ch) {
    return std::isalnum(ch) != 0 || std::strchr("@%+=:,./-_", ch) != nullptr;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) return word;
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string line;
  for (std::string arg; std::getline(in, arg, '\0');)
    line += (line.empty() ? "" : " ") + shell_quote(arg);
  return line;
}

std::uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : 0;
}

namespace {

// /proc/cpuinfo's first "model name" (x86) or "Model"/"CPU part" line; "unknown" without one.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("model name") && !line.starts_with("Model")) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto begin = line.find_first_not_of(" \t", colon + 1);
    if (begin != std::string::npos) return line.substr(begin);
  }
  return "unknown";
}

}  // namespace

nlohmann::json environment_record(const std::filesystem::path& target, const std::string& comm_kind,
                                  int processes) {
  struct utsname uts {};
  ::uname(&uts);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {
      {"host", host_name()},
      {"kernel", fmt::format("{} {}", uts.sysname, uts.release)},
      {"machine", uts.machine},
      {"target", target.string()},
      {"file_system", file_system_type(target)},
      {"git_revision", CKPT_GIT_REVISION},
      {"build_type", CKPT_BUILD_TYPE},
      {"compiler", fmt::format("g++ {}.{}", __GNUC__, __GNUC_MINOR__)},
      {"comm", comm_kind},
      // Open MPI's MPI-IO selection (campaign.mpi_io, or mpirun --mca io …): HDF5 runs far better
      // on ROMIO. The case adds mpi_io_modules, the modules its I/O loaded.
      {"mpi_io_component",
       std::getenv("OMPI_MCA_io") != nullptr ? std::getenv("OMPI_MCA_io") : "default"},
      {"processes", processes},
      {"cores", ::sysconf(_SC_NPROCESSORS_ONLN)},
      {"cpu_model", cpu_model()},  // with cores, memory and file_system: the gate's machine class
      {"memory_bytes", host_memory_bytes()},
      {"time_utc", stamp.data()},
      {"command_line", command_line()},
      {"cuda", memory_build_cuda()},
      {"kokkos", memory_build_kokkos()}};
}

}  // namespace ckpt::harness
