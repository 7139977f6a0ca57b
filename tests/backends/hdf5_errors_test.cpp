// The hdf5 backend's refusals: bad option values and settings name their key; an unwritable
// target, a missing dataset or one of another shape or dtype names the file and the dataset;
// a bad plan or disagreeing attributes on one process fail every process instead of hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backends/hdf5/hdf5_options.hpp"
#include "backends/registry.hpp"
#include "tests/backends/hdf5_layout.hpp"
#include "tests/backends/hdf5_test_support.hpp"

namespace ckpt::backends::hdf5_test {
namespace {

// The std::invalid_argument text of making hdf5 with these options and settings, or "".
std::string construction_error(const BackendOptions& options, IoSettings settings = {}) {
  try {
    make_backend("hdf5", settings, options, group_of(MPI_COMM_WORLD));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const IoOutcome& outcome) {
  return outcome.error.value_or("(no error)");
}

class Hdf5Errors : public testing::Test {
 protected:
  void SetUp() override {
    if (!hdf5_available()) GTEST_SKIP() << "hdf5 is not compiled in";
    if (world_size() != 4) GTEST_SKIP() << "needs mpirun -np 4";
  }
  // Every rank writes its pieces of the checkpoint into one shared file.
  std::string write_checkpoint() {
    const std::string path = dir_.file("checkpoint.h5");
    ProcessPlan mine =
        plan_of(tensors(), pieces_of_rank(world_rank()), path, true, checkpoint_attributes());
    const IoOutcome written = make_backend("hdf5", {}, {}, group_of(MPI_COMM_WORLD))
                                  ->write(mine.plan, view_of(mine.memory));
    EXPECT_TRUE(written.ok()) << error_of(written);
    return path;
  }
  SharedDir dir_;
};

// The defaults the backend uses are those of its option table (the one the registry lists).
TEST(Hdf5Options, DefaultsAreTheListedDefaults) {
  const hdf5::Hdf5Options parsed = hdf5::Hdf5Options::parse({});
  std::map<std::string, std::string> listed;
  for (const BackendInfo& info : list_backends()) {
    if (info.name != "hdf5") continue;
    for (const OptionSpec& option : info.options) listed[option.name] = option.default_value;
  }
  EXPECT_EQ(listed.at("alignment_threshold"), "65536");
  EXPECT_EQ(parsed.alignment_threshold, std::stoull(listed.at("alignment_threshold")));
  EXPECT_EQ(parsed.alignment, std::stoull(listed.at("alignment")));
  EXPECT_EQ(parsed.collective, listed.at("collective") == "true");
  EXPECT_EQ(parsed.collective_metadata, listed.at("collective_metadata") == "true");
  EXPECT_EQ(parsed.individual_io, listed.at("collective_opt") == "individual_io");
  EXPECT_EQ(parsed.layout == hdf5::Layout::chunked, listed.at("layout") == "chunked");
  EXPECT_EQ(parsed.shapes == hdf5::Shapes::global, listed.at("shapes") == "global");
}

TEST_F(Hdf5Errors, BadOptionValuesNameTheirKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"collective", "yes"},
      {"layout", "striped"},
      {"alignment", "1M"},
      {"alignment_threshold", "-5"},
      {"collective_metadata", "1"},
      {"hints.romio_cb_write", "sometimes"},
      {"collective_opt", "two_phase"},
      {"shapes", "local"}};
  for (const auto& [key, value] : bad) {
    const std::string message = construction_error({{key, value}});
    EXPECT_TRUE(contains(message, "backend.hdf5." + key))
        << key << " = " << value << ": " << message;
  }
  const std::string misspelt = construction_error({{"layuot", "chunked"}});
  EXPECT_TRUE(contains(misspelt, "did you mean `layout`?")) << misspelt;
  EXPECT_EQ(construction_error({{"collective", "false"},
                                {"layout", "chunked"},
                                {"alignment", "1048576"},
                                {"alignment_threshold", "4096"},
                                {"collective_metadata", "false"},
                                {"collective_opt", "individual_io"},
                                {"shapes", "global"},
                                {"hints.romio_cb_write", "enable"}}),
            "");
}

TEST_F(Hdf5Errors, SettingsBeyondWhatHdf5DoesAreRejectedByName) {
  EXPECT_TRUE(contains(construction_error({}, IoSettings{.threads = 2}), "`backend.threads`"));
  EXPECT_TRUE(
      contains(construction_error({}, IoSettings{.queue_depth = 4}), "`backend.queue_depth`"));
  EXPECT_TRUE(contains(construction_error({}, IoSettings{.direct = true}), "`backend.direct`"));
  EXPECT_TRUE(
      contains(construction_error({}, IoSettings{.fallocate = true}), "`backend.fallocate`"));
  EXPECT_TRUE(contains(construction_error({}, IoSettings{.sqpoll = true}), "`backend.sqpoll`"));
}

TEST_F(Hdf5Errors, UnwritableTargetNamesThePath) {
  const auto backend = make_backend("hdf5", {}, {}, group_of(MPI_COMM_WORLD));
  ProcessPlan shared =
      plan_of(tensors(), pieces_of_rank(world_rank()), dir_.file("no/such/dir/ckpt.h5"), true, {});
  const IoOutcome missing_dir = backend->write(shared.plan, view_of(shared.memory));
  ASSERT_FALSE(missing_dir.ok()) << "rank " << world_rank();
  EXPECT_TRUE(contains(*missing_dir.error, dir_.file("no/such/dir/ckpt.h5"))) << *missing_dir.error;
  EXPECT_EQ(missing_dir.bytes, 0u);

  const std::string blocker = dir_.file("plain_file_" + std::to_string(world_rank()));
  std::ofstream(blocker) << "not a directory";
  ProcessPlan own =
      plan_of(tensors(), pieces_of_rank(world_rank()), blocker + "/rank.h5", false, {});
  const IoOutcome not_a_dir = backend->write(own.plan, view_of(own.memory));
  ASSERT_FALSE(not_a_dir.ok());
  EXPECT_TRUE(contains(*not_a_dir.error, blocker + "/rank.h5")) << *not_a_dir.error;
  EXPECT_TRUE(contains(*not_a_dir.error, "hdf5: create")) << *not_a_dir.error;
}

TEST_F(Hdf5Errors, MissingDatasetNamesTheFileAndTheDataset) {
  const std::string path = write_checkpoint();
  std::vector<Tensor> asked = tensors();
  asked.push_back({"weight/missing", "fp32", 4, {3}});
  std::vector<PieceSpec> pieces = pieces_of_rank(world_rank());
  if (world_rank() == 1)
    pieces.push_back({asked.size() - 1, 1, {0}, {3}, 0, 3});  // one rank asks for it
  ProcessPlan reader = plan_of(asked, pieces, path, true, {});
  const IoOutcome outcome = make_backend("hdf5", {}, {}, group_of(MPI_COMM_WORLD))
                                ->read(reader.plan, view_of(reader.memory));
  ASSERT_FALSE(outcome.ok()) << "every rank opens every dataset of the file, so every rank fails";
  EXPECT_TRUE(contains(*outcome.error, path + ", dataset weight/missing: no such dataset"))
      << *outcome.error;
}

TEST_F(Hdf5Errors, ShapeOrDtypeOtherThanTheFilesNamesTheDataset) {
  const std::string path = write_checkpoint();
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;  // rank 0 alone, reading the shared file by itself
  const auto alone = make_backend("hdf5", {}, {}, group_of(MPI_COMM_SELF));
  std::vector<Tensor> wrong = tensors();
  wrong[0].shape = {8, 7};
  ProcessPlan by_shape = plan_of(wrong, whole_tensors(0, 1), path, true, {});
  by_shape.plan.files[0].datasets[0].global_shape = {8, 7};
  const IoOutcome shape = alone->read(by_shape.plan, view_of(by_shape.memory));
  ASSERT_FALSE(shape.ok());
  EXPECT_TRUE(
      contains(*shape.error,
               path + ", dataset weight/linear_qkv: its shape is [8, 6], the plan needs [8, 7]"))
      << *shape.error;
  wrong = tensors();
  wrong[0].dtype = "fp16";
  ProcessPlan by_dtype = plan_of(wrong, whole_tensors(0, 1), path, false, {});
  const IoOutcome dtype = alone->read(by_dtype.plan, view_of(by_dtype.memory));
  ASSERT_FALSE(dtype.ok());
  EXPECT_TRUE(contains(*dtype.error, "dataset weight/linear_qkv: its element type is not fp16"))
      << *dtype.error;
}

TEST_F(Hdf5Errors, ProcessesDisagreeingOnADatasetAllFail) {
  const std::string path = write_checkpoint();
  std::vector<Tensor> mine = tensors();
  if (world_rank() == 1) mine[0].shape = {8, 7};  // rank 1 thinks linear_qkv is wider
  ProcessPlan reader = plan_of(mine, pieces_of_rank(world_rank()), path, true, {});
  const IoOutcome outcome = make_backend("hdf5", {}, {}, group_of(MPI_COMM_WORLD))
                                ->read(reader.plan, view_of(reader.memory));
  ASSERT_FALSE(outcome.ok()) << "rank " << world_rank();
  EXPECT_TRUE(contains(*outcome.error,
                       "dataset weight/linear_qkv: processes disagree: shape [8, 6] vs [8, 7]"))
      << *outcome.error;
}

TEST_F(Hdf5Errors, ABadPieceOnOneProcessFailsEveryProcessBeforeAnyFileIsMade) {
  const std::string path = dir_.file("never.h5");
  ProcessPlan mine = plan_of(tensors(), pieces_of_rank(world_rank()), path, true, {});
  if (world_rank() == 2) mine.plan.files[0].datasets[0].flat_end = 13;  // a 12-element slice
  const auto backend = make_backend("hdf5", {}, {}, group_of(MPI_COMM_WORLD));
  if (world_rank() == 2) {
    try {
      backend->write(mine.plan, view_of(mine.memory));
      ADD_FAILURE() << "a flat range beyond its slice was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(
          e.what(), path + ", dataset weight/linear_qkv: flat range [0, 13) leaves the slice"))
          << e.what();
    }
  } else {
    const IoOutcome outcome = backend->write(mine.plan, view_of(mine.memory));
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(contains(*outcome.error, "another process's plan failed its checks"))
        << *outcome.error;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(Hdf5Errors, RootAttributesMustAgree) {
  std::map<std::string, std::string> attributes = checkpoint_attributes();
  if (world_rank() == 3) attributes["tp"] = "4";
  ProcessPlan mine =
      plan_of(tensors(), pieces_of_rank(world_rank()), dir_.file("ckpt.h5"), true, attributes);
  const IoOutcome outcome = make_backend("hdf5", {}, {}, group_of(MPI_COMM_WORLD))
                                ->write(mine.plan, view_of(mine.memory));
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(contains(*outcome.error, "processes disagree on the attribute `tp`: \"2\" vs \"4\""))
      << *outcome.error;
}

TEST_F(Hdf5Errors, PieceBeyondTheMemoryIsRejectedBeforeItMoves) {
  if (world_rank() != 0) return;
  ProcessPlan mine = plan_of(tensors(), whole_tensors(3, 4), dir_.file("alone.h5"), false, {});
  mine.plan.files[0]
      .extents.clear();  // the base class checks extents; the pieces are the backend's
  mine.plan.files[0].datasets[0].memory_offset = mine.memory.size();
  try {
    make_backend("hdf5", {}, {}, group_of(MPI_COMM_SELF))->write(mine.plan, view_of(mine.memory));
    ADD_FAILURE() << "a piece beyond the memory view was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "dataset weight/norm: memory [")) << e.what();
  }
}

}  // namespace
}  // namespace ckpt::backends::hdf5_test
