// The framework directory layouts written and restored end to end: DCP's coordinator
// .metadata written last, Megatron's gathered distributed-optimizer files under mpirun.
#include <set>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The reference job, TP2 × PP2 × DP2 ZeRO-1 of Llama 3 8B, scaled 4096× down (~26 MiB).
std::string reference_campaign(const std::string& name, const fs::path& target, const std::string& layout) {
  return campaign_toml(name, target, R"(create_target = true
iterations = 1
warmup = 0
keep = true
[model]
name = "llama3-8b"
scale = 4096
[parallel]
tp = 2
pp = 2
dp = 2
zero = 1
[cache]
policy = "none"
[strategy]
layout = ")" + layout + "\"\n");
}

// dcp_metadata_bytes() as harness/run/dcp_metadata.hpp states it.
std::uint64_t documented_metadata_bytes(const nlohmann::json& tensors) {
  std::uint64_t bytes = 400;
  std::set<std::string> seen;
  for (const auto& t : tensors) {
    const std::string fqn = t.at("state").get<std::string>() + "/" + t.at("name").get<std::string>();
    const std::uint64_t ndim = t.at("global_shape").size();
    if (seen.insert(fqn).second) bytes += fqn.size() + 130 + 3 * ndim;
    bytes += fqn.size() + t.at("file").get<std::string>().size() + 150 + 6 * ndim;
  }
  return bytes;
}

TEST(FrameworkLayoutRun, DcpMetadataIsWrittenLastAfterEveryDataFile) {
  const Scratch dir;
  const fs::path campaign = dir.write("dcp.toml", reference_campaign("dcp", dir / "target", "dcp"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "dcp" / "case-0000");
  ASSERT_FALSE(step.empty());
  ASSERT_TRUE(fs::exists(step / ".metadata"));
  EXPECT_FALSE(fs::exists(step / ".metadata.tmp"));  // renamed from its temp name
  const auto metadata_time = fs::last_write_time(step / ".metadata");
  int data_files = 0;
  for (const auto& entry : fs::directory_iterator(step)) {
    if (entry.path().extension() != ".distcp") continue;
    ++data_files;
    EXPECT_LE(fs::last_write_time(entry.path()), metadata_time) << entry.path();
  }
  EXPECT_EQ(data_files, 8);
  EXPECT_LE(metadata_time, fs::last_write_time(step / kManifest));  // before the manifest commits
  const nlohmann::json tensors = read_manifest(step).at("tensors");
  EXPECT_EQ(fs::file_size(step / ".metadata"), documented_metadata_bytes(tensors));
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_GT(results[0].at("phases").at("write").at("metadata").get<double>(), 0.0);
  EXPECT_EQ(results[0].at("stragglers").at("write").at("metadata").at("process"), 0);
}

TEST(FrameworkLayoutRun, MegatronDistWritesItsCoordinatorFilesAndVerifies) {
  const Scratch dir;
  const fs::path campaign = dir.write("md.toml", reference_campaign("md", dir / "target", "megatron_dist"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "md" / "case-0000");
  EXPECT_EQ(step.filename(), "iter_0000001");
  EXPECT_EQ(read_text(step / "metadata.json"), R"({"sharded_backend": "torch_dist", "sharded_backend_version": 1})");
  EXPECT_TRUE(fs::exists(step / "common.pt"));
  EXPECT_EQ(fs::file_size(step / ".metadata"), documented_metadata_bytes(read_manifest(step).at("tensors")));
  for (int r = 0; r < 8; ++r) {
    for (int n = 0; n < 2; ++n) EXPECT_TRUE(fs::exists(step / ("__" + std::to_string(r) + "_" + std::to_string(n) + ".distcp")));
  }
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_EQ(results[0].at("files_per_checkpoint"), 16);
}

TEST(FrameworkLayoutRun, MegatronDistributedOptimizerUnderMpirunRestoresAndVerifies) {
  const auto mpirun = find_mpirun();
  if (!mpirun) GTEST_SKIP() << "mpirun is not on PATH, so the multi-process run cannot be started";
  if (!CKPT_TEST_HAVE_MPI) GTEST_SKIP() << "ckptbench was built without MPI (CKPT_WITH_MPI=OFF or MPI not found)";
  const Scratch dir;
  const fs::path campaign = dir.write("meg.toml", reference_campaign("meg", dir / "target", "megatron"));
  const auto run = [&](const std::string& phase, const std::string& out) {
    std::vector<std::string> args = mpirun_args(*mpirun, 4);
    args.insert(args.end(), {kBinary, "run", campaign.string(), "--output", (dir / out).string(), "--phase", phase});
    return run_process(args, std::chrono::seconds(240));
  };
  const Outcome written = run("checkpoint", "written");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "meg" / "case-0000");
  ASSERT_FALSE(step.empty());
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(step)) {
    if (entry.is_regular_file()) files.insert(fs::relative(entry.path(), step).string());
  }
  EXPECT_EQ(files, (std::set<std::string>{kManifest, "mp_rank_00_000/model_optim_rng.pt",
                                          "mp_rank_00_000/distrib_optim.pt", "mp_rank_01_000/model_optim_rng.pt",
                                          "mp_rank_01_000/distrib_optim.pt", "mp_rank_00_001/model_optim_rng.pt",
                                          "mp_rank_00_001/distrib_optim.pt", "mp_rank_01_001/model_optim_rng.pt",
                                          "mp_rank_01_001/distrib_optim.pt"}));
  // DP rank 0 of each (tp, pp) writes its group's shards: ranks 0, 1, 4, 5.
  std::set<std::int64_t> writers;
  const nlohmann::json manifest = read_manifest(step);
  for (const auto& t : manifest.at("tensors")) writers.insert(t.at("rank").get<std::int64_t>());
  EXPECT_EQ(writers, (std::set<std::int64_t>{0, 1, 4, 5}));
  const Outcome restored = run("restore", "restored");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const auto results = read_results(dir / "restored");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_EQ(results[0].at("status"), "ok");
}

TEST(FrameworkLayoutRun, DeepSpeedLayerFilesRestoreAndVerify) {
  const Scratch dir;
  const fs::path campaign = dir.write("ds.toml", reference_campaign("ds", dir / "target", "deepspeed"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "ds" / "case-0000");
  int layer_files = 0;
  for (const auto& entry : fs::directory_iterator(step)) {
    if (entry.path().filename().string().starts_with("layer_")) ++layer_files;
  }
  EXPECT_EQ(layer_files, 70);
  EXPECT_FALSE(fs::exists(step / ".metadata"));
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_EQ(results[0].at("files_per_checkpoint"), 78);
}

}  // namespace
}  // namespace ckpt::integration
