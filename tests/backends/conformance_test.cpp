// The conformance suite: every backend the registry lists as available runs it, so a new
// backend is tested by being compiled in. Backends that move no data (null) run the checks on
// the outcome and that nothing was written; the content checks are skipped for them, saying why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "backends/registry.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

namespace fs = std::filesystem;
using test_support::Buffer;
using test_support::contains;
using test_support::expect_files_hold;
using test_support::expect_ok;
using test_support::expect_read_back;
using test_support::extents_end;
using test_support::file_plan;
using test_support::kBlock;
using test_support::kGiB;
using test_support::memory_end;
using test_support::round_up;
using test_support::TempDir;

// What the backend declares (with its options' defaults), as the registry lists it.
Capabilities declared(const std::string& backend) {
  for (const BackendInfo& info : list_backends()) {
    if (info.name == backend) return info.capabilities;
  }
  throw std::logic_error("no backend " + backend);
}

bool moves_data(const std::string& backend) {
  return declared(backend).stores_data;
}

// Whether the backend stores each extent's bytes at its file offset (raw files), so that the
// files can be checked without it. A self-describing format (hdf5's datasets) is checked by
// reading the files back (and by the backend's own tests, with h5dump and h5py).
bool raw_layout(const std::string& backend) {
  return declared(backend).raw_layout;
}

void note_skipped(const std::string& backend, const char* what) {
  std::cout << "[   NOTE   ] " << backend << ": " << what
            << " skipped — it opens no file and moves no byte\n";
}

struct Mode {
  const char* name;
  bool direct;
  int threads;
  SyncPolicy sync;
  bool fallocate;
};

const Mode kModes[] = {
    {"buffered_t1", false, 1, SyncPolicy::none, false},
    {"buffered_t4_fsync", false, 4, SyncPolicy::fsync, false},
    {"buffered_t1_fdatasync_fallocate", false, 1, SyncPolicy::fdatasync, true},
    {"direct_t1_fdatasync", true, 1, SyncPolicy::fdatasync, false},
    {"direct_t4_fallocate", true, 4, SyncPolicy::none, true},
    {"direct_t4_fsync", true, 4, SyncPolicy::fsync, false},
};

// Names the mode in test output instead of its bytes.
void PrintTo(const Mode& mode, std::ostream* out) {
  *out << mode.name;
}

IoSettings settings_for(const Mode& mode) {
  IoSettings settings;
  settings.direct = mode.direct;
  settings.direct_alignment = kBlock;
  settings.sync = mode.sync;
  settings.fallocate = mode.fallocate;
  settings.threads = mode.threads;
  return settings;
}

// Object stores (s3) keep no files here and need a server: their own suites run against one.
std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const BackendInfo& info : list_backends()) {
    if (info.available && !info.capabilities.object_store) names.push_back(info.name);
  }
  return names;
}

class BackendRoundTrip : public testing::TestWithParam<std::tuple<std::string, Mode>> {
 protected:
  // Modes beyond the backend: O_DIRECT without direct_io (mpiio), more threads than it runs, a
  // fallocate it cannot do.
  void SetUp() override {
    const Capabilities caps = declared(backend());
    if (mode().direct && !caps.direct_io)
      GTEST_SKIP() << backend() << " has no direct I/O (capabilities: direct_io = false)";
    if (mode().threads > 1 && !caps.threads)
      GTEST_SKIP() << backend() << " runs no worker threads (capabilities: threads = false)";
    if (mode().fallocate && !caps.fallocate)
      GTEST_SKIP() << backend() << " cannot fallocate (capabilities: fallocate = false)";
  }
  const std::string& backend() const { return std::get<0>(GetParam()); }
  const Mode& mode() const { return std::get<1>(GetParam()); }
  std::unique_ptr<Backend> make() const { return make_backend(backend(), settings_for(mode())); }
  // Odd lengths for buffered I/O, whole blocks for O_DIRECT.
  std::uint64_t size(std::uint64_t n) const { return mode().direct ? round_up(n, kBlock) : n; }

  // Writes the plan from a patterned buffer, then (for backends that move data) checks the
  // files directly and reads them back.
  void round_trip(const IoPlan& plan, std::uint64_t seed) {
    Buffer source(memory_end(plan));
    source.fill(seed);
    const auto instance = make();
    ASSERT_NO_FATAL_FAILURE(expect_ok(instance->write(plan, source.view()), plan));
    if (!moves_data(backend())) {
      for (const FilePlan& f : plan.files) EXPECT_FALSE(fs::exists(f.path)) << f.path;
      note_skipped(backend(), "file and read-back checks");
      return;
    }
    if (raw_layout(backend())) {
      ASSERT_NO_FATAL_FAILURE(expect_files_hold(plan, source));
    }
    expect_read_back(*instance, plan, source);
  }

  TempDir dir_;
};

TEST_P(BackendRoundTrip, FilePerTensor) {
  IoPlan plan;
  std::uint64_t memory = 0;
  for (std::uint64_t i = 0; i < 48; ++i) {
    const std::uint64_t length = size(1 + (i * 7919) % 20000);
    plan.files.push_back(
        file_plan(dir_.file("tensor_" + std::to_string(i) + ".bin"), {{0, memory, length}}));
    memory += length;
  }
  round_trip(plan, 1);
}

TEST_P(BackendRoundTrip, OneFileManyExtentsWithGapsAndPermutedMemory) {
  constexpr std::uint64_t kCount = 300;
  std::vector<Extent> extents(kCount);
  std::uint64_t file_offset = 0;
  for (std::uint64_t i = 0; i < kCount; ++i) {
    extents[i].length = size(100 + (i * 131) % 3000);
    extents[i].file_offset = file_offset;
    file_offset += extents[i].length + (i % 3 == 0 ? size(7 + i) : 0);
  }
  std::uint64_t memory = 0;  // memory holds the extents in reverse order
  for (std::uint64_t i = kCount; i-- > 0;) {
    extents[i].memory_offset = memory;
    memory += extents[i].length;
  }
  round_trip(IoPlan{{file_plan(dir_.file("many_extents.bin"), extents)}}, 2);
}

TEST_P(BackendRoundTrip, OddSizes) {
  if (mode().direct)
    GTEST_SKIP() << "odd sizes cannot be O_DIRECT requests; the buffered modes run this";
  IoPlan plan{{file_plan(dir_.file("one.bin"), {{0, 0, 1}}),
               file_plan(dir_.file("three.bin"), {{0, 1, 3}}),
               file_plan(dir_.file("page_plus_one.bin"), {{0, 4, 4097}}),
               file_plan(dir_.file("odd_extents.bin"),
                         {{7, 4101, 1}, {4099, 4103, 3}, {9001, 4107, 4097}})}};
  round_trip(plan, 3);
}

TEST_P(BackendRoundTrip, ZeroLengthExtentsAndFilesWithoutExtents) {
  const std::uint64_t n = size(1000);
  IoPlan plan{{file_plan(dir_.file("empty.bin"), {}),
               file_plan(dir_.file("zero_lengths.bin"),
                         {{0, 0, 0}, {0, 0, n}, {2 * n, n, 0}, {2 * n, n, n}})}};
  round_trip(plan, 4);
  if (moves_data(backend())) {
    ASSERT_TRUE(fs::exists(plan.files[0].path)) << "a file without extents is created";
    if (raw_layout(backend())) {
      EXPECT_EQ(fs::file_size(plan.files[0].path), 0u);
    }
  }
}

TEST_P(BackendRoundTrip, SparseExtentBeyondFourGiB) {
  // file_size stays 0 (unknown) so that the fallocate modes do not reserve 5 GiB of disk.
  IoPlan plan{{FilePlan{dir_.file("sparse.bin"), {{5 * kGiB, 0, kBlock}}, 0, false}}};
  round_trip(plan, 5);
  if (!moves_data(backend())) return;
  struct stat info {};
  ASSERT_EQ(::stat(plan.files[0].path.c_str(), &info), 0);
  if (raw_layout(backend())) {
    EXPECT_EQ(static_cast<std::uint64_t>(info.st_size), 5 * kGiB + kBlock);
  }
  EXPECT_LT(static_cast<std::uint64_t>(info.st_blocks) * 512, kGiB) << "the hole must stay a hole";
}

TEST_P(BackendRoundTrip, SharedFileWrittenByTwoInstances) {
  const std::string path = dir_.file("shared.bin");
  IoPlan writers[2];
  std::uint64_t file_offset = 0;
  std::uint64_t memory[2] = {0, 0};
  for (std::uint64_t i = 0; i < 40; ++i) {  // extents alternate between the writers
    const std::uint64_t length = size(1000 + i * 37);
    if (writers[i % 2].files.empty()) writers[i % 2].files.push_back(FilePlan{path, {}, 0, true});
    writers[i % 2].files[0].extents.push_back({file_offset, memory[i % 2], length});
    memory[i % 2] += length;
    file_offset += length;
  }
  Buffer sources[2] = {Buffer(memory[0]), Buffer(memory[1])};
  Buffer whole(file_offset);  // what the file must hold: both writers' bytes in file order
  for (int w = 0; w < 2; ++w) {
    writers[w].files[0].file_size = file_offset;
    sources[w].fill(static_cast<std::uint64_t>(10 + w));
    ASSERT_NO_FATAL_FAILURE(expect_ok(make()->write(writers[w], sources[w].view()), writers[w]));
    for (const Extent& e : writers[w].files[0].extents) {
      std::memcpy(whole.data() + e.file_offset, sources[w].data() + e.memory_offset, e.length);
    }
  }
  if (!moves_data(backend())) {
    EXPECT_FALSE(fs::exists(path));
    return note_skipped(backend(), "file and read-back checks");
  }
  const IoPlan reader{{file_plan(path, {{0, 0, file_offset}})}};
  if (raw_layout(backend())) {
    EXPECT_EQ(fs::file_size(path), file_offset);
    ASSERT_NO_FATAL_FAILURE(expect_files_hold(reader, whole));
  }
  expect_read_back(*make(), reader, whole);
}

INSTANTIATE_TEST_SUITE_P(Available, BackendRoundTrip,
                         testing::Combine(testing::ValuesIn(available_backends()),
                                          testing::ValuesIn(kModes)),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" + std::get<1>(p.param).name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendRoundTrip);

class BackendContract : public testing::TestWithParam<std::string> {
 protected:
  const std::string& backend() const { return GetParam(); }
  std::unique_ptr<Backend> make(IoSettings settings = {}) const {
    return make_backend(backend(), settings);
  }
  TempDir dir_;
};

TEST_P(BackendContract, ExtentBeyondMemoryThrowsBeforeAnyFileIsTouched) {
  const Buffer memory(kBlock);
  const IoPlan plan{{file_plan(dir_.file("beyond.bin"), {{0, kBlock / 2, kBlock}})}};
  EXPECT_THROW(make()->write(plan, memory.view()), std::invalid_argument);
  EXPECT_THROW(make()->read(plan, memory.view()), std::invalid_argument);
  EXPECT_FALSE(fs::exists(plan.files[0].path));
}

TEST_P(BackendContract, SettingsBeyondCapabilitiesAreRejectedByName) {
  const Capabilities caps = make()->capabilities();
  const auto expect_rejected = [&](IoSettings settings, const std::string& key) {
    try {
      make(settings);
      ADD_FAILURE() << "accepted a bad `" << key << "`";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "`backend." + key + "`")) << e.what();
    }
  };
  expect_rejected(IoSettings{.threads = 0}, "threads");
  expect_rejected(IoSettings{.queue_depth = 0}, "queue_depth");
  if (caps.max_queue_depth < INT_MAX)
    expect_rejected(IoSettings{.queue_depth = caps.max_queue_depth + 1}, "queue_depth");
  if (!caps.direct_io) expect_rejected(IoSettings{.direct = true}, "direct");
  if (!caps.threads) expect_rejected(IoSettings{.threads = 2}, "threads");
  if (!caps.fallocate) expect_rejected(IoSettings{.fallocate = true}, "fallocate");
  if (!caps.sqpoll) expect_rejected(IoSettings{.sqpoll = true}, "sqpoll");
  // The instance says what the registry checked.
  const Capabilities listed = declared(backend());
  EXPECT_EQ(caps.threads, listed.threads);
  EXPECT_EQ(caps.fallocate, listed.fallocate);
  EXPECT_EQ(caps.direct_io, listed.direct_io);
  EXPECT_EQ(caps.collective, listed.collective);
}

TEST_P(BackendContract, DeviceMemoryNeedsTheCapability) {
  const auto instance = make();
  if (instance->capabilities().device_memory) GTEST_SKIP() << backend() << " accepts device memory";
  const Buffer memory(kBlock);
  const IoPlan plan{{file_plan(dir_.file("device.bin"), {{0, 0, kBlock}})}};
  try {
    instance->write(plan, memory.view(MemoryKind::device));
    ADD_FAILURE() << "device memory accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "device memory")) << e.what();
  }
}

TEST_P(BackendContract, WriteIntoMissingDirectoryNamesThePath) {
  const Buffer memory(16);
  const IoPlan plan{{file_plan(dir_.file("no/such/dir/f.bin"), {{0, 0, 16}})}};
  const IoOutcome outcome = make()->write(plan, memory.view());
  if (!moves_data(backend())) return note_skipped(backend(), "missing-directory check");
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(*outcome.error, plan.files[0].path)) << *outcome.error;
  EXPECT_EQ(outcome.bytes, 0u);
}

// Reads `plan_bytes` from a file holding `file_bytes`; expects an error naming the path.
void expect_short_read(Backend& backend, const std::string& path, std::uint64_t file_bytes,
                       std::uint64_t plan_bytes) {
  std::ofstream(path, std::ios::binary) << std::string(file_bytes, 'x');
  const Buffer memory(plan_bytes);
  const IoOutcome outcome =
      backend.read(IoPlan{{file_plan(path, {{0, 0, plan_bytes}})}}, memory.view());
  ASSERT_FALSE(outcome.ok()) << backend.name() << ": read " << plan_bytes << " of " << file_bytes;
  EXPECT_TRUE(contains(*outcome.error, path)) << *outcome.error;
  if (backend.name() == "posix") {
    EXPECT_TRUE(contains(*outcome.error, "file shorter than the plan")) << *outcome.error;
  }
}

TEST_P(BackendContract, ReadingAFileShorterThanThePlanIsAnError) {
  if (!moves_data(backend())) return note_skipped(backend(), "short-file check");
  expect_short_read(*make(), dir_.file("short.bin"), 1000, 4096);
  expect_short_read(*make(), dir_.file("empty.bin"), 0, 10);
  if (!make()->capabilities().direct_io) return;
  const auto direct = make(IoSettings{.direct = true});
  expect_short_read(*direct, dir_.file("short_unaligned.bin"), 5000, 2 * kBlock);
  expect_short_read(*direct, dir_.file("short_aligned.bin"), kBlock, 2 * kBlock);
}

TEST_P(BackendContract, FailureInOneWorkerFailsTheTransfer) {
  if (!moves_data(backend())) return note_skipped(backend(), "short-file check");
  if (!declared(backend()).threads)
    GTEST_SKIP() << backend() << " runs no worker threads (capabilities: threads = false)";
  IoPlan plan;
  for (std::uint64_t i = 0; i < 8; ++i) {
    plan.files.push_back(
        file_plan(dir_.file("part_" + std::to_string(i) + ".bin"), {{0, i * 65536, 65536}}));
    std::ofstream(plan.files.back().path, std::ios::binary)
        << std::string(i == 5 ? 1000 : 65536, 'x');
  }
  const Buffer memory(8 * 65536);
  const IoOutcome outcome = make(IoSettings{.threads = 4})->read(plan, memory.view());
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(*outcome.error, plan.files[5].path)) << *outcome.error;
}

TEST_P(BackendContract, MisalignedDirectRequestsAreRejected) {
  if (!moves_data(backend())) return note_skipped(backend(), "O_DIRECT alignment check");
  if (!make()->capabilities().direct_io) GTEST_SKIP() << backend() << " has no direct I/O";
  const auto direct = make(IoSettings{.direct = true, .direct_alignment = kBlock});
  const Buffer memory(4 * kBlock);
  const auto expect_alignment_error = [&](const std::string& name, Extent extent) {
    const IoPlan plan{{file_plan(dir_.file(name), {extent})}};
    try {
      direct->write(plan, memory.view());
      ADD_FAILURE() << name << ": misaligned O_DIRECT request accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "direct_alignment")) << e.what();
      EXPECT_TRUE(contains(e.what(), plan.files[0].path)) << e.what();
    }
  };
  expect_alignment_error("file_offset.bin", {100, 0, kBlock});
  expect_alignment_error("length.bin", {0, 0, 100});
  expect_alignment_error("memory.bin", {0, 512, kBlock});
  EXPECT_FALSE(fs::exists(dir_.file("file_offset.bin"))) << "checked before the file is created";
}

// FilePlan::data_end: an O_DIRECT read whose last block runs past the end of the file (a loader
// reading a 10000-byte file in whole blocks) comes back short there and is whole; a file ending
// before data_end, or a plan without it, is still "shorter than the plan".
TEST_P(BackendContract, DirectReadPastTheEndIsWholeAtDataEnd) {
  if (!moves_data(backend())) return note_skipped(backend(), "data_end check");
  if (!declared(backend()).direct_io) GTEST_SKIP() << backend() << " has no direct I/O";
  const std::string path = dir_.file("tail.bin");
  Buffer bytes(10000);
  bytes.fill(7);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 10000);
  const auto direct = make(IoSettings{.direct = true, .direct_alignment = kBlock});
  const auto read = [&](std::uint64_t data_end, const Buffer& memory) {
    FilePlan file = file_plan(path, {{0, 0, kBlock}, {2 * kBlock, kBlock, kBlock}});
    file.data_end = data_end;
    return direct->read(IoPlan{{file}}, memory.view());
  };
  const Buffer memory(2 * kBlock);
  const IoOutcome whole = read(10000, memory);
  ASSERT_TRUE(whole.ok()) << *whole.error;
  EXPECT_EQ(std::memcmp(memory.data(), bytes.data(), kBlock), 0);
  EXPECT_EQ(std::memcmp(memory.data() + kBlock, bytes.data() + 2 * kBlock, 10000 - 2 * kBlock), 0);
  for (const std::uint64_t beyond : {std::uint64_t{10001}, std::uint64_t{0}}) {
    const IoOutcome shorter = read(beyond, Buffer(2 * kBlock));
    ASSERT_FALSE(shorter.ok()) << "data_end " << beyond;
    EXPECT_TRUE(contains(*shorter.error, path)) << *shorter.error;
  }
}

// Backend::map maps a whole file exactly when the backend declares Capabilities::mmap.
TEST_P(BackendContract, MapServesWholeFilesExactlyWhenDeclared) {
  const std::string path = dir_.file("mapped.bin");
  std::ofstream(path, std::ios::binary) << "0123456789";
  const auto instance = make();
  if (!declared(backend()).mmap) {
    try {
      instance->map(path);
      ADD_FAILURE() << backend() << " mapped a file without declaring mmap";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                backend() + ": cannot map files (capabilities: mmap = false)");
    }
    return;
  }
  const auto mapped = instance->map(path);
  EXPECT_EQ(
      std::string(reinterpret_cast<const char*>(mapped->bytes().data()), mapped->bytes().size()),
      "0123456789");
  std::ofstream(dir_.file("empty.bin"), std::ios::binary).flush();
  EXPECT_EQ(instance->map(dir_.file("empty.bin"))->bytes().size(), 0u);
  try {
    instance->map(dir_.file("gone.bin"));
    ADD_FAILURE() << "mapped a missing file";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), dir_.file("gone.bin"))) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Available, BackendContract, testing::ValuesIn(available_backends()),
                         [](const auto& p) { return p.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendContract);

bool posix_available() {
  const auto names = available_backends();
  return std::find(names.begin(), names.end(), "posix") != names.end();
}

TEST(PosixBackend, Capabilities) {
  if (!posix_available()) GTEST_SKIP() << "posix is not compiled in";
  const Capabilities caps = make_backend("posix", {})->capabilities();
  EXPECT_TRUE(caps.direct_io);
  EXPECT_TRUE(caps.shared_file);
  EXPECT_FALSE(caps.device_memory);
  EXPECT_EQ(caps.max_queue_depth, 1);
}

TEST(PosixBackend, FallocateReservesTheWholeFileOnlyWhenAsked) {
  if (!posix_available()) GTEST_SKIP() << "posix is not compiled in";
  const TempDir dir;
  const Buffer memory(kBlock);
  for (const bool reserve : {false, true}) {
    const std::string path = dir.file(reserve ? "reserved.bin" : "plain.bin");
    const IoPlan plan{{FilePlan{path, {{0, 0, kBlock}}, 256 * kBlock, false}}};
    ASSERT_TRUE(
        make_backend("posix", IoSettings{.fallocate = reserve})->write(plan, memory.view()).ok());
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(info.st_size), reserve ? 256 * kBlock : kBlock) << path;
    if (reserve) {
      EXPECT_GE(static_cast<std::uint64_t>(info.st_blocks) * 512, 256 * kBlock);
    }
  }
}

TEST(PosixBackend, FileSystemRefusingDirectIoSaysToTurnItOff) {
  if (!posix_available()) GTEST_SKIP() << "posix is not compiled in";
  const std::string probe = "/dev/shm/ckpt-backend-direct-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0644);
  const bool refused = fd < 0 && errno == EINVAL;
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  if (!refused) GTEST_SKIP() << "/dev/shm accepts O_DIRECT here (tmpfs does since Linux 6.6)";
  const Buffer memory(kBlock);
  const IoOutcome outcome =
      make_backend("posix", IoSettings{.direct = true})
          ->write(IoPlan{{file_plan(probe, {{0, 0, kBlock}})}}, memory.view());
  ::unlink(probe.c_str());
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(*outcome.error, "refuses O_DIRECT")) << *outcome.error;
  EXPECT_TRUE(contains(*outcome.error, "`direct = false`")) << *outcome.error;
}

}  // namespace
}  // namespace ckpt::backends
