// `ckptbench run` with the collective backends (mpiio, hdf5) as a user runs them: under
// mpirun with 4 processes for 8 modeled ranks, in every file mapping and transfer mode, and an
// HDF5 checkpoint written by 4 processes restored by 2 and by 1 — the datasets hold the
// tensors' global shapes, so the reader's process count does not matter.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

const std::vector<std::string> kLayout{"--model", "llama3-8b", "--tp", "2",       "--dp",
                                       "4",       "--zero",    "1",    "--state", "full"};

// 8 modeled ranks of Llama 3 8B at TP 2 × DP 4 with ZeRO-1 (so ranks hold flat ranges that
// start and end inside rows), scaled 2048× down.
std::string workload(const std::string& strategy_and_backend) {
  return R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 2048
[parallel]
tp = 2
dp = 4
zero = 1
[state]
scope = "full"
[ranks]
gpus_per_node = 4
[cache]
policy = "none"
)" + strategy_and_backend;
}

void expect_all_verified(const fs::path& output, std::size_t cases, std::uint64_t bytes,
                         int processes) {
  const auto results = read_results(output);
  ASSERT_EQ(results.size(), cases);
  for (const auto& r : results) {
    SCOPED_TRACE(r.at("case").dump() + ": " + r.at("error").dump());
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_EQ(r.at("verified"), true);
    EXPECT_EQ(r.at("ranks").get<int>(), processes);
    EXPECT_EQ(r.at("bytes_per_checkpoint").get<std::uint64_t>(), bytes);
  }
}

class CollectiveRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
    mpirun_ = find_mpirun();
    const Outcome listed = ckptbench({"backends", "--json"});
    for (const auto& b : nlohmann::json::parse(listed.out)) {
      if ((b.at("name") == "mpiio" || b.at("name") == "hdf5") && !b.at("available").get<bool>()) {
        GTEST_SKIP() << b.at("name").get<std::string>()
                     << " is not built: " << b.value("reason", "");
      }
    }
    bytes_ = scaled_checkpoint_bytes(kLayout, 8, 2048);
  }

  Outcome run(int processes, const fs::path& campaign, const fs::path& output,
              std::vector<std::string> extra = {}) {
    std::vector<std::string> args =
        processes > 0 ? mpirun_args(*mpirun_, processes) : std::vector<std::string>{};
    args.insert(args.end(), {kBinary, "run", campaign.string(), "--output", output.string()});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_process(args, std::chrono::seconds(240));
  }

  // The workload in one shared file written by hdf5, checkpoints under dir_/target.
  fs::path hdf5_shared_file_campaign(const std::string& name) {
    return dir_.write(name + ".toml", campaign_toml(name, dir_ / "target", workload(R"(
[strategy]
mapping = "shared_file"
[backend]
name = "hdf5"
)")));
  }

  Scratch dir_;
  std::optional<std::string> mpirun_;
  std::uint64_t bytes_ = 0;
};

TEST_F(CollectiveRun, EveryMappingAndTransferModeRestoresVerified) {
  const fs::path campaign =
      dir_.write("c.toml", campaign_toml("collective", dir_ / "target", workload(R"(
[strategy]
mapping = ["file_per_rank", "file_per_node", "shared_file"]
[backend]
name = ["mpiio", "hdf5"]
)")));
  const Outcome defaults =
      run(4, campaign, dir_ / "defaults");  // mpiio independent, hdf5 collective
  ASSERT_EQ(defaults.exit_code, 0) << defaults.describe();
  expect_all_verified(dir_ / "defaults", 6, bytes_, 4);
  const Outcome flipped =
      run(4, campaign, dir_ / "flipped",
          {"--set", "backend.mpiio.collective=true", "--set", "backend.hdf5.collective=false",
           "--set", "backend.hdf5.layout=chunked"});
  ASSERT_EQ(flipped.exit_code, 0) << flipped.describe();
  expect_all_verified(dir_ / "flipped", 6, bytes_, 4);
  for (const auto& r : read_results(dir_ / "flipped")) {
    const std::string backend = r.at("config").at("backend").at("name");
    if (backend == "mpiio") {
      EXPECT_EQ(r.at("config").at("backend").at("mpiio").at("collective"), true);
    } else {
      EXPECT_EQ(r.at("config").at("backend").at("hdf5").at("layout"), "chunked");
    }
  }
}

TEST_F(CollectiveRun, Hdf5CheckpointOfFourProcessesRestoresOnTwoAndOne) {
  const fs::path campaign = hdf5_shared_file_campaign("hdf5-restore");
  const Outcome written = run(4, campaign, dir_ / "written", {"--phase", "checkpoint"});
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const Outcome two = run(2, campaign, dir_ / "two", {"--phase", "restore"});
  ASSERT_EQ(two.exit_code, 0) << two.describe();
  expect_all_verified(dir_ / "two", 1, bytes_, 2);
  const Outcome one =
      run(0, campaign, dir_ / "one", {"--phase", "restore"});  // MPI starts as a singleton
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  expect_all_verified(dir_ / "one", 1, bytes_, 1);

  // The file is HDF5. Scaled 2048x down, a dataset's leading dimension is divided by 2048 where
  // every piece moves exactly (linear_fc1: TP 2 slices of 14336 rows -> 7 rows each; the
  // replicated final_layernorm [4096] -> [2]); the others keep the global shape (the embedding's
  // TP slices of 64128 rows do not divide by 2048). Whatever the writers' process count.
  const auto listing_of = [&](const fs::path& results_dir) {
    const fs::path checkpoint =
        read_results(results_dir).at(0).at("checkpoint_dir").get<std::string>();
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(checkpoint)) {
      if (entry.is_regular_file() && entry.path().extension() != ".json")
        files.push_back(entry.path());
    }
    EXPECT_EQ(files.size(), 1u);
    return run_process({"h5ls", "-r", files.at(0)});
  };
  const Outcome listing = listing_of(dir_ / "one");
  if (listing.exit_code == 127) GTEST_SKIP() << "h5ls is not installed (hdf5-tools)";
  ASSERT_EQ(listing.exit_code, 0) << listing.describe();
  EXPECT_TRUE(
      contains(listing.out, "/weight/embedding.word_embeddings.weight Dataset {128256, 4096}"))
      << listing.out;
  EXPECT_TRUE(contains(
      listing.out,
      "/exp_avg/optimizer.state.exp_avg.decoder.layers.0.mlp.linear_fc1.weight Dataset {14, 4096}"))
      << listing.out;
  EXPECT_TRUE(contains(
      listing.out, "/master/optimizer.state.fp32_param.decoder.final_layernorm.weight Dataset {2}"))
      << listing.out;

  // shapes = "global": every dataset has the tensor's global shape, filled in part.
  const Outcome global = run(4, campaign, dir_ / "global",
                             {"--phase", "checkpoint", "--set", "backend.hdf5.shapes=global",
                              "--set", "campaign.target=" + (dir_ / "global-target").string()});
  ASSERT_EQ(global.exit_code, 0) << global.describe();
  const Outcome global_restored =
      run(2, campaign, dir_ / "global-restored",
          {"--phase", "restore", "--set", "backend.hdf5.shapes=global", "--set",
           "campaign.target=" + (dir_ / "global-target").string()});
  ASSERT_EQ(global_restored.exit_code, 0) << global_restored.describe();
  expect_all_verified(dir_ / "global-restored", 1, bytes_, 2);
  const Outcome global_listing = listing_of(dir_ / "global");
  ASSERT_EQ(global_listing.exit_code, 0) << global_listing.describe();
  EXPECT_TRUE(contains(global_listing.out,
                       "/exp_avg/optimizer.state.exp_avg.decoder.layers.0.mlp.linear_fc1.weight "
                       "Dataset {28672, 4096}"))
      << global_listing.out;
  EXPECT_TRUE(
      contains(global_listing.out,
               "/master/optimizer.state.fp32_param.decoder.final_layernorm.weight Dataset {4096}"))
      << global_listing.out;

  // A restore with the other shapes setting is another checkpoint format: refused up front.
  const Outcome other_shapes = run(0, campaign, dir_ / "other-shapes",
                                   {"--phase", "restore", "--set", "backend.hdf5.shapes=global"});
  EXPECT_EQ(other_shapes.exit_code, 2) << other_shapes.describe();
  EXPECT_TRUE(contains(other_shapes.err,
                       "backend.hdf5.shapes = \"scaled\", this campaign has backend.hdf5.shapes = "
                       "\"global\""))
      << other_shapes.err;

  // Raw-byte backends cannot read it: restore refuses instead of reporting garbage.
  const Outcome raw =
      run(0, campaign, dir_ / "raw", {"--phase", "restore", "--set", "backend.name=posix"});
  EXPECT_EQ(raw.exit_code, 2) << raw.describe();
  EXPECT_TRUE(
      contains(raw.err, "backend.name = \"hdf5\", this campaign has backend.name = \"posix\""))
      << raw.err;
}

TEST_F(CollectiveRun, MpiIoChoiceSelectsTheModule) {
  const fs::path campaign = hdf5_shared_file_campaign("mpi-io");
  // Under mpirun and as a singleton, campaign.mpi_io decides which module MPI-IO loads.
  const Outcome romio = run(2, campaign, dir_ / "romio", {"--set", "campaign.mpi_io=romio"});
  ASSERT_EQ(romio.exit_code, 0) << romio.describe();
  expect_all_verified(dir_ / "romio", 1, bytes_, 2);
  const auto romio_env = read_results(dir_ / "romio").at(0).at("environment");
  const auto romio_modules = romio_env.at("mpi_io_modules").get<std::vector<std::string>>();
  if (romio_modules.empty())
    GTEST_SKIP() << "no Open MPI io modules in /proc/self/maps (another MPI, or a static build)";
  ASSERT_EQ(romio_modules.size(), 1u) << romio_env.dump();
  EXPECT_TRUE(romio_modules[0].starts_with("romio")) << romio_env.dump();
  EXPECT_EQ(romio_env.at("mpi_io_component"), "^ompio");

  const Outcome ompio = run(0, campaign, dir_ / "ompio", {"--set", "campaign.mpi_io=ompio"});
  ASSERT_EQ(ompio.exit_code, 0) << ompio.describe();
  EXPECT_EQ(read_results(dir_ / "ompio").at(0).at("environment").at("mpi_io_modules"),
            nlohmann::json::array({"ompio"}));

  // Asking for ROMIO while the launcher selects OMPIO: one clear error, nothing written.
  std::vector<std::string> with_mca = mpirun_args(*mpirun_, 2);
  with_mca.insert(with_mca.begin() + 1, {"--mca", "io", "ompio"});
  with_mca.insert(with_mca.end(), {kBinary, "run", campaign.string(), "--output",
                                   (dir_ / "clash").string(), "--set", "campaign.mpi_io=romio"});
  const Outcome clash = run_process(with_mca, std::chrono::seconds(120));
  EXPECT_EQ(clash.exit_code, 2) << clash.describe();
  EXPECT_TRUE(contains(clash.err, campaign.string() +
                                      ": campaign.mpi_io = \"romio\" but the environment selects "
                                      "OMPI_MCA_io=ompio (mpirun --mca io ompio)"))
      << clash.err;
  EXPECT_FALSE(fs::exists(dir_ / "clash")) << "a results directory was written";
}

}  // namespace
}  // namespace ckpt::integration
