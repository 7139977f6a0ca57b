// The uring backend's own cases; the conformance suite (BackendRoundTrip and the rest) covers the
// contract. These cover queue depths, many extents, out-of-order completions, requests cut at
// registered-buffer boundaries, SQPOLL, the registration fallback and the "io_uring disabled"
// message.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "backends/uring/ring.hpp"
#include "backends/uring/transfer_queue.hpp"
#include "backends/uring/uring_backend.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends::uring {
namespace {

using test_support::Buffer;
using test_support::contains;
using test_support::expect_files_hold;
using test_support::expect_ok;
using test_support::expect_read_back;
using test_support::expect_same_bytes;
using test_support::file_plan;
using test_support::kBlock;
using test_support::memory_end;
using test_support::TempDir;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Writes the plan from a patterned buffer, checks the files without the backend, reads back.
void round_trip(UringBackend& backend, const IoPlan& plan, std::uint64_t seed) {
  Buffer source(memory_end(plan));
  source.fill(seed);
  ASSERT_NO_FATAL_FAILURE(expect_ok(backend.write(plan, source.view()), plan));
  ASSERT_NO_FATAL_FAILURE(expect_files_hold(plan, source));
  expect_read_back(backend, plan, source);
}

// `count` extents of `length` bytes, one after another in one file; memory holds them in a
// shuffled order, so neighbouring requests are far apart in memory.
IoPlan one_file(const std::string& path, std::uint64_t count, std::uint64_t length) {
  std::vector<std::uint64_t> slots(count);
  std::iota(slots.begin(), slots.end(), std::uint64_t{0});
  std::shuffle(slots.begin(), slots.end(), std::mt19937_64(42));
  std::vector<Extent> extents;
  for (std::uint64_t i = 0; i < count; ++i)
    extents.push_back({i * length, slots[i] * length, length});
  return IoPlan{{file_plan(path, std::move(extents))}};
}

// Files of different sizes (1 to 64 blocks), so that requests finish out of order.
IoPlan many_files(const TempDir& dir, std::uint64_t count) {
  IoPlan plan;
  std::uint64_t memory = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t length = kBlock * (1 + (i * 37) % 64);
    plan.files.push_back(file_plan(dir.file("f" + std::to_string(i)), {{0, memory, length}}));
    memory += length;
  }
  return plan;
}

TEST(UringBackend, Capabilities) {
  const Capabilities caps = UringBackend({}).capabilities();
  EXPECT_TRUE(caps.direct_io);
  EXPECT_TRUE(caps.shared_file);
  EXPECT_FALSE(caps.device_memory);
  EXPECT_TRUE(caps.stores_data);
  EXPECT_EQ(caps.max_queue_depth, UringBackend::kMaxQueueDepth);
  EXPECT_GE(caps.max_queue_depth, 1024);
}

TEST(UringBackend, QueueDepthLargerThanTheExtents) {
  const TempDir dir;
  UringBackend backend(IoSettings{.queue_depth = 256});
  round_trip(backend, one_file(dir.file("few.bin"), 5, 3 * kBlock + 17), 1);
  EXPECT_TRUE(backend.buffers_registered());
  EXPECT_TRUE(backend.notes().empty()) << backend.notes().front();
}

TEST(UringBackend, QueueDepthOne) {
  const TempDir dir;
  UringBackend backend(IoSettings{.direct = true, .queue_depth = 1});
  round_trip(backend, one_file(dir.file("qd1.bin"), 64, 2 * kBlock), 2);
  round_trip(backend, many_files(dir, 20), 3);
}

TEST(UringBackend, TenThousandExtentsInOneFileAtDepth64) {
  const TempDir dir;
  for (const bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "O_DIRECT" : "buffered");
    UringBackend backend(IoSettings{.direct = direct, .queue_depth = 64});
    const IoPlan plan = one_file(dir.file(direct ? "direct.bin" : "buffered.bin"), 10000, kBlock);
    round_trip(backend, plan, direct ? 4 : 5);
    EXPECT_EQ(std::filesystem::file_size(plan.files[0].path), 10000 * kBlock);
  }
}

TEST(UringBackend, OutOfOrderDirectCompletionsAcrossManyFiles) {
  const TempDir dir;
  const IoPlan plan = many_files(dir, 300);
  for (const int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    UringBackend backend(IoSettings{.direct = true,
                                    .sync = SyncPolicy::fdatasync,
                                    .fallocate = true,
                                    .threads = threads,
                                    .queue_depth = 32});
    round_trip(backend, plan, static_cast<std::uint64_t>(6 + threads));
    EXPECT_TRUE(backend.buffers_registered());
  }
}

TEST(UringBackend, SqpollRingRoundTrip) {
  const TempDir dir;
  for (const bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "O_DIRECT" : "buffered");
    UringBackend backend(IoSettings{.direct = direct, .sync = SyncPolicy::fsync, .queue_depth = 16},
                         UringOptions{.sqpoll = true});
    round_trip(backend, one_file(dir.file(direct ? "sq_direct.bin" : "sq.bin"), 500, kBlock), 9);
    round_trip(backend, many_files(dir, 40), 10);
  }
  EXPECT_TRUE(Ring(4, true).sqpoll());
}

TEST(UringBackend, SkippedRegistrationFallsBackAndSaysSo) {
  const TempDir dir;
  UringBackend backend(IoSettings{.direct = true, .queue_depth = 8},
                       UringOptions{.register_buffers = false, .register_files = false});
  round_trip(backend, many_files(dir, 30), 11);
  EXPECT_FALSE(backend.buffers_registered());
  ASSERT_EQ(backend.notes().size(), 1u);
  EXPECT_TRUE(contains(backend.notes()[0], "register_buffers = false")) << backend.notes()[0];
}

TEST(UringBackend, ZeroBytePlanRegistersNothing) {
  const TempDir dir;
  UringBackend backend(IoSettings{.queue_depth = 4});
  const Buffer memory(16);
  const IoPlan plan{{file_plan(dir.file("empty.bin"), {})}};
  ASSERT_NO_FATAL_FAILURE(expect_ok(backend.write(plan, memory.view()), plan));
  EXPECT_FALSE(backend.buffers_registered());
  EXPECT_EQ(std::filesystem::file_size(plan.files[0].path), 0u);
}

// Drops CAP_IPC_LOCK from this process's effective set: without it io_uring charges registered
// buffers against RLIMIT_MEMLOCK. Returns false when the kernel refuses.
bool drop_ipc_lock() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
  return ::syscall(SYS_capset, &header, data) == 0;
}

// Child process exit codes of the memlock case.
enum MemlockResult : int {
  kFellBack = 0,
  kRegisteredAnyway = 10,  // the limit did not bite: cannot be forced here
  kCannotLimit = 11,       // setrlimit or capset refused
  kWrongOutcome = 12,      // I/O failed, data wrong or no note
};

int memlock_child(const std::string& directory) {
  const rlimit tiny{64 * 1024, 64 * 1024};
  if (!drop_ipc_lock() || ::setrlimit(RLIMIT_MEMLOCK, &tiny) != 0) return kCannotLimit;
  UringBackend backend(IoSettings{.direct = true, .queue_depth = 8});
  const IoPlan plan{{file_plan(directory + "/memlock.bin", {{0, 0, 16 * kMiB}})}};
  Buffer source(16 * kMiB);
  source.fill(12);
  if (!backend.write(plan, source.view()).ok()) return kWrongOutcome;
  if (backend.buffers_registered()) return kRegisteredAnyway;
  const std::vector<std::string> notes = backend.notes();
  if (notes.empty() || !contains(notes[0], "RLIMIT_MEMLOCK")) return kWrongOutcome;
  Buffer back(16 * kMiB);
  if (!backend.read(plan, back.view()).ok()) return kWrongOutcome;
  return std::memcmp(back.data(), source.data(), 16 * kMiB) == 0 ? kFellBack : kWrongOutcome;
}

TEST(UringBackend, MemlockLimitFallsBackToPlainBuffers) {
  const TempDir dir;
  const std::string directory = dir.file("");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    int code = kWrongOutcome;
    try {
      code = memlock_child(directory);
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died, status " << status;
  switch (WEXITSTATUS(status)) {
    case kFellBack:
      return;
    case kRegisteredAnyway:
      GTEST_SKIP() << "16 MiB registered despite RLIMIT_MEMLOCK = 64 KiB without CAP_IPC_LOCK: "
                      "this kernel does not charge registered buffers to the limit";
    case kCannotLimit:
      GTEST_SKIP() << "could not drop CAP_IPC_LOCK or lower RLIMIT_MEMLOCK in a child process";
    default:
      FAIL() << "the fallback to plain buffers failed (child exit " << WEXITSTATUS(status) << ")";
  }
}

// Maps `size` bytes that straddle a 1-GiB-aligned address, or returns nullptr.
std::byte* map_across_gib_boundary(std::uint64_t size) {
  for (std::uint64_t gib = 64; gib < 128; ++gib) {
    void* want = reinterpret_cast<void*>((gib << 30) - size / 2);
    void* got = ::mmap(want, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == want) return static_cast<std::byte*>(got);
    if (got != MAP_FAILED) ::munmap(got, size);
  }
  return nullptr;
}

TEST(UringBackend, RequestsAreCutAtRegisteredBufferBoundaries) {
  constexpr std::uint64_t kSize = 8 * kMiB;
  std::byte* memory = map_across_gib_boundary(kSize);
  if (memory == nullptr) GTEST_SKIP() << "no free address range across a 1 GiB boundary";
  Buffer source(kSize);
  source.fill(13);
  std::memcpy(memory, source.data(), kSize);
  const TempDir dir;
  const IoPlan plan{{file_plan(dir.file("straddle.bin"), {{0, 0, kSize}})}};
  for (const bool direct : {false, true}) {
    UringBackend backend(IoSettings{.direct = direct, .queue_depth = 4});
    const IoOutcome wrote = backend.write(plan, MemoryView{memory, kSize, MemoryKind::host});
    ASSERT_TRUE(wrote.ok()) << *wrote.error;
    EXPECT_TRUE(backend.buffers_registered());
    ASSERT_NO_FATAL_FAILURE(expect_files_hold(plan, source));
    std::memset(memory, 0, kSize);
    const IoOutcome read = backend.read(plan, MemoryView{memory, kSize, MemoryKind::host});
    ASSERT_TRUE(read.ok()) << *read.error;
    expect_same_bytes(memory, source.data(), kSize, direct ? "O_DIRECT read back" : "read back");
  }
  ::munmap(memory, kSize);
}

TEST(UringBackend, WriteErrorNamesPathOffsetLengthAndErrno) {
  // /dev/full accepts open for writing and fails every write with ENOSPC.
  const Buffer memory(8 * kBlock);
  std::vector<Extent> extents;
  for (std::uint64_t i = 0; i < 8; ++i) extents.push_back({i * kBlock, i * kBlock, kBlock});
  const IoPlan plan{{FilePlan{"/dev/full", extents, 0, true}}};
  UringBackend backend(IoSettings{.queue_depth = 4});
  const IoOutcome outcome = backend.write(plan, memory.view());
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(*outcome.error, "uring: write /dev/full at offset ")) << *outcome.error;
  EXPECT_TRUE(contains(*outcome.error, "length 4096")) << *outcome.error;
  EXPECT_TRUE(contains(*outcome.error, std::strerror(ENOSPC))) << *outcome.error;
  EXPECT_EQ(outcome.bytes, 0u);
}

TEST(UringBackend, ShortFileSaysSoAtEveryDepth) {
  const TempDir dir;
  const std::string path = dir.file("short.bin");
  std::ofstream(path, std::ios::binary) << std::string(10 * kBlock + 100, 'x');
  const Buffer memory(16 * kBlock);
  const IoPlan plan = one_file(path, 16, kBlock);
  for (const bool direct : {false, true}) {
    for (const int depth : {1, 8, 64}) {
      UringBackend backend(IoSettings{.direct = direct, .queue_depth = depth});
      const IoOutcome outcome = backend.read(plan, memory.view());
      ASSERT_FALSE(outcome.ok()) << "depth " << depth;
      EXPECT_TRUE(contains(*outcome.error, "file shorter than the plan")) << *outcome.error;
      EXPECT_TRUE(contains(*outcome.error, path)) << *outcome.error;
    }
  }
}

TEST(UringBackend, MissingFileOnReadNamesThePath) {
  const TempDir dir;
  const IoPlan plan = many_files(dir, 3);  // never written
  const Buffer memory(memory_end(plan));
  const IoOutcome outcome = UringBackend(IoSettings{.queue_depth = 2}).read(plan, memory.view());
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(*outcome.error, "uring: open for reading " + dir.file("f")))
      << *outcome.error;
  EXPECT_TRUE(contains(*outcome.error, std::strerror(ENOENT))) << *outcome.error;
}

TEST(UringBackend, DisabledIoUringExplainsHowToEnableIt) {
  const std::string disabled = setup_error_message(EPERM, 2, 64, false);
  EXPECT_TRUE(contains(disabled, "io_uring is disabled")) << disabled;
  EXPECT_TRUE(contains(disabled, "kernel.io_uring_disabled = 2")) << disabled;
  EXPECT_TRUE(contains(disabled, "sysctl -w kernel.io_uring_disabled=0")) << disabled;
  EXPECT_TRUE(contains(disabled, "backend \"posix\"")) << disabled;

  const std::string group = setup_error_message(EPERM, 1, 64, false);
  EXPECT_TRUE(contains(group, "kernel.io_uring_group")) << group;
  EXPECT_TRUE(contains(group, "sysctl -w kernel.io_uring_disabled=0")) << group;

  const std::string blocked = setup_error_message(EPERM, std::nullopt, 64, true);
  EXPECT_TRUE(contains(blocked, "SQPOLL")) << blocked;
  EXPECT_TRUE(contains(blocked, "seccomp")) << blocked;
  EXPECT_TRUE(contains(blocked, "backend \"posix\"")) << blocked;

  const std::string absent = setup_error_message(ENOSYS, std::nullopt, 64, false);
  EXPECT_TRUE(contains(absent, "no io_uring")) << absent;
  EXPECT_TRUE(contains(absent, "backend \"posix\"")) << absent;

  const std::string other = setup_error_message(ENOMEM, 0, 64, false);
  EXPECT_TRUE(contains(other, "io_uring_setup (64 entries)")) << other;
  EXPECT_TRUE(contains(other, std::strerror(ENOMEM))) << other;

  // The sysctl as this machine has it: when io_uring is disabled, construction says so.
  const std::optional<int> sysctl = read_io_uring_disabled();
  if (sysctl == 2) {
    try {
      UringBackend backend({});
      ADD_FAILURE() << "constructed with kernel.io_uring_disabled = 2";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "io_uring is disabled")) << e.what();
    }
  } else {
    std::cout << "[   NOTE   ] kernel.io_uring_disabled = "
              << (sysctl ? std::to_string(*sysctl) : std::string("(absent)"))
              << ": io_uring is usable here, so only the message is tested, not the refusal\n";
  }
}

TEST(UringBackend, QueueDepthBeyondTheMaximumNamesTheSetting) {
  try {
    make_backend("uring", IoSettings{.queue_depth = UringBackend::kMaxQueueDepth + 1});
    ADD_FAILURE() << "accepted queue_depth beyond the maximum";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "uring: `backend.queue_depth` must be from 1 to 4096 (got 4097)");
  }
  EXPECT_NO_THROW(make_backend("uring", IoSettings{.queue_depth = UringBackend::kMaxQueueDepth}));
}

}  // namespace
}  // namespace ckpt::backends::uring
