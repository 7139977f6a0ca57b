#include "harness/results/integrity.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <utility>

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;

// An object of ckptbench's own code, to find the object that holds it.
const int kOwnCode = 0;

// Shims known by the name of their library, and what each does to a measurement.
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kKnownShims{{
    {"libeatmydata", "makes fsync, fdatasync, sync and msync no-ops"},
    {"nocache", "drops written and read pages from the page cache behind the caller"},
}};

// Sanitizer runtimes intercept the I/O calls to check their buffers, and pass them on.
bool sanitizer_runtime(const std::string& library) {
  const std::string name = fs::path(library).filename().string();
  for (const char* runtime :
       {"libasan", "libtsan", "libubsan", "liblsan", "libmsan", "libhwasan"}) {
    if (name.starts_with(runtime)) return true;
  }
  return false;
}

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  return ec ? path : canonical.string();
}

// The object holding `address` (dladdr), or nullopt.
std::optional<Dl_info> object_of(const void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0) return std::nullopt;
  return info;
}

// Whether `info` is the C library's object, the program itself (a sanitizer's interceptors are
// linked into it), ckptbench's own code, or a sanitizer's runtime.
bool benign(const Dl_info& info, const Dl_info& libc, const Dl_info& own) {
  if (info.dli_fbase == libc.dli_fbase || info.dli_fbase == own.dli_fbase) return true;
  const std::string name = info.dli_fname == nullptr ? "" : info.dli_fname;
  if (name.empty() || sanitizer_runtime(name)) return true;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return !ec && canonical_or_same(name) == exe.string();
}

std::string ld_so_preload() {
  std::ifstream in("/etc/ld.so.preload");
  std::vector<std::string> entries;
  for (std::string word; in >> word;) {
    if (!word.starts_with("#")) entries.push_back(word);
  }
  return fmt::format("{}", fmt::join(entries, " "));
}

int add_known_shim(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto& shims = *static_cast<std::vector<std::string>*>(data);
  const std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
  const std::string file = fs::path(name).filename().string();
  for (const auto& [shim, does] : kKnownShims) {
    if (file.find(shim) != std::string::npos) shims.push_back(fmt::format("{} ({})", name, does));
  }
  return 0;
}

}  // namespace

const std::vector<std::string>& watched_io_calls() {
  static const std::vector<std::string> calls{
      "posix_fadvise", "posix_fadvise64", "fsync",  "fdatasync", "sync_file_range",
      "syncfs",        "msync",           "open",   "open64",    "openat",
      "openat64",      "write",           "pwrite", "pwrite64",  "pwritev",
      "read",          "pread",           "pread64"};
  return calls;
}

PreloadCheck check_preload() {
  PreloadCheck check;
  if (const char* preload = std::getenv("LD_PRELOAD")) check.ld_preload = preload;
  check.ld_so_preload = ld_so_preload();
  // A function only the C library defines: where it lies is the C library's object.
  const std::optional<Dl_info> libc = object_of(::dlsym(RTLD_DEFAULT, "gnu_get_libc_version"));
  const std::optional<Dl_info> own = object_of(&kOwnCode);
  if (libc && own) {
    for (const std::string& call : watched_io_calls()) {
      const void* address = ::dlsym(RTLD_DEFAULT, call.c_str());
      if (address == nullptr) continue;
      const std::optional<Dl_info> info = object_of(address);
      if (info && !benign(*info, *libc, *own)) check.interposed.push_back({call, info->dli_fname});
    }
  }
  ::dl_iterate_phdr(add_known_shim, &check.known_shims);
  return check;
}

double DurabilityProbe::fsync_gib_per_s() const {
  return probed && fsync_seconds > 0 ? static_cast<double>(bytes) / fsync_seconds / kGiBytes : 0;
}

bool DurabilityProbe::too_fast() const {
  // An fsync too quick for the clock to see is faster than any rate.
  return probed && (fsync_seconds <= 0 || fsync_gib_per_s() > kMaxDurableGiBPerSecond);
}

double PhaseCpu::busy_cores() const {
  return process_seconds > 0 ? (user_seconds + system_seconds) / process_seconds : 0;
}

namespace {

void preload_warnings(const PreloadCheck& p, std::vector<std::string>& out) {
  if (!p.ld_preload.empty())
    out.push_back(
        fmt::format("LD_PRELOAD is set ({}): a preloaded library can change what the I/O calls do",
                    p.ld_preload));
  if (!p.ld_so_preload.empty())
    out.push_back(fmt::format(
        "/etc/ld.so.preload loads {} into every process: it can change what the I/O calls do",
        p.ld_so_preload));
  for (const Interposer& i : p.interposed)
    out.push_back(
        fmt::format("{} is defined by {}, not the C library: the call may not do what "
                    "the result assumes",
                    i.symbol, i.library));
  for (const std::string& shim : p.known_shims)
    out.push_back(fmt::format("a known shim is loaded: {}", shim));
}

void cpu_warning(const char* phase, const std::optional<PhaseCpu>& cpu, double cores_per_process,
                 std::vector<std::string>& out) {
  if (!cpu || cpu->process_seconds <= 0) return;
  const double user_share = cpu->user_seconds / cpu->process_seconds;
  if (user_share > kUserShareLimit) {
    out.push_back(fmt::format(
        "the harness's own code kept a core busy {:.0f} % of the {} phase (user CPU): it may "
        "limit the rate more than the storage does",
        100 * user_share, phase));
  } else if (cores_per_process > 0 && cpu->busy_cores() > kBusyShareLimit * cores_per_process) {
    out.push_back(fmt::format(
        "the {} phase kept {:.2f} of the {:.2f} cores of each process busy (user + system CPU): "
        "the CPUs may limit the rate more than the storage does",
        phase, cpu->busy_cores(), cores_per_process));
  }
}

nlohmann::json cpu_json(const std::optional<PhaseCpu>& cpu) {
  if (!cpu) return nullptr;
  return {{"user_seconds", cpu->user_seconds},
          {"system_seconds", cpu->system_seconds},
          {"process_seconds", cpu->process_seconds},
          {"busy_cores", cpu->busy_cores()}};
}

nlohmann::json optional_text(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

bool may_be_cached(const IntegrityInputs& in) {
  const IntegrityRecord& r = in.record;
  return in.reads && in.cache_policy == "none" && r.host_memory_bytes > 0 &&
         static_cast<double>(r.bytes_per_host) <=
             kCachingFactor * static_cast<double>(r.host_memory_bytes);
}

}  // namespace

std::vector<std::string> integrity_warnings(const IntegrityInputs& in) {
  const IntegrityRecord& r = in.record;
  std::vector<std::string> out;
  preload_warnings(r.preload, out);
  if (r.durability.too_fast()) {
    out.push_back(fmt::format(
        "fsync of {} freshly written bytes in the target took {:.1f} us ({:.0f} GiB/s), faster "
        "than the {:.0f} GiB/s any client moves data to storage: the bytes may not be durable "
        "(a file system in memory, an fsync shim, or storage that acknowledges early)",
        r.durability.bytes, r.durability.fsync_seconds * 1e6, r.durability.fsync_gib_per_s(),
        kMaxDurableGiBPerSecond));
  }
  if (may_be_cached(in)) {
    out.push_back(fmt::format(
        "the read may come from the page cache: {} bytes per host per checkpoint, not more than "
        "{:.0f} x the host's {} bytes of memory, and cache.policy = \"none\"",
        r.bytes_per_host, kCachingFactor, r.host_memory_bytes));
  }
  cpu_warning("write", in.write, r.cores_per_process, out);
  cpu_warning("read", in.read, r.cores_per_process, out);
  return out;
}

nlohmann::json integrity_json(const IntegrityInputs& in) {
  const IntegrityRecord& r = in.record;
  nlohmann::json interposed = nlohmann::json::array();
  for (const Interposer& i : r.preload.interposed)
    interposed.push_back(fmt::format("{} ({})", i.symbol, i.library));
  const DurabilityProbe& d = r.durability;
  const auto probe_number = [&d](double value) {
    return d.probed ? nlohmann::json(value) : nlohmann::json(nullptr);
  };
  const DataGeneration& g = in.generation;
  return {{"warnings", integrity_warnings(in)},
          {"preload",
           {{"ld_preload", optional_text(r.preload.ld_preload)},
            {"ld_so_preload", optional_text(r.preload.ld_so_preload)},
            {"interposed", interposed},
            {"known_shims", r.preload.known_shims}}},
          {"durability",
           {{"probed", d.probed},
            {"why_not", d.probed ? nlohmann::json(nullptr) : nlohmann::json(d.why_not)},
            {"bytes", d.bytes},
            {"write_seconds", probe_number(d.write_seconds)},
            {"fsync_seconds", probe_number(d.fsync_seconds)},
            {"fsync_gib_per_s", probe_number(d.fsync_gib_per_s())},
            {"limit_gib_per_s", kMaxDurableGiBPerSecond}}},
          {"caching",
           {{"reads", in.reads},
            {"cache_policy", in.cache_policy},
            {"bytes_per_host", r.bytes_per_host},
            {"host_memory_bytes", r.host_memory_bytes},
            {"factor", kCachingFactor},
            {"may_be_cached", may_be_cached(in)}}},
          {"cpu",
           {{"write", cpu_json(in.write)},
            {"read", cpu_json(in.read)},
            {"cores_per_process", r.cores_per_process}}},
          {"data_generation",
           {{"bytes", g.bytes},
            {"seconds", g.seconds},
            {"gib_per_s", g.seconds > 0
                              ? nlohmann::json(static_cast<double>(g.bytes) / g.seconds / kGiBytes)
                              : nlohmann::json(nullptr)},
            {"in_timed_phases", false}}},
          {"done", {{"write", optional_text(r.done_write)}, {"read", optional_text(r.done_read)}}}};
}

}  // namespace ckpt::harness
