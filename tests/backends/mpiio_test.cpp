// The mpiio backend and the MPI support library across 4 processes: ctest runs this program under
// mpirun -np 4 (the MPI tests' own main() makes a failure on any rank fail the run), and its
// MpiioUneven tests under -np 2 and -np 3 too. Every test is collective: each rank makes the same
// backend calls, and checks never skip a collective call.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/mpi_common/file_comms.hpp"
#include "backends/mpi_common/group_comm.hpp"
#include "backends/mpi_common/info_hints.hpp"
#include "backends/mpi_common/mpi_error.hpp"
#include "backends/mpiio/mpiio_backend.hpp"
#include "backends/mpiio/transfer.hpp"
#include "backends/registry.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

namespace fs = std::filesystem;
using test_support::Buffer;
using test_support::contains;
using test_support::expect_same_bytes;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

ProcessGroup world() {
  return ProcessGroup{world_rank(), world_size(), MPI_Comm_c2f(MPI_COMM_WORLD)};
}

// A directory all ranks share: rank 0 makes it and removes it after the last rank is done.
class SharedDir {
 public:
  SharedDir() {
    std::string path(256, '\0');
    if (world_rank() == 0) {
      std::string pattern = "/tmp/ckpt-mpiio-test-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      path.replace(0, pattern.size(), pattern);
    }
    MPI_Bcast(path.data(), static_cast<int>(path.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path.c_str();
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ignored;
    if (world_rank() == 0) fs::remove_all(path_, ignored);
  }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::unique_ptr<Backend> make_mpiio(bool collective, IoSettings settings = {},
                                    BackendOptions options = {}) {
  options["collective"] = collective ? "true" : "false";
  return make_backend("mpiio", settings, options, world());
}

// Whether every rank passed `ok`.
bool all_ranks(bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Extent lengths of the shared-file tests: odd, and one of 1 byte.
std::uint64_t length_of(std::uint64_t block) {
  return block == 5 ? 1 : 3000 + block * 517 % 4099;
}

// The shared file's layout: block b goes to rank b % 3, rank 2's blocks to none (it names the
// file with no extents) and rank 3 does not name the file; memory holds a rank's blocks in reverse.
struct SharedLayout {
  std::vector<std::vector<Extent>> extents_of_rank = std::vector<std::vector<Extent>>(4);
  std::uint64_t file_bytes = 0;
};

SharedLayout shared_layout() {
  SharedLayout layout;
  std::uint64_t offset = 0;
  for (std::uint64_t block = 0; block < 60; ++block) {
    const std::uint64_t length = length_of(block);
    const int rank = static_cast<int>(block % 3) == 2 ? -1 : static_cast<int>(block % 3);
    if (rank >= 0)
      layout.extents_of_rank[static_cast<std::size_t>(rank)].push_back({offset, 0, length});
    offset += length + (block % 4 == 0 ? 100 : 0);  // gaps too
  }
  layout.file_bytes = offset;
  for (auto& extents : layout.extents_of_rank) {
    std::uint64_t memory = 0;
    for (auto e = extents.rbegin(); e != extents.rend(); ++e) {
      e->memory_offset = memory;
      memory += e->length;
    }
  }
  return layout;
}

std::uint64_t memory_bytes(const std::vector<Extent>& extents) {
  std::uint64_t total = 0;
  for (const Extent& e : extents) total += e.length;
  return total;
}

IoPlan shared_plan(const SharedLayout& layout, const std::string& path, int rank) {
  IoPlan plan;
  if (rank == 3) return plan;
  plan.files.push_back(FilePlan{path, layout.extents_of_rank[static_cast<std::size_t>(rank)],
                                layout.file_bytes, 0, true});
  return plan;
}

// Rank 0 checks the file against every rank's pattern (seed = 100 + rank).
void expect_shared_file(const SharedLayout& layout, const std::string& path) {
  if (world_rank() != 0) return;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path;
  for (int rank = 0; rank < 4; ++rank) {
    const auto& extents = layout.extents_of_rank[static_cast<std::size_t>(rank)];
    Buffer source(memory_bytes(extents) + 1);
    source.fill(static_cast<std::uint64_t>(100 + rank));
    for (const Extent& e : extents) {
      std::vector<char> bytes(e.length);
      in.seekg(static_cast<std::streamoff>(e.file_offset));
      in.read(bytes.data(), static_cast<std::streamsize>(e.length));
      ASSERT_TRUE(in.good()) << path << " at " << e.file_offset;
      expect_same_bytes(
          reinterpret_cast<const std::byte*>(bytes.data()), source.data() + e.memory_offset,
          e.length,
          "rank " + std::to_string(rank) + "'s extent at " + std::to_string(e.file_offset));
    }
  }
}

class MpiioModes : public testing::TestWithParam<bool> {
 protected:
  bool collective() const { return GetParam(); }
};

TEST_P(MpiioModes, FourRanksWriteOneSharedFileAndReadItBack) {
  ASSERT_EQ(world_size(), 4) << "run under mpirun -np 4";
  const SharedDir dir;
  const SharedLayout layout = shared_layout();
  const IoPlan plan = shared_plan(layout, dir.file("shared.bin"), world_rank());
  const auto& mine = layout.extents_of_rank[static_cast<std::size_t>(world_rank())];
  Buffer source(memory_bytes(mine) + 1);
  source.fill(static_cast<std::uint64_t>(100 + world_rank()));
  const auto backend = make_mpiio(collective(), IoSettings{.sync = SyncPolicy::fsync});
  const IoOutcome written = backend->write(plan, source.view());
  EXPECT_TRUE(written.ok()) << written.error.value_or("");
  EXPECT_EQ(written.bytes, plan.bytes());
  MPI_Barrier(MPI_COMM_WORLD);
  expect_shared_file(layout, dir.file("shared.bin"));
  if (world_rank() == 0) {
    EXPECT_EQ(fs::file_size(dir.file("shared.bin")), layout.extents_of_rank[1].back().file_offset +
                                                         layout.extents_of_rank[1].back().length);
  }
  Buffer back(source.size());
  const IoOutcome read = backend->read(plan, back.view());
  EXPECT_TRUE(read.ok()) << read.error.value_or("");
  expect_same_bytes(back.data(), source.data(), memory_bytes(mine),
                    "read back on rank " + std::to_string(world_rank()));
}

TEST_P(MpiioModes, OverlappingGroupsOfSharedFilesAndFilePerProcess) {
  const SharedDir dir;
  const int rank = world_rank();
  IoPlan plan;
  std::uint64_t memory = 0;
  const auto add = [&](const std::string& name, std::uint64_t file_offset, std::uint64_t length,
                       bool shared) {
    plan.files.push_back(FilePlan{dir.file(name), {{file_offset, memory, length}}, 0, 0, shared});
    memory += length;
  };
  // b.bin (ranks 1-3) sorts after a.bin (ranks 0-2): the file communicators overlap.
  if (rank >= 1) add("b.bin", static_cast<std::uint64_t>(rank - 1) * 5000, 5000, true);
  add("rank_" + std::to_string(rank) + ".bin", 0, 7000 + static_cast<std::uint64_t>(rank), false);
  if (rank <= 2) add("a.bin", static_cast<std::uint64_t>(rank) * 3000, 3000, true);
  Buffer source(memory);
  source.fill(static_cast<std::uint64_t>(7 + rank));
  const auto backend = make_mpiio(collective());
  const IoOutcome written = backend->write(plan, source.view());
  EXPECT_TRUE(written.ok()) << written.error.value_or("");
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(fs::file_size(dir.file("rank_" + std::to_string(rank) + ".bin")),
            7000u + static_cast<unsigned>(rank));
  if (rank == 0) {
    EXPECT_EQ(fs::file_size(dir.file("a.bin")), 9000u);
    EXPECT_EQ(fs::file_size(dir.file("b.bin")), 15000u);
  }
  Buffer back(memory);
  const IoOutcome read = backend->read(plan, back.view());
  EXPECT_TRUE(read.ok()) << read.error.value_or("");
  expect_same_bytes(back.data(), source.data(), memory,
                    "read back on rank " + std::to_string(rank));
}

TEST_P(MpiioModes, ReadingBeyondTheEndFailsOnEveryRankNamingThePath) {
  const SharedDir dir;
  const std::string path = dir.file("short.bin");
  if (world_rank() == 0) std::ofstream(path, std::ios::binary) << std::string(10000, 'x');
  MPI_Barrier(MPI_COMM_WORLD);
  // Only rank 2's extent reaches past the 10000 bytes.
  const std::uint64_t offset = static_cast<std::uint64_t>(world_rank()) * 2500;
  const std::uint64_t length = world_rank() == 2 ? 6000 : 2500;
  const IoPlan plan{{FilePlan{path, {{offset, 0, length}}, 0, 0, true}}};
  Buffer memory(length);
  const IoOutcome read = make_mpiio(collective())->read(plan, memory.view());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.bytes, 0u);
  if (world_rank() == 2) {
    EXPECT_TRUE(contains(*read.error, path)) << *read.error;
    EXPECT_TRUE(contains(*read.error, "file shorter than the plan")) << *read.error;
  } else {
    EXPECT_TRUE(contains(*read.error, "failed on process 2")) << *read.error;
  }
}

INSTANTIATE_TEST_SUITE_P(Mpiio, MpiioModes, testing::Values(false, true),
                         [](const auto& p) { return p.param ? "collective" : "independent"; });

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

bool has_note(const std::vector<std::string>& notes, const std::string& note) {
  return std::find(notes.begin(), notes.end(), note) != notes.end();
}

// `bytes` from `file_offset` cut at `chunk` (as strategy.chunk_bytes cuts a plan), memory from 0.
std::vector<Extent> chunked(std::uint64_t file_offset, std::uint64_t bytes, std::uint64_t chunk) {
  std::vector<Extent> extents;
  for (std::uint64_t done = 0; done < bytes; done += std::min(chunk, bytes - done))
    extents.push_back({file_offset + done, done, std::min(chunk, bytes - done)});
  return extents;
}

TEST(Mpiio, CollectiveRoundsAreThePlansLargestRequestsPacked) {
  using mpiio::round_count;
  using mpiio::round_limit;
  EXPECT_EQ(round_count({}), 0u);
  EXPECT_EQ(round_limit({}), 0u);
  EXPECT_EQ(round_count({{0, 0, 0}}), 0u);
  EXPECT_EQ(round_limit(chunked(0, 256 * kMiB, kMiB)), kMiB);
  EXPECT_EQ(round_count(chunked(0, 256 * kMiB, kMiB)), 256u);  // IOR -t 1m -b 256m: 256 calls
  EXPECT_EQ(round_count(chunked(0, 3 * kMiB + kMiB / 2, kMiB)), 4u);  // ceil(3.5)
  // Unsorted: file order. Four of 256 KiB share one round of at most 1 MiB; the 1 MiB its own.
  const std::vector<Extent> small{{4 * kMiB, 0, kMiB},
                                  {0, kMiB, kMiB / 4},
                                  {kMiB / 4, 2 * kMiB, kMiB / 4},
                                  {kMiB / 2, 3 * kMiB, kMiB / 4},
                                  {3 * kMiB / 4, 4 * kMiB, kMiB / 4}};
  EXPECT_EQ(round_limit(small), kMiB);
  EXPECT_EQ(round_count(small), 2u);
  // Beyond an MPI count: rounds of at most 1 GiB.
  const std::vector<Extent> huge{{0, 0, 5 * (mpiio::kMaxRequestBytes / 2)}};
  EXPECT_EQ(round_limit(huge), mpiio::kMaxRequestBytes);
  EXPECT_EQ(round_count(huge), 3u);
}

// Three processes share a file with 3.5 MiB, 1.25 MiB and 0 bytes in 1 MiB requests (rank 3 does
// not name it): every one makes ceil(3.5 MiB / 1 MiB) = 4 collective calls, writing and reading.
TEST(Mpiio, CollectiveUnevenProcessesMakeTheLargestRoundCountAndRoundTrip) {
  ASSERT_EQ(world_size(), 4) << "run under mpirun -np 4";
  const SharedDir dir;
  const std::string path = dir.file("uneven.bin");
  const int rank = world_rank();
  const auto me = static_cast<std::size_t>(rank);
  const std::uint64_t bytes[] = {3 * kMiB + kMiB / 2, kMiB + kMiB / 4, 0, 0};
  const std::uint64_t offset[] = {0, bytes[0], bytes[0] + bytes[1], 0};
  const std::uint64_t mine = bytes[me];
  IoPlan plan;
  if (rank != 3) plan.files.push_back(FilePlan{path, chunked(offset[me], mine, kMiB), 0, 0, true});
  Buffer source(mine);
  source.fill(static_cast<std::uint64_t>(40 + rank));
  const auto backend = make_mpiio(true, IoSettings{.sync = SyncPolicy::fsync});
  const IoOutcome written = backend->write(plan, source.view());
  ASSERT_TRUE(all_ranks(written.ok())) << written.error.value_or("");
  EXPECT_EQ(written.bytes, mine);
  const std::string rounds =
      " rounds on 3 processes, at most 1048576 bytes per process each (the plan's largest "
      "request), one piece per process a round at an explicit offset";
  if (rank != 3) {
    const std::string note = "collective: 4 MPI_File_write_at_all" + rounds;
    EXPECT_TRUE(has_note(backend->notes(), note)) << note;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    EXPECT_EQ(fs::file_size(path), bytes[0] + bytes[1]);
    std::ifstream in(path, std::ios::binary);
    for (std::size_t r = 0; r < 2; ++r) {
      Buffer expected(bytes[r]);
      expected.fill(40 + r);
      std::vector<char> stored(bytes[r]);
      in.read(stored.data(), static_cast<std::streamsize>(bytes[r]));
      ASSERT_TRUE(in.good()) << path;
      expect_same_bytes(reinterpret_cast<const std::byte*>(stored.data()), expected.data(),
                        bytes[r], "rank " + std::to_string(r) + "'s bytes in " + path);
    }
  }
  Buffer back(mine);
  const IoOutcome read = backend->read(plan, back.view());
  ASSERT_TRUE(all_ranks(read.ok())) << read.error.value_or("");
  EXPECT_EQ(read.bytes, mine);
  expect_same_bytes(back.data(), source.data(), mine, "read back on rank " + std::to_string(rank));
  if (rank != 3) {
    const std::string note = "collective: 4 MPI_File_read_at_all" + rounds;
    EXPECT_TRUE(has_note(backend->notes(), note)) << note;
  }
}

// Rank 0 has rounds of several pieces (four 256 KiB extents share a 1 MiB round), so every
// process sets a file view per round, even those with one piece a round; the bytes round-trip.
TEST(Mpiio, CollectiveRoundsOfSeveralPiecesGoThroughAFileViewOnEveryProcess) {
  ASSERT_EQ(world_size(), 4) << "run under mpirun -np 4";
  const SharedDir dir;
  const std::string path = dir.file("pieces.bin");
  const int rank = world_rank();
  const std::uint64_t base = static_cast<std::uint64_t>(rank) * 2 * kMiB;
  IoPlan plan;
  if (rank == 0) {
    // Memory order reversed against file order: the view must follow the file, not the memory.
    plan.files.push_back(FilePlan{path,
                                  {{base, 0, kMiB},
                                   {base + kMiB, 4 * kMiB / 4, kMiB / 4},
                                   {base + 5 * kMiB / 4, 3 * kMiB / 4 + kMiB, kMiB / 4},
                                   {base + 6 * kMiB / 4, 2 * kMiB / 4 + kMiB, kMiB / 4},
                                   {base + 7 * kMiB / 4, kMiB / 4 + kMiB, kMiB / 4}},
                                  0,
                                  0,
                                  true});
  } else {
    plan.files.push_back(FilePlan{path, chunked(base, 2 * kMiB, kMiB), 0, 0, true});
  }
  Buffer source(2 * kMiB);
  source.fill(static_cast<std::uint64_t>(60 + rank));
  const auto backend = make_mpiio(true, IoSettings{.sync = SyncPolicy::none});
  const IoOutcome written = backend->write(plan, source.view());
  ASSERT_TRUE(all_ranks(written.ok())) << written.error.value_or("");
  const std::string note =
      "collective: 2 MPI_File_write_at_all rounds on 4 processes, at most 1048576 bytes per "
      "process each (the plan's largest request), through an hindexed file view per round";
  EXPECT_TRUE(has_note(backend->notes(), note)) << note;
  Buffer back(2 * kMiB);
  const IoOutcome read = backend->read(plan, back.view());
  ASSERT_TRUE(all_ranks(read.ok())) << read.error.value_or("");
  expect_same_bytes(back.data(), source.data(), 2 * kMiB,
                    "read back on rank " + std::to_string(rank));
}

// Reads that name bytes twice (two modeled ranks of one process loading one replicated tensor)
// come in rounds whose pieces do not overlap in the file.
TEST(MpiioUneven, OverlappingPiecesOfOneProcessTakeRoundsOfTheirOwn) {
  using mpiio::round_count;
  // Rounds of at most 300 bytes (the largest extent, at 1000, a round of its own).
  const Extent last{1000, 300, 300};
  EXPECT_EQ(round_count({{0, 0, 100}, {100, 100, 100}, {200, 200, 100}, last}), 2u);  // adjacent
  EXPECT_EQ(round_count({{0, 0, 100}, {0, 100, 100}, {100, 200, 100}, last}), 3u);    // read twice
  EXPECT_EQ(round_count({{50, 0, 100}, {0, 100, 100}, {200, 200, 100}, last}), 3u);   // 50 overlap
}

// An inference load's reads: each process reads its own, uneven set of ranges of two files that
// rank 0 wrote: another count of extents per process, bytes one process reads twice, bytes two
// processes both read, a process naming a file with no extents, a file only some processes name.
// ctest runs this under mpirun -np 2 and -np 3 (with a timeout: a mismatched collective hangs);
// every process's bytes are checked, independent and collective.
TEST(MpiioUneven, ProcessesReadUnevenOverlappingRangesOfSharedFiles) {
  const int size = world_size();
  ASSERT_GE(size, 2) << "run under mpirun -np 2 or more";
  const SharedDir dir;
  const int rank = world_rank();
  const std::string a = dir.file("a.bin");
  const std::string b = dir.file("b.bin");
  Buffer a_bytes(3 * kMiB + 123);
  Buffer b_bytes(200 * 1024);
  a_bytes.fill(7);
  b_bytes.fill(8);
  if (rank == 0) {
    std::ofstream(a, std::ios::binary)
        .write(reinterpret_cast<const char*>(a_bytes.data()),
               static_cast<std::streamsize>(a_bytes.size()));
    std::ofstream(b, std::ios::binary)
        .write(reinterpret_cast<const char*>(b_bytes.data()),
               static_cast<std::streamsize>(b_bytes.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Extents by file offset and length; memory is filled back to front below.
  std::vector<Extent> in_a;
  std::vector<Extent> in_b;
  if (rank == 0) {
    for (std::uint64_t i = 0; i < 40; ++i) in_a.push_back({i * 70000 + 11, 0, 1000 + i * 37});
    in_a.push_back({11, 0, 1000});            // the first extent again
    in_a.push_back({70000 + 500, 0, 70000});  // over the second and third
    in_a.push_back({2 * kMiB, 0, kMiB});      // the round limit
    in_b.push_back({100, 0, 5000});
  } else if (rank == 1) {
    in_a = {{3 * kMiB, 0, 123}, {3 * kMiB, 0, 123}, {11, 0, 300000}};  // rank 0's bytes too
  }
  if (rank == size - 1) in_b.push_back({0, 0, 200 * 1024});  // rank 1 at -np 2
  std::uint64_t memory = 0;
  for (auto* extents : {&in_a, &in_b}) {
    for (auto e = extents->rbegin(); e != extents->rend(); ++e) {
      e->memory_offset = memory;
      memory += e->length;
    }
  }
  IoPlan plan;
  if (rank < 2) plan.files.push_back(FilePlan{a, in_a, 0, 0, true});
  if (rank == 2) plan.files.push_back(FilePlan{a, {}, 0, 0, true});  // names it, reads nothing
  if (!in_b.empty()) plan.files.push_back(FilePlan{b, in_b, 0, 0, true});
  for (const bool collective : {false, true}) {
    Buffer back(memory);
    const auto backend = make_mpiio(collective);
    const IoOutcome read = backend->read(plan, back.view());
    ASSERT_TRUE(all_ranks(read.ok())) << read.error.value_or("");
    EXPECT_EQ(read.bytes, memory);
    for (const Extent& e : in_a) {
      expect_same_bytes(
          back.data() + e.memory_offset, a_bytes.data() + e.file_offset, e.length,
          "a.bin at " + std::to_string(e.file_offset) + " on rank " + std::to_string(rank));
    }
    for (const Extent& e : in_b) {
      expect_same_bytes(
          back.data() + e.memory_offset, b_bytes.data() + e.file_offset, e.length,
          "b.bin at " + std::to_string(e.file_offset) + " on rank " + std::to_string(rank));
    }
  }
}

TEST(Mpiio, FilePerProcessManyFilesCollective) {
  const SharedDir dir;
  IoPlan plan;
  std::uint64_t memory = 0;
  for (int i = 0; i < 6; ++i) {
    const std::uint64_t length = 1000 + static_cast<std::uint64_t>(i * 333 + world_rank());
    // Two extents per file, the second first in memory and after a hole in the file.
    plan.files.push_back(test_support::file_plan(
        dir.file("r" + std::to_string(world_rank()) + "_f" + std::to_string(i) + ".bin"),
        {{0, memory + length, length}, {length + 50, memory, length}}));
    memory += 2 * length;
  }
  Buffer source(memory);
  source.fill(static_cast<std::uint64_t>(world_rank()));
  const auto backend = make_mpiio(true, IoSettings{.sync = SyncPolicy::fdatasync});
  const IoOutcome written = backend->write(plan, source.view());
  EXPECT_TRUE(written.ok()) << written.error.value_or("");
  test_support::expect_files_hold(plan, source);
  bool fdatasync_noted = false;
  for (const std::string& note : written.notes) fdatasync_noted |= contains(note, "MPI_File_sync");
  EXPECT_TRUE(fdatasync_noted) << "the fdatasync-as-MPI_File_sync note";
  // Files only this process opens take independent transfers, and the outcome says so.
  const auto independent_noted = [](const IoOutcome& outcome) {
    return std::any_of(outcome.notes.begin(), outcome.notes.end(), [](const std::string& note) {
      return note ==
             "files only one process opens take independent transfers (collective applies to "
             "shared files)";
    });
  };
  EXPECT_TRUE(independent_noted(written));
  test_support::expect_read_back(*backend, plan, source);
  // A shared file keeps its collective calls: no such note.
  const IoPlan shared{{FilePlan{dir.file("shared.bin"),
                                {{static_cast<std::uint64_t>(world_rank()) * 100, 0, 100}},
                                0,
                                0,
                                true}}};
  Buffer piece(100);
  piece.fill(3);
  const IoOutcome shared_written = backend->write(shared, piece.view());
  EXPECT_TRUE(shared_written.ok()) << shared_written.error.value_or("");
  EXPECT_FALSE(independent_noted(shared_written));
}

TEST(Mpiio, UnwritableTargetOnOneRankFailsEveryRank) {
  const SharedDir dir;
  if (world_rank() == 0) std::ofstream(dir.file("file.txt")) << "not a directory";
  MPI_Barrier(MPI_COMM_WORLD);
  // Rank 1's private file lies under a regular file: ENOTDIR even for root.
  const std::string path = world_rank() == 1 ? dir.file("file.txt/ckpt.bin")
                                             : dir.file("ok_" + std::to_string(world_rank()));
  const IoPlan plan{{test_support::file_plan(path, {{0, 0, 64}})}};
  Buffer memory(64);
  const IoOutcome outcome = make_mpiio(false)->write(plan, memory.view());
  ASSERT_FALSE(outcome.ok());
  if (world_rank() == 1) {
    EXPECT_TRUE(contains(*outcome.error, "mpiio: MPI_File_open (create) " + path + ": MPI_ERR"))
        << *outcome.error;
    EXPECT_TRUE(contains(*outcome.error, "MPI error class")) << *outcome.error;
  } else {
    EXPECT_TRUE(contains(*outcome.error, "open failed on process 1 of the group of 4"))
        << *outcome.error;
  }
}

TEST(Mpiio, UnwritableSharedFileNamesThePathAndTheMpiError) {
  const SharedDir dir;
  if (world_rank() == 0) std::ofstream(dir.file("file.txt")) << "not a directory";
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string path = dir.file("file.txt/shared.bin");
  const std::uint64_t offset = static_cast<std::uint64_t>(world_rank()) * 64;
  const IoPlan plan{{FilePlan{path, {{offset, 0, 64}}, 256, 0, true}}};
  Buffer memory(64);
  for (const bool collective : {false, true}) {
    const IoOutcome outcome = make_mpiio(collective)->write(plan, memory.view());
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(*outcome.error, path)) << *outcome.error;
    EXPECT_TRUE(contains(*outcome.error, "MPI_ERR")) << *outcome.error;
  }
}

// The std::invalid_argument message of making mpiio with `options`, or "".
std::string option_error(const BackendOptions& options, IoSettings settings = {}) {
  try {
    make_backend("mpiio", settings, options, world());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Mpiio, DefaultsAreTheListedDefaults) {
  for (const BackendInfo& info : list_backends()) {
    if (info.name != "mpiio") continue;
    EXPECT_EQ(info.options.at(0).name, "collective");
    EXPECT_EQ(mpiio::parse_mpiio_options({}).collective,
              info.options.at(0).default_value == "true");
  }
}

TEST(Mpiio, BadOptionsAreRejectedByKeyWithTheFix) {
  const std::string misspelt = option_error({{"hints.romio_cb_wrte", "enable"}});
  EXPECT_TRUE(contains(misspelt, "`backend.mpiio.hints.romio_cb_wrte`")) << misspelt;
  EXPECT_TRUE(contains(misspelt, "did you mean `hints.romio_cb_write`?")) << misspelt;
  EXPECT_TRUE(contains(misspelt, "known hints: access_style")) << misspelt;
  const std::string unrelated = option_error({{"hints.turbo", "1"}});
  EXPECT_TRUE(contains(unrelated, "unknown MPI-IO hint `turbo`")) << unrelated;
  EXPECT_FALSE(contains(unrelated, "did you mean")) << unrelated;

  const std::string toggle = option_error({{"hints.romio_cb_write", "yes"}});
  EXPECT_TRUE(contains(
      toggle,
      "`backend.mpiio.hints.romio_cb_write` = \"yes\": must be enable, disable or automatic"))
      << toggle;
  const std::string size = option_error({{"hints.cb_buffer_size", "16MiB"}});
  EXPECT_TRUE(contains(size, "`backend.mpiio.hints.cb_buffer_size` = \"16MiB\"")) << size;
  EXPECT_TRUE(contains(size, "whole number from 1 to 2147483647")) << size;
  EXPECT_TRUE(contains(option_error({{"hints.cb_nodes", "0"}}), "whole number from 1"))
      << "cb_nodes = 0";
  EXPECT_TRUE(
      contains(option_error({{"hints.romio_no_indep_rw", "enable"}}), "must be true or false"));
  EXPECT_EQ(
      option_error({{"hints.romio_lustre_coll_threshold", "0"}, {"hints.cb_config_list", "*:1"}}),
      "");

  const std::string collective = option_error({{"collective", "maybe"}});
  EXPECT_EQ(collective, "mpiio: `backend.mpiio.collective` = \"maybe\": expected true or false");
  EXPECT_TRUE(contains(option_error({{"colective", "true"}}), "did you mean `collective`?"));
}

TEST(Mpiio, SettingsMpiioCannotHonourAreRejectedByName) {
  EXPECT_TRUE(contains(option_error({}, IoSettings{.direct = true}),
                       "mpiio: `backend.direct` is not supported (capabilities: direct_io = "
                       "false): MPI-IO has no O_DIRECT"));
  EXPECT_EQ(option_error({}, IoSettings{.threads = 2}),
            "mpiio: `backend.threads` must be 1 (got 2; capabilities: threads = false): each "
            "process makes one "
            "MPI-IO call sequence; run more processes instead");
  EXPECT_TRUE(contains(option_error({}, IoSettings{.queue_depth = 4}),
                       "`backend.queue_depth` must be from 1 to 1"));
  EXPECT_TRUE(
      contains(option_error({}, IoSettings{.sqpoll = true}), "`backend.sqpoll` is not supported"));
  EXPECT_TRUE(contains(option_error({}, IoSettings{.fallocate = true}),
                       "`backend.fallocate` is not supported (capabilities: fallocate = false): "
                       "MPI_File_preallocate"));
  const Capabilities caps = make_mpiio(false)->capabilities();
  EXPECT_TRUE(caps.collective);
  EXPECT_TRUE(caps.shared_file);
  EXPECT_FALSE(caps.direct_io);
  EXPECT_FALSE(caps.device_memory);
  EXPECT_EQ(caps.max_queue_depth, 1);
}

TEST(Mpiio, HintsInEffectAreNoted) {
  const SharedDir dir;
  const IoPlan plan{{FilePlan{dir.file("hinted.bin"),
                              {{static_cast<std::uint64_t>(world_rank()) * 128, 0, 128}},
                              0,
                              0,
                              true}}};
  Buffer memory(128);
  memory.fill(3);
  const auto backend = make_mpiio(
      true, {}, {{"hints.romio_cb_write", "enable"}, {"hints.cb_buffer_size", "1048576"}});
  const IoOutcome outcome = backend->write(plan, memory.view());
  ASSERT_TRUE(outcome.ok()) << *outcome.error;
  std::string notes;
  for (const std::string& note : outcome.notes) notes += note + "\n";
  EXPECT_TRUE(contains(notes, "romio_cb_write")) << notes;
  EXPECT_TRUE(contains(notes, "cb_buffer_size")) << notes;
  // One note per distinct set of hints, not one per file: a run's notes stay short.
  EXPECT_FALSE(contains(notes, dir.file("hinted.bin"))) << notes;
  EXPECT_EQ(backend->write(plan, memory.view()).notes, outcome.notes);
}

TEST(MpiCommon, FileCommsGroupExactlyTheProcessesNamingASharedPath) {
  const int rank = world_rank();
  const mpi::GroupComm group("test", world());
  EXPECT_EQ(group.rank(), rank);
  EXPECT_EQ(group.size(), 4);
  IoPlan plan;
  const auto add = [&](const std::string& path, bool shared) {
    plan.files.push_back(FilePlan{path, {}, 0, 0, shared});
  };
  add("/x/all", true);                      // ranks 0-3
  if (rank % 2 == 0) add("/x/even", true);  // ranks 0, 2
  if (rank == 3) add("/x/alone", true);     // rank 3 only
  add("/x/private_" + std::to_string(rank), false);
  if (rank != 1) add("/x/all_but_1", true);  // ranks 0, 2, 3
  const mpi::FileComms comms(group.get(), plan, "test");
  std::map<std::string, int> expected = {
      {"/x/all", 4}, {"/x/even", 2}, {"/x/alone", 1}, {"/x/all_but_1", 3}};
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    const std::string& path = plan.files[i].path;
    const int size = expected.count(path) ? expected[path] : 1;
    EXPECT_EQ(comms.size_of(i), size) << path << " on rank " << rank;
    if (size == 1) {
      EXPECT_EQ(comms.of(i), MPI_COMM_SELF) << path;
    } else {
      int order = 0;
      MPI_Comm_compare(comms.of(i), group.get(), &order);
      EXPECT_EQ(order == MPI_IDENT || order == MPI_CONGRUENT, size == 4) << path;
    }
    // A path the whole group shares opens on the group itself: no communicator is made for it.
    EXPECT_EQ(comms.of(i) == group.get(), size == 4) << path;
  }
  EXPECT_THROW(comms.of(plan.files.size()), std::out_of_range);
  const mpi::FileComms empty(group.get(), IoPlan{},
                             "test");  // collective even with nothing to open
}

TEST(MpiCommon, InfoHintsAndErrorText) {
  EXPECT_EQ(mpi::InfoHints("test", {{"collective", "true"}}).get(), MPI_INFO_NULL);
  const mpi::InfoHints hints("test",
                             {{"hints.striping_factor", "4"}, {"hints.romio_ds_write", "disable"}});
  ASSERT_NE(hints.get(), MPI_INFO_NULL);
  int keys = 0;
  MPI_Info_get_nkeys(hints.get(), &keys);
  EXPECT_EQ(keys, 2);
  EXPECT_EQ(hints.hints().at("striping_factor"), "4");
  const std::string text = mpi::mpi_error_text(MPI_ERR_NO_SUCH_FILE);
  EXPECT_TRUE(contains(text, "MPI error class")) << text;
  try {
    mpi::check_mpi(MPI_ERR_ACCESS, "test", "MPI_File_open", "/some/path");
    ADD_FAILURE() << "check_mpi passed an error";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), "test: MPI_File_open /some/path: ")) << e.what();
  }
  EXPECT_NO_THROW(mpi::check_mpi(MPI_SUCCESS, "test", "MPI_File_open", "/some/path"));
}

TEST(MpiCommon, ConstructionWithoutMpiIsANamedError) {
  // MPI is initialised here, so only the message contract of the finalised case can be checked
  // indirectly: a null communicator handle is rejected by name.
  const ProcessGroup bad{0, 1, MPI_Comm_c2f(MPI_COMM_NULL)};
  try {
    mpi::GroupComm comm("test", bad);
    ADD_FAILURE() << "MPI_COMM_NULL accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "MPI_COMM_NULL")) << e.what();
  }
  EXPECT_TRUE(all_ranks(true));
}

}  // namespace
}  // namespace ckpt::backends
