// The file system's checkpoint store as the checks of a checkpoint's files read it: the sizes of
// every file below a checkpoint by relative path, and byte ranges of one file.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

TEST(FileCheckpointStore, ListsEveryFileBelowACheckpointWithItsSize) {
  const test_support::TempDir dir;
  dir.write("step/model-00001-of-00002.safetensors", std::string(100, 'a'));
  dir.write("step/mp_rank_00/model_optim_rng.pt", std::string(7, 'b'));
  dir.write("step/empty", "");
  dir.write("other/not-listed", "x");
  FileCheckpointStore store;
  const std::map<std::string, std::uint64_t> expected{{"empty", 0},
                                                      {"model-00001-of-00002.safetensors", 100},
                                                      {"mp_rank_00/model_optim_rng.pt", 7}};
  EXPECT_EQ(store.file_sizes(dir.path() / "step"), expected);
  EXPECT_TRUE(store.file_sizes(dir.path() / "missing").empty());
}

TEST(FileCheckpointStore, ReadsByteRangesShortAtTheEndAndNamesAMissingFile) {
  const test_support::TempDir dir;
  const auto path = dir.write("f.bin", "0123456789");
  FileCheckpointStore store;
  EXPECT_EQ(store.read_bytes(path, 2, 3), "234");
  EXPECT_EQ(store.read_bytes(path, 8, 5), "89");
  try {
    store.read_bytes(dir.path() / "gone.bin", 0, 1);
    FAIL() << "no error for a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind((dir.path() / "gone.bin").string() + ": cannot be opened", 0),
        0u)
        << e.what();
  }
}

}  // namespace
}  // namespace ckpt::harness
