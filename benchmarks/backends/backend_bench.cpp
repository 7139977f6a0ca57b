// I/O speed of every available backend, one request size at a time: write and read of
// extents of 4 KiB … 64 MiB, buffered (page-aligned or 1-byte-offset memory) and O_DIRECT,
// at queue depths 1, 4, 16 and 64 for backends that queue. Benchmarks are registered at run
// time from list_backends(), so a new backend is measured without touching this file.
//
//   build/bin/ckpt_bench_backends --benchmark_filter='io/uring/write/1MiB/direct'
//   --benchmark_min_time=0.05
//
// Environment: CKPT_BENCH_DIR (parent of the scratch directory), CKPT_BENCH_SYNC (none, fsync
// — the default, as in campaigns — or fdatasync; applied inside the timing of writes),
// CKPT_BENCH_MAX_MIB (largest plan, default 256). See benchmarks/backends/README.md.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "backends/registry.hpp"
#include "scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ckpt::backends;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kPage = 4096;
constexpr std::array<std::uint64_t, 5> kSizes{4 * kKiB, 64 * kKiB, kMiB, 16 * kMiB, 64 * kMiB};
constexpr std::array<int, 4> kQueueDepths{1, 4, 16, 64};
// A plan holds max(queue depth, 64 MiB / size) extents, at most 256 of them: enough requests
// to keep the queue full, and about 64 MiB per iteration for the small sizes.
constexpr std::uint64_t kPlanTarget = 64 * kMiB;
constexpr std::uint64_t kMaxExtents = 256;

enum class Op { write, read };

struct IoCase {
  std::string backend;
  Op op = Op::write;
  std::uint64_t size = 0;  // bytes per extent (one request)
  bool direct = false;
  bool unaligned = false;  // memory starts 1 byte past a page boundary (buffered only)
  int queue_depth = 1;
  std::uint64_t extents = 0;
  bool stores_data = true;  // false (null): sub-microsecond rounds, reported in microseconds

  std::uint64_t bytes() const { return size * extents; }
};

// Settings every benchmark shares, read once from the environment.
struct Options {
  SyncPolicy sync = SyncPolicy::fsync;
  std::string sync_name = "fsync";
  std::uint64_t max_plan_bytes = 256 * kMiB;
};

Options read_options() {
  Options o;
  if (const char* s = std::getenv("CKPT_BENCH_SYNC"); s != nullptr && *s != '\0') {
    const std::string v = s;
    if (v == "none")
      o.sync = SyncPolicy::none;
    else if (v == "fsync")
      o.sync = SyncPolicy::fsync;
    else if (v == "fdatasync")
      o.sync = SyncPolicy::fdatasync;
    else
      throw std::invalid_argument("CKPT_BENCH_SYNC=" + v + ": expected none, fsync or fdatasync");
    o.sync_name = v;
  }
  if (const char* s = std::getenv("CKPT_BENCH_MAX_MIB"); s != nullptr && *s != '\0') {
    char* end = nullptr;
    const unsigned long long mib = std::strtoull(s, &end, 10);
    if (*end != '\0' || mib == 0)
      throw std::invalid_argument(std::string("CKPT_BENCH_MAX_MIB=") + s +
                                  ": expected a positive integer");
    o.max_plan_bytes = mib * kMiB;
  }
  return o;
}

std::string size_label(std::uint64_t bytes) {
  return bytes >= kMiB ? std::to_string(bytes / kMiB) + "MiB"
                       : std::to_string(bytes / kKiB) + "KiB";
}

std::string case_name(const IoCase& c) {
  return "io/" + c.backend + (c.op == Op::write ? "/write/" : "/read/") + size_label(c.size) +
         (c.direct ? "/direct" : "/buffered") + (c.unaligned ? "/unaligned" : "/aligned") +
         "/qd:" + std::to_string(c.queue_depth);
}

// Page-aligned memory, allocated once and touched with non-zero bytes before any benchmark
// runs, so no first-touch page fault lands inside a timed transfer.
class TouchedBuffer {
 public:
  explicit TouchedBuffer(std::uint64_t bytes) : size_((bytes + kPage - 1) / kPage * kPage) {
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, size_)));
    if (!data_) throw std::bad_alloc();
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (std::uint64_t i = 0; i + 8 <= size_; i += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(data_.get() + i, &x, 8);
    }
  }
  MemoryView view(std::uint64_t offset, std::uint64_t bytes) const {
    return {data_.get() + offset, bytes, MemoryKind::host};
  }
  std::uint64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::uint64_t size_ = 0;
};

// Everything the benchmarks share; lives in main() for the whole run.
struct Fixture {
  Options options;
  ckpt::bench::ScratchDir dir;
  TouchedBuffer buffer;
};

IoPlan make_plan(const fs::path& path, const IoCase& c) {
  FilePlan file;
  file.path = path.string();
  file.file_size = c.bytes();
  for (std::uint64_t i = 0; i < c.extents; ++i)
    file.extents.push_back({i * c.size, i * c.size, c.size});
  IoPlan plan;
  plan.files.push_back(std::move(file));
  return plan;
}

[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

// The file read benchmarks read: `bytes` of the shared buffer, written and fsynced with plain
// pwrite once per size; every case with the same plan size reads the same file.
fs::path read_file(const Fixture& f, std::uint64_t bytes) {
  const fs::path path = f.dir.path() / ("read-" + std::to_string(bytes) + ".dat");
  std::error_code error;
  if (fs::file_size(path, error) == bytes && !error) return path;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open", path);
  const MemoryView source = f.buffer.view(0, bytes);
  for (std::uint64_t done = 0; done < bytes;) {
    const ssize_t n =
        ::pwrite(fd, source.data + done, std::min<std::uint64_t>(bytes - done, 64 * kMiB),
                 static_cast<off_t>(done));
    if (n <= 0) {
      ::close(fd);
      fail("pwrite", path);
    }
    done += static_cast<std::uint64_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) fail("fsync", path);
  return path;
}

// Evicts the file's pages so that a buffered read comes from the device (cold restore).
void evict(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fdatasync(fd);  // dirty pages are not dropped
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// One benchmark: a fresh backend, then one untimed round (the first open of a ring, buffer
// registration, file creation paths) and the timed rounds. The time of a round is the
// backend's own open + transfer + sync + close; removing the previous file (writes) or
// evicting the read file from the page cache happens between rounds, untimed.
void run_case(benchmark::State& state, const IoCase& c, const Fixture& f) {
  IoSettings settings;
  settings.direct = c.direct;
  settings.sync = c.op == Op::write ? f.options.sync : SyncPolicy::none;
  settings.queue_depth = c.queue_depth;
  std::unique_ptr<Backend> backend;
  try {
    backend = make_backend(c.backend, settings);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const bool stores = backend->capabilities().stores_data;
  const fs::path path = c.op == Op::write
                            ? f.dir.path() / (std::to_string(state.thread_index()) + "-write.dat")
                            : read_file(f, c.bytes());
  const IoPlan plan = make_plan(path, c);
  const MemoryView memory = f.buffer.view(c.unaligned ? 1 : 0, c.bytes());
  auto round = [&]() {
    std::error_code
        ignored;  // absent after the first round's cleanup or for a backend that stores nothing
    if (stores && c.op == Op::write) fs::remove(path, ignored);
    if (stores && c.op == Op::read && !c.direct) evict(path);
    return c.op == Op::write ? backend->write(plan, memory) : backend->read(plan, memory);
  };
  if (const IoOutcome warm = round(); !warm.ok()) {
    state.SkipWithError(warm.error->c_str());
    return;
  }
  for (auto _ : state) {
    const IoOutcome outcome = round();
    if (!outcome.ok()) {
      state.SkipWithError(outcome.error->c_str());
      break;
    }
    state.SetIterationTime(outcome.phases.total());
  }
  std::error_code ignored;
  if (c.op == Op::write) fs::remove(path, ignored);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(c.bytes()));
  state.counters["extents"] = static_cast<double>(c.extents);
}

// Every case of one backend: sizes × (buffered aligned, buffered unaligned, direct) × queue
// depths the backend takes, write and read. Cases whose plan exceeds the byte cap are left
// out and counted.
std::vector<IoCase> cases_of(const std::string& name, const Options& options, int& left_out) {
  std::unique_ptr<Backend> probe = make_backend(name, IoSettings{});
  const Capabilities caps = probe->capabilities();
  std::vector<IoCase> cases;
  for (const Op op : {Op::write, Op::read}) {
    for (const std::uint64_t size : kSizes) {
      for (const auto& [direct, unaligned] :
           {std::pair{false, false}, {false, true}, {true, false}}) {
        if (direct && !caps.direct_io) continue;
        for (const int qd : kQueueDepths) {
          if (qd > caps.max_queue_depth) continue;
          const std::uint64_t base = std::clamp<std::uint64_t>(kPlanTarget / size, 1, kMaxExtents);
          IoCase c{name,
                   op,
                   size,
                   direct,
                   unaligned,
                   qd,
                   std::max<std::uint64_t>(base, static_cast<std::uint64_t>(qd)),
                   caps.stores_data};
          if (c.bytes() > options.max_plan_bytes) {
            ++left_out;
            continue;
          }
          cases.push_back(std::move(c));
        }
      }
    }
  }
  return cases;
}

int register_all(const Fixture& f) {
  int registered = 0;
  int left_out = 0;
  for (const BackendInfo& info : list_backends()) {
    if (!info.available) continue;
    for (const IoCase& c : cases_of(info.name, f.options, left_out)) {
      benchmark::RegisterBenchmark(case_name(c).c_str(),
                                   [c, &f](benchmark::State& s) { run_case(s, c, f); })
          ->UseManualTime()
          ->Unit(c.stores_data ? benchmark::kMillisecond : benchmark::kMicrosecond);
      ++registered;
    }
  }
  benchmark::AddCustomContext("io_cases_left_out",
                              std::to_string(left_out) + " over CKPT_BENCH_MAX_MIB=" +
                                  std::to_string(f.options.max_plan_bytes / kMiB));
  return registered;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    const Options options = read_options();
    // One extra page: unaligned cases start one byte in.
    const Fixture fixture{options, ckpt::bench::ScratchDir(),
                          TouchedBuffer(options.max_plan_bytes + kPage)};
    benchmark::AddCustomContext("bench_dir", fixture.dir.path().string() + " (" +
                                                 fixture.dir.fs_type() + ", from " +
                                                 fixture.dir.origin() + ")");
    benchmark::AddCustomContext("write_sync", options.sync_name);
    benchmark::AddCustomContext("read_cache",
                                "buffered reads evicted (POSIX_FADV_DONTNEED) before each round");
    register_all(fixture);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::cerr << "ckpt_bench_backends: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
