// The hdf5 backend across four MPI processes: one shared file holding every tensor as a dataset
// of its global shape, written by hyperslabs (TP slices, ZeRO flat ranges, a process with two
// pieces of a dataset, a process with none), collective and independent, contiguous and
// chunked; read back exactly, then restored by two processes with another split; per-rank
// serial files; the files as h5ls, h5dump and h5py see them.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backends/registry.hpp"
#include "tests/backends/hdf5_layout.hpp"
#include "tests/backends/hdf5_test_support.hpp"

namespace ckpt::backends::hdf5_test {
namespace {

constexpr int kRanks = 4;

#define CKPT_REQUIRE_FOUR_RANKS()                                                       \
  do {                                                                                  \
    if (!hdf5_available()) GTEST_SKIP() << "hdf5 is not compiled in";                   \
    if (world_size() != kRanks)                                                         \
      GTEST_SKIP() << "needs mpirun -np " << kRanks << " (got " << world_size() << ")"; \
  } while (false)

std::unique_ptr<Backend> make_hdf5(const BackendOptions& options, MPI_Comm comm = MPI_COMM_WORLD,
                                   IoSettings settings = {}) {
  return make_backend("hdf5", settings, options, group_of(comm));
}

void expect_same(const std::vector<std::byte>& actual, const std::vector<std::byte>& expected,
                 const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  const auto [a, b] = std::mismatch(actual.begin(), actual.end(), expected.begin());
  EXPECT_TRUE(a == actual.end()) << what << ": rank " << world_rank()
                                 << ", first difference at byte " << (a - actual.begin()) << " of "
                                 << actual.size();
}

// Reads `plan` into zeroed memory and compares it with `expected` (the plan's memory image).
void expect_reads_back(Backend& backend, const ProcessPlan& expected, const std::string& what) {
  std::vector<std::byte> memory(expected.memory.size());
  const IoOutcome outcome = backend.read(expected.plan, view_of(memory));
  ASSERT_TRUE(outcome.ok()) << what << ": " << *outcome.error;
  EXPECT_EQ(outcome.bytes, expected.plan.bytes());
  expect_same(memory, expected.memory, what);
}

struct Variant {
  const char* name;
  bool collective;
  const char* layout;
  const char* collective_opt = "collective_io";
};

void PrintTo(const Variant& variant, std::ostream* out) {
  *out << variant.name;
}

class SharedFile : public testing::TestWithParam<Variant> {
 protected:
  BackendOptions options() const {
    return {{"collective", GetParam().collective ? "true" : "false"},
            {"layout", GetParam().layout},
            {"collective_opt", GetParam().collective_opt}};
  }
  SharedDir dir_;
};

TEST_P(SharedFile, FourProcessesWriteReadAndRestoreOnTwo) {
  CKPT_REQUIRE_FOUR_RANKS();
  const std::string path = dir_.file("checkpoint.h5");
  ProcessPlan mine =
      plan_of(tensors(), pieces_of_rank(world_rank()), path, true, checkpoint_attributes());
  const auto backend = make_hdf5(options(), MPI_COMM_WORLD, IoSettings{.sync = SyncPolicy::fsync});
  const IoOutcome written = backend->write(mine.plan, view_of(mine.memory));
  ASSERT_TRUE(everywhere(written.ok())) << (written.error ? *written.error : "another rank failed");
  EXPECT_EQ(written.bytes, mine.plan.bytes());
  EXPECT_GT(written.phases.open, 0.0) << "dataset creation is timed as open";
  EXPECT_GT(written.phases.close, 0.0);
  if (GetParam().collective) {
    EXPECT_TRUE(written.notes.empty()) << "collective I/O fell back: " << written.notes.front();
  }
  expect_reads_back(*backend, mine, "read back by the writers");

  // Restore on a different process count: ranks 0 and 1 read every tensor whole.
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < 2 ? 0 : MPI_UNDEFINED, world_rank(), &pair);
  if (pair != MPI_COMM_NULL) {
    const std::vector<PieceSpec> half =
        world_rank() == 0 ? whole_tensors(0, 5) : whole_tensors(5, tensors().size());
    const ProcessPlan reader = plan_of(tensors(), half, path, true, {});
    expect_reads_back(*make_hdf5(options(), pair), reader, "restored by 2 processes");
    MPI_Comm_free(&pair);
  }
}

TEST_P(SharedFile, OneProcessRestoresEverything) {
  CKPT_REQUIRE_FOUR_RANKS();
  const std::string path = dir_.file("checkpoint.h5");
  ProcessPlan mine =
      plan_of(tensors(), pieces_of_rank(world_rank()), path, true, checkpoint_attributes());
  const IoOutcome written = make_hdf5(options())->write(mine.plan, view_of(mine.memory));
  ASSERT_TRUE(everywhere(written.ok())) << (written.error ? *written.error : "another rank failed");
  if (world_rank() == 3) {  // the rank that wrote nothing reads everything, serially on its own
    const ProcessPlan reader =
        plan_of(tensors(), whole_tensors(0, tensors().size()), path, false, {});
    expect_reads_back(*make_hdf5(options(), MPI_COMM_SELF), reader, "restored by 1 process");
  }
}

INSTANTIATE_TEST_SUITE_P(Hdf5, SharedFile,
                         testing::Values(Variant{"collective_contiguous", true, "contiguous"},
                                         Variant{"collective_chunked", true, "chunked"},
                                         Variant{"collective_individual_io", true, "contiguous",
                                                 "individual_io"},
                                         Variant{"independent_contiguous", false, "contiguous"},
                                         Variant{"independent_chunked", false, "chunked"}),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(Hdf5PerRankFiles, EachProcessWritesItsOwnSerialFile) {
  CKPT_REQUIRE_FOUR_RANKS();
  const SharedDir dir;
  const auto file_of = [&](int rank) { return dir.file("rank_" + std::to_string(rank) + ".h5"); };
  ProcessPlan mine = plan_of(tensors(), pieces_of_rank(world_rank()), file_of(world_rank()), false,
                             checkpoint_attributes());
  const auto backend = make_hdf5({}, MPI_COMM_WORLD, IoSettings{.sync = SyncPolicy::fdatasync});
  const IoOutcome written = backend->write(mine.plan, view_of(mine.memory));
  ASSERT_TRUE(everywhere(written.ok())) << (written.error ? *written.error : "another rank failed");
  EXPECT_TRUE(written.notes.empty()) << written.notes.front();
  expect_reads_back(*backend, mine, "own file read back");
  MPI_Barrier(MPI_COMM_WORLD);
  // Each rank restores its left neighbour's pieces from the neighbour's file.
  const int left = (world_rank() + kRanks - 1) % kRanks;
  const ProcessPlan neighbour = plan_of(tensors(), pieces_of_rank(left), file_of(left), false, {});
  expect_reads_back(*backend, neighbour, "neighbour's file");
  if (world_rank() == 0) {
    // Serial files hold the slices their rank has, with the tensor's shape and the slice's
    // offset as attributes: rank 1 has columns 0..3 of linear_proj [6, 8].
    const std::string listing = run_command("h5ls -r " + file_of(1));
    EXPECT_TRUE(contains(listing, "/weight/linear_proj      Dataset {6, 4}")) << listing;
    EXPECT_TRUE(contains(listing, "/weight/norm             Dataset {10}")) << listing;
    const std::string attributes = run_command("h5dump -A -d /weight/linear_proj " + file_of(1));
    EXPECT_TRUE(contains(attributes, "ATTRIBUTE \"global_shape\"")) << attributes;
    EXPECT_TRUE(contains(attributes, "\"[6, 8]\"")) << attributes;
    EXPECT_TRUE(contains(attributes, "ATTRIBUTE \"slice_offset\"")) << attributes;
    EXPECT_TRUE(contains(attributes, "\"[0, 0]\"")) << attributes;
    // Rank 0 holds two TP slices of linear_qkv: its file keeps the global shape for them.
    EXPECT_TRUE(
        contains(run_command("h5ls -r " + file_of(0)), "/weight/linear_qkv       Dataset {8, 6}"));
    // The same slice shape of a tensor of another shape is not this checkpoint.
    std::vector<Tensor> wider = tensors();
    wider[1].shape = {6, 12};
    const ProcessPlan other = plan_of(wider, pieces_of_rank(1), file_of(1), false, {});
    std::vector<std::byte> memory(other.memory.size());
    const IoOutcome refused = make_hdf5({}, MPI_COMM_SELF)->read(other.plan, view_of(memory));
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(contains(*refused.error,
                         "dataset weight/linear_proj: it is a slice of a tensor of shape [6, 8], "
                         "the plan's tensor has [6, 12]"))
        << *refused.error;
    EXPECT_FALSE(contains(listing, "/optimizer/step")) << "rank 1 holds no piece of it:\n"
                                                       << listing;
  }
}

}  // namespace
}  // namespace ckpt::backends::hdf5_test
