// The framework directory layouts written and restored end to end: DCP's coordinator
// .metadata written last, Megatron's gathered distributed-optimizer files under mpirun.
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The reference job, TP2 × PP2 × DP2 ZeRO-1 of Llama 3 8B, scaled 4096× down (~26 MiB).
std::string reference_campaign(const std::string& name, const fs::path& target,
                               const std::string& layout) {
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

// Llama 3 8B, 4096× down, TP × DP ZeRO-1 under the megatron layout.
std::string megatron_dp_campaign(const std::string& name, const fs::path& target, int tp, int dp,
                                 const std::string& optimizer = "gathered") {
  return campaign_toml(name, target,
                       "create_target = true\niterations = 1\nwarmup = 0\nkeep = true\n[model]\n"
                       "name = \"llama3-8b\"\nscale = 4096\n[parallel]\ntp = " +
                           std::to_string(tp) + "\ndp = " + std::to_string(dp) +
                           "\nzero = 1\n[cache]\npolicy = \"none\"\n"
                           "[strategy]\nlayout = \"megatron\"\nmegatron_optimizer = \"" +
                           optimizer + "\"\n");
}

// Bytes of the manifest's tensors that came to their writer by the gather ("holder" set).
std::uint64_t gathered_bytes(const nlohmann::json& manifest) {
  std::uint64_t bytes = 0;
  for (const auto& t : manifest.at("tensors")) {
    if (t.contains("holder")) bytes += t.at("bytes").get<std::uint64_t>();
  }
  return bytes;
}

// Megatron's key of a manifest tensor in .metadata: its name without numbers (the layers are
// one tensor), the optimizer's states under "optimizer.state.<state>." (master: fp32_param).
std::string megatron_key(const nlohmann::json& t) {
  std::string key;
  std::stringstream parts(t.at("name").get<std::string>());
  for (std::string part; std::getline(parts, part, '.');) {
    if (part.find_first_not_of("0123456789") != std::string::npos)
      key += (key.empty() ? "" : ".") + part;
  }
  const std::string state = t.at("state").get<std::string>();
  if (state == "weight") return key;
  return "optimizer.state." + (state == "master" ? std::string("fp32_param") : state) + "." + key;
}

// The size of .metadata as megatron_dist_metadata_bytes() states it.
std::uint64_t documented_megatron_metadata_bytes(const nlohmann::json& tensors) {
  std::uint64_t bytes = 490;
  std::set<std::string> keys;
  std::set<std::pair<std::string, std::int64_t>> writers;
  for (const auto& t : tensors) {
    const std::string key = megatron_key(t);
    if (keys.insert(key).second) bytes += key.size() + 56;
    bytes += key.size() + 233;
    if (writers.emplace(key, t.at("rank").get<std::int64_t>()).second) bytes += 116;
  }
  return bytes - 116 * keys.size();
}

// The size of .metadata as dcp_metadata_bytes() and megatron_dist_metadata_bytes() state it.
std::uint64_t documented_metadata_bytes(const nlohmann::json& tensors, bool megatron) {
  if (megatron) return documented_megatron_metadata_bytes(tensors);
  std::uint64_t bytes = 550;
  std::set<std::string> seen;
  std::set<std::int64_t> ranks;
  for (const auto& t : tensors) {
    const std::string fqn =
        t.at("state").get<std::string>() + "/" + t.at("name").get<std::string>();
    const std::uint64_t ndim = t.at("global_shape").size();
    ranks.insert(t.at("rank").get<std::int64_t>());
    bytes += seen.insert(fqn).second ? fqn.size() + 180 + 10 * ndim : fqn.size() + 113 + 6 * ndim;
  }
  if (ranks.size() > 1) bytes += 73 * seen.size();
  return bytes;
}

// `ckptbench run campaign --phase phase` under `mpirun -np processes`, results into `out`.
Outcome run_phase_under_mpirun(const std::string& mpirun, int processes, const fs::path& campaign,
                               const fs::path& out, const std::string& phase,
                               std::chrono::seconds limit) {
  std::vector<std::string> args = mpirun_args(mpirun, processes);
  args.insert(args.end(),
              {kBinary, "run", campaign.string(), "--output", out.string(), "--phase", phase});
  return run_process(args, limit);
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
  EXPECT_EQ(fs::file_size(step / ".metadata"), documented_metadata_bytes(tensors, false));
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_GT(results[0].at("phases").at("write").at("metadata").get<double>(), 0.0);
  EXPECT_EQ(results[0].at("stragglers").at("write").at("metadata").at("process"), 0);
}

TEST(FrameworkLayoutRun, MegatronDistWritesItsCoordinatorFilesAndVerifies) {
  const Scratch dir;
  const fs::path campaign =
      dir.write("md.toml", reference_campaign("md", dir / "target", "megatron_dist"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "md" / "case-0000");
  EXPECT_EQ(step.filename(), "iter_0000001");
  EXPECT_EQ(read_text(step / "metadata.json"),
            R"({"sharded_backend": "torch_dist", "sharded_backend_version": 1, )"
            R"("common_backend": "torch", "common_backend_version": 1})");
  EXPECT_TRUE(fs::exists(step / "common.pt"));
  EXPECT_EQ(fs::file_size(step / ".metadata"),
            documented_metadata_bytes(read_manifest(step).at("tensors"), true));
  for (int r = 0; r < 8; ++r) {
    for (int n = 0; n < 2; ++n)
      EXPECT_TRUE(
          fs::exists(step / ("__" + std::to_string(r) + "_" + std::to_string(n) + ".distcp")));
  }
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_EQ(results[0].at("files_per_checkpoint"), 16);
}

// One of tests/data/dcp/fsdp2's models saved as FSDP2 saves it, its weights sharded per tensor
// under ZeRO-3 over `parallel` (the [parallel] table's other lines), `rest` after, then restored:
// each phase under `mpirun -np processes`.
class Fsdp2Save {
 public:
  Fsdp2Save(const std::string& mpirun, int processes, const std::string& model,
            const std::string& parallel, const std::string& rest = "")
      : mpirun_(mpirun), processes_(processes) {
    const fs::path config = fs::path(CKPT_SOURCE_DIR) / "tests/data/dcp/fsdp2" / (model + ".json");
    campaign_ = dir_.write(
        "f.toml", campaign_toml("f", dir_ / "target",
                                "create_target = true\niterations = 1\nwarmup = 0\nkeep = "
                                "true\n[model]\nname = \"" +
                                    config.string() + "\"\n[parallel]\n" + parallel +
                                    "zero = 3\nzero_sharding = \"per_tensor\"\n[state]\nscope = "
                                    "\"weights\"\n[cache]\npolicy = \"none\"\n" +
                                    rest));
  }

  // The checkpoint's directory; empty, with the failure reported, when the phase failed.
  fs::path write() const {
    const Outcome written = run("checkpoint", "written");
    EXPECT_EQ(written.exit_code, 0) << written.describe();
    return written.exit_code == 0 ? latest_checkpoint(dir_ / "target" / "f" / "case-0000")
                                  : fs::path();
  }
  // The restore's one result; empty, with the failure reported, when the phase failed.
  nlohmann::json restore() const {
    const Outcome restored = run("restore", "restored");
    EXPECT_EQ(restored.exit_code, 0) << restored.describe();
    const auto results = read_results(dir_ / "restored");
    EXPECT_EQ(results.size(), 1u);
    return results.size() == 1 ? results[0] : nlohmann::json::object();
  }

 private:
  Outcome run(const std::string& phase, const std::string& out) const {
    return run_phase_under_mpirun(mpirun_, processes_, campaign_, dir_ / out, phase,
                                  std::chrono::seconds(120));
  }

  Scratch dir_;
  std::string mpirun_;
  int processes_;
  fs::path campaign_;
};

// FSDP2's sharding of a Llama-shaped model whose sizes do not divide by DP 4, under mpirun: each
// .distcp is the size of the file torch wrote for its rank (tests/data/dcp/fsdp2/dcp_fsdp2.jsonl:
// every item a torch.save archive, the empty chunks' included), and a restore verifies every
// chunk.
TEST(FrameworkLayoutRun, PerTensorShardingUnderMpirunWritesFsdp2sChunksAndRestores) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const Fsdp2Save save(*find_mpirun(), 2, "odd", "dp = 4\n");
  const fs::path step = save.write();
  ASSERT_FALSE(step.empty());
  // Rank 3 holds the last 7 of the 37-row tables and no row of the 6-row k/v projections: 1,374
  // data bytes to the others' 1,710, and the archives of its 4 empty chunks.
  for (const auto& [file, bytes] : std::map<std::string, std::uintmax_t>{{"__0_0.distcp", 34141},
                                                                         {"__1_0.distcp", 34141},
                                                                         {"__2_0.distcp", 34141},
                                                                         {"__3_0.distcp", 33757}})
    EXPECT_EQ(fs::file_size(step / file), bytes) << file;
  EXPECT_EQ(read_manifest(step).at("tensors").size(), 21u * 4 - 4);
  EXPECT_EQ(save.restore().value("verified", false), true);
}

// FSDP2 over TP 2 at DP 2, one rank per process: each rank's chunks hold the data bytes torch
// wrote for it (tests/data/dcp/fsdp2/dcp_fsdp2_tp.jsonl), TP rank 1 the norms' chunks, and the
// cooperative restore sends each norm chunk to the TP rank 0 beside it over MPI.
TEST(FrameworkLayoutRun, PerTensorShardingOverTpUnderMpirunSendsTheNormsToTpRankZero) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const Fsdp2Save save(*find_mpirun(), 4, "uneven", "tp = 2\ndp = 2\n",
                       "[restore]\nreplicas = \"cooperative\"\n");
  const fs::path step = save.write();
  ASSERT_FALSE(step.empty());
  std::map<std::int64_t, std::uint64_t> data_bytes;
  const nlohmann::json manifest = read_manifest(step);
  for (const auto& t : manifest.at("tensors"))
    data_bytes[t.at("rank").get<std::int64_t>()] += t.at("bytes").get<std::uint64_t>();
  EXPECT_EQ(data_bytes,
            (std::map<std::int64_t, std::uint64_t>{{0, 2880}, {1, 2940}, {2, 2880}, {3, 2940}}));
  // torch's .metadata for this save is 15,259 B.
  EXPECT_NEAR(static_cast<double>(fs::file_size(step / ".metadata")), 15259, 0.1 * 15259);
  const nlohmann::json restored = save.restore();
  EXPECT_EQ(restored.value("verified", false), true);
  // Five norms, each a 6-element bf16 chunk per DP rank, sent once to TP rank 0.
  const nlohmann::json replicas = restored.value("replicas", nlohmann::json::object());
  EXPECT_EQ(replicas.value("storage_bytes", 0), 11640);
  EXPECT_EQ(replicas.value("interconnect_bytes", 0), 2 * 5 * 6 * 2);
}

TEST(FrameworkLayoutRun, MegatronDistributedOptimizerUnderMpirunRestoresAndVerifies) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  const Scratch dir;
  const fs::path campaign =
      dir.write("meg.toml", reference_campaign("meg", dir / "target", "megatron"));
  const auto run = [&](const std::string& phase, const std::string& out) {
    return run_phase_under_mpirun(*mpirun, 4, campaign, dir / out, phase,
                                  std::chrono::seconds(240));
  };
  const Outcome written = run("checkpoint", "written");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "meg" / "case-0000");
  ASSERT_FALSE(step.empty());
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(step)) {
    if (entry.is_regular_file()) files.insert(fs::relative(entry.path(), step).string());
  }
  EXPECT_EQ(files,
            (std::set<std::string>{
                kManifest, "mp_rank_00_000/model_optim_rng.pt", "mp_rank_00_000/distrib_optim.pt",
                "mp_rank_01_000/model_optim_rng.pt", "mp_rank_01_000/distrib_optim.pt",
                "mp_rank_00_001/model_optim_rng.pt", "mp_rank_00_001/distrib_optim.pt",
                "mp_rank_01_001/model_optim_rng.pt", "mp_rank_01_001/distrib_optim.pt"}));
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

// The gather is real: each process generates only its own DP ranks' shards, so DP rank 0's
// distrib_optim.pt verifies only if the other DP ranks' bytes reached it over MPI. The bytes it
// received are exactly what the per-DP format's DP ranks >= 1 write themselves.
TEST(FrameworkLayoutRun, MegatronGatherUnderMpirunMovesTheDpShardsToDpRank0) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  for (const auto& [tp, dp] : {std::pair{1, 4}, std::pair{2, 2}}) {
    SCOPED_TRACE("TP" + std::to_string(tp) + " DP" + std::to_string(dp));
    const Scratch dir;
    const fs::path campaign =
        dir.write("g.toml", megatron_dp_campaign("g", dir / "target", tp, dp));
    std::vector<std::string> args = mpirun_args(*mpirun, 4);
    args.insert(args.end(),
                {kBinary, "run", campaign.string(), "--output", (dir / "out").string()});
    const Outcome o = run_process(args, std::chrono::seconds(240));
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    const auto results = read_results(dir / "out");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].at("status"), "ok");
    EXPECT_EQ(results[0].at("verified"), true);
    const nlohmann::json& write = results[0].at("phases").at("write");
    EXPECT_GT(write.at("gather").get<double>(), 0.0);
    EXPECT_EQ(write.at("gather_local_bytes"), 0u);  // one modeled rank per process: all over MPI
    const nlohmann::json manifest =
        read_manifest(latest_checkpoint(dir / "target" / "g" / "case-0000"));
    std::set<std::int64_t> holders;
    for (const auto& t : manifest.at("tensors")) {
      if (t.contains("holder")) holders.insert(t.at("holder").get<std::int64_t>());
    }
    EXPECT_EQ(holders, (tp == 1 ? std::set<std::int64_t>{1, 2, 3} : std::set<std::int64_t>{2, 3}));
    EXPECT_EQ(write.at("gather_bytes").get<std::uint64_t>(), gathered_bytes(manifest));

    const fs::path per_dp =
        dir.write("p.toml", megatron_dp_campaign("p", dir / "target", tp, dp, "per_dp"));
    ASSERT_EQ(ckptbench({"run", per_dp.string(), "--output", (dir / "per_dp").string()}).exit_code,
              0);
    std::uint64_t own = 0;  // what DP ranks >= 1 write themselves in mp_rank_TT_DDD/optim.pt
    const nlohmann::json per_dp_manifest =
        read_manifest(latest_checkpoint(dir / "target" / "p" / "case-0000"));
    for (const auto& t : per_dp_manifest.at("tensors")) {
      if (t.at("rank").get<std::int64_t>() >= tp) own += t.at("bytes").get<std::uint64_t>();
    }
    EXPECT_GT(own, 0u);
    EXPECT_EQ(write.at("gather_bytes").get<std::uint64_t>(), own);
  }
}

// Several DP ranks in one process: the gather is a copy inside it, still timed.
TEST(FrameworkLayoutRun, OneProcessWithDp4GathersInsideTheProcess) {
  const Scratch dir;
  const fs::path campaign =
      dir.write("one.toml", megatron_dp_campaign("one", dir / "target", 1, 4));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  const nlohmann::json& write = results[0].at("phases").at("write");
  EXPECT_EQ(write.at("gather_bytes"), 0u);
  const nlohmann::json manifest =
      read_manifest(latest_checkpoint(dir / "target" / "one" / "case-0000"));
  EXPECT_GT(gathered_bytes(manifest), 0u);
  EXPECT_EQ(write.at("gather_local_bytes").get<std::uint64_t>(), gathered_bytes(manifest));
  EXPECT_GT(write.at("gather").get<double>(), 0.0);
  EXPECT_EQ(results[0].at("samples").at("gather_seconds").size(), 1u);
}

// The sync [training] loop gathers before each checkpoint: DP rank 0 never generates the other DP
// ranks' shards, so the restore verifies only if the gather moved each iteration's updated bytes.
TEST(FrameworkLayoutRun, SyncTrainingLoopGathersBeforeEachCheckpoint) {
  const Scratch dir;
  std::string toml = megatron_dp_campaign("loop", dir / "target", 1, 4);
  toml += "[training]\niterations = 3\niteration_seconds = 0.01\ncheckpoint_every = 1\n";
  const fs::path campaign = dir.write("loop.toml", toml);
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  const nlohmann::json manifest =
      read_manifest(latest_checkpoint(dir / "target" / "loop" / "case-0000"));
  EXPECT_EQ(manifest.at("training_iteration"), 2);
  const nlohmann::json& training = results[0].at("training");
  EXPECT_EQ(training.at("gather_bytes"), 0u);
  EXPECT_EQ(training.at("gather_local_bytes").get<std::uint64_t>(), gathered_bytes(manifest));
  // DP ranks 1-3's optimizer shards (fp32 params and two moments, 12 B/param of Llama 3 8B / 4096,
  // 3/4 of them; padded shards): as the write iterations' gather moves.
  EXPECT_EQ(training.at("gather_local_bytes").get<std::uint64_t>(), 17'644'620u);
  ASSERT_EQ(training.at("checkpoints").size(), 3u);
  for (const auto& record : training.at("checkpoints")) {
    EXPECT_GT(record.at("gather_seconds").get<double>(), 0.0);
    EXPECT_GE(record.at("stall_seconds").get<double>(), record.at("gather_seconds").get<double>());
  }
}

// Two processes of DP4: DP rank 1's shards come by an in-process copy, DP ranks 2 and 3's over MPI.
TEST(FrameworkLayoutRun, SyncTrainingLoopGathersOverMpirun) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  const Scratch dir;
  std::string toml = megatron_dp_campaign("loop", dir / "target", 1, 4);
  toml += "[training]\niterations = 2\niteration_seconds = 0.01\ncheckpoint_every = 1\n";
  std::vector<std::string> args = mpirun_args(*mpirun, 2);
  args.insert(args.end(), {kBinary, "run", dir.write("loop.toml", toml).string(), "--output",
                           (dir / "out").string()});
  const Outcome o = run_process(args, std::chrono::seconds(240));
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  const nlohmann::json& training = results[0].at("training");
  const auto received = training.at("gather_bytes").get<std::uint64_t>();
  const auto local = training.at("gather_local_bytes").get<std::uint64_t>();
  EXPECT_EQ(local, 5'881'536u);      // DP rank 1's shards
  EXPECT_EQ(received, 11'763'084u);  // DP ranks 2 and 3's (the DP split is not even to the byte)
  EXPECT_EQ(received + local, 17'644'620u);  // as the one-process run gathers
}

TEST(FrameworkLayoutRun, AsyncTrainingWithTheGatheredOptimizerIsRefusedInADryRun) {
  const Scratch dir;
  std::string toml = megatron_dp_campaign("loop", dir / "target", 1, 4);
  toml += "[training]\niterations = 2\n[engine]\nname = \"async\"\n";
  const Outcome o = ckptbench({"run", dir.write("loop.toml", toml).string(), "--dry-run"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_NE(
      o.err.find("`engine.name`: \"async\" with strategy.layout = \"megatron\" and "
                 "strategy.megatron_optimizer = \"gathered\": Megatron-LM's asynchronous save"),
      std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(dir / "target"));
}

// The [training] engines commit with the same coordinator files as the write iterations.
TEST(FrameworkLayoutRun, AsyncTrainingEngineWritesDcpMetadata) {
  const Scratch dir;
  const fs::path campaign = dir.write(
      "train.toml",
      campaign_toml(
          "train", dir / "target",
          "create_target = true\nkeep = true\n[model]\nname = \"llama3-8b\"\nscale = 4096\n"
          "[parallel]\ndp = 2\nzero = 1\n[cache]\npolicy = \"none\"\n[strategy]\nlayout = \"dcp\"\n"
          "[training]\niterations = 3\niteration_seconds = 0.01\ncheckpoint_every = 1\n"
          "[engine]\nname = \"async\"\n"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const fs::path step = latest_checkpoint(dir / "target" / "train" / "case-0000");
  ASSERT_FALSE(step.empty());
  ASSERT_TRUE(fs::exists(step / ".metadata"));
  EXPECT_FALSE(fs::exists(step / ".metadata.tmp"));
  EXPECT_EQ(fs::file_size(step / ".metadata"),
            documented_metadata_bytes(read_manifest(step).at("tensors"), false));
  EXPECT_LE(fs::last_write_time(step / ".metadata"), fs::last_write_time(step / kManifest));
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("status"), "ok");
}

TEST(FrameworkLayoutRun, DeepSpeedLayerFilesRestoreAndVerify) {
  const Scratch dir;
  const fs::path campaign =
      dir.write("ds.toml", reference_campaign("ds", dir / "target", "deepspeed"));
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
  EXPECT_EQ(results[0].at("files_per_checkpoint"), 82);  // + the 4 engine states
  for (int mp = 0; mp < 4; ++mp) {
    EXPECT_TRUE(fs::exists(step / ("mp_rank_0" + std::to_string(mp) + "_model_states.pt"))) << mp;
  }
  EXPECT_EQ(read_text(step.parent_path() / "latest"),
            "global_step1");  // DeepSpeed's tag, no newline
}

// ZeRO-3 under the deepspeed layout: every rank writes its engine state and its optimizer
// partition (the only copy of the weights), process 0 the recovery scripts beside `latest`, each
// file at the size `ckptbench layout --files` lists (the tensors 4096× down: the optimizer files
// by the scale, within the rounding of each tensor's share).
TEST(FrameworkLayoutRun, DeepSpeedZero3WritesEngineStateAndOptimizerPartitionsOnly) {
  const Scratch dir;
  const fs::path campaign = dir.write(
      "z3.toml", campaign_toml("z3", dir / "target",
                               "create_target = true\niterations = 1\nwarmup = 0\nkeep = true\n"
                               "[model]\nname = \"llama3-8b\"\nscale = 4096\n[parallel]\ndp = 2\n"
                               "zero = 3\n[cache]\npolicy = \"none\"\n[strategy]\n"
                               "layout = \"deepspeed\"\n"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const Outcome listing = ckptbench({"layout", "--model", "llama3-8b", "--dp", "2", "--zero", "3",
                                     "--files", "--layout", "deepspeed", "--json"});
  ASSERT_EQ(listing.exit_code, 0) << listing.describe();
  const nlohmann::json listing_json = nlohmann::json::parse(listing.out);
  std::map<std::string, std::uint64_t> listed;
  for (const auto& f : listing_json.at("files"))
    listed[f.at("path").get<std::string>()] = f.at("bytes").get<std::uint64_t>();
  const fs::path step = latest_checkpoint(dir / "target" / "z3" / "case-0000");
  std::set<std::string> written;
  for (const auto& entry : fs::directory_iterator(step)) {
    const std::string name = entry.path().filename().string();
    if (name != kManifest) written.insert(name);
  }
  EXPECT_EQ(written, (std::set<std::string>{"bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt",
                                            "bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt",
                                            "zero_pp_rank_0_mp_rank_00_model_states.pt",
                                            "zero_pp_rank_1_mp_rank_00_model_states.pt"}));
  for (const std::string model_states :
       {"zero_pp_rank_0_mp_rank_00_model_states.pt", "zero_pp_rank_1_mp_rank_00_model_states.pt"})
    EXPECT_EQ(fs::file_size(step / model_states), listed.at(model_states));
  for (const std::string optimizer : {"bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt",
                                      "bf16_zero_pp_rank_1_mp_rank_00_optim_states.pt"}) {
    EXPECT_NEAR(static_cast<double>(fs::file_size(step / optimizer)),
                static_cast<double>(listed.at(optimizer)) / 4096,
                static_cast<double>(listed.at(optimizer)) / 4096 / 1000)
        << optimizer;
  }
  for (const std::string script : {"zero_to_fp32.py", "zero_to_torch.py"})
    EXPECT_EQ(fs::file_size(step.parent_path() / script), listed.at("../" + script)) << script;
  const nlohmann::json manifest = read_manifest(step);  // kept: the loop reads into it
  for (const auto& t : manifest.at("tensors")) EXPECT_NE(t.at("state"), "weight") << t.at("name");
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("verified"), true);
  EXPECT_EQ(read_text(step.parent_path() / "latest"), "global_step1");
}

// DeepSpeed's ZeRO-2 files and Megatron's .pt files are written whole (framework_file_rest):
// each file at the size `ckptbench layout --files` lists, the tensors and the stand-in bytes after
// them 4096× down (within the rounding of each tensor's share), the recovery scripts and
// `latest` at their own sizes; the checkpoint verifies.
TEST(FrameworkLayoutRun, DeepSpeedZero2AndMegatronFilesHaveTheListedSizes) {
  // DeepSpeed's weights file and two optimizer files; Megatron's model_optim_rng.pt and
  // distrib_optim.pt, from DP rank 0.
  for (const auto& [layout, zero, pt_count] :
       {std::tuple{"deepspeed", "2", 3u}, std::tuple{"megatron", "1", 2u}}) {
    SCOPED_TRACE(layout);
    const Scratch dir;
    const fs::path campaign = dir.write(
        "c.toml", campaign_toml("pt", dir / "target",
                                "create_target = true\niterations = 1\nwarmup = 0\nkeep = true\n"
                                "[model]\nname = \"llama3-8b\"\nscale = 4096\n[parallel]\ndp = 2\n"
                                "zero = " +
                                    std::string(zero) +
                                    "\n[cache]\npolicy = \"none\"\n[strategy]\nlayout = \"" +
                                    layout + "\"\n"));
    const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    const Outcome listing = ckptbench({"layout", "--model", "llama3-8b", "--dp", "2", "--zero",
                                       zero, "--files", "--layout", layout, "--json"});
    ASSERT_EQ(listing.exit_code, 0) << listing.describe();
    const fs::path step = latest_checkpoint(dir / "target" / "pt" / "case-0000");
    std::size_t pt_files = 0;
    const nlohmann::json listed_files = nlohmann::json::parse(listing.out);
    for (const auto& f : listed_files.at("files")) {
      const std::string path = f.at("path").get<std::string>();
      const auto listed = static_cast<double>(f.at("bytes").get<std::uint64_t>());
      ASSERT_TRUE(fs::exists(step / path)) << path;
      const auto written = static_cast<double>(fs::file_size(step / path));
      if (path.ends_with(".pt")) {
        EXPECT_NEAR(written, listed / 4096, listed / 4096 / 1000) << path;
        ++pt_files;
      } else {
        EXPECT_EQ(written, listed) << path;
      }
    }
    EXPECT_EQ(pt_files, pt_count);
    const auto results = read_results(dir / "out");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].at("verified"), true);
  }
}

}  // namespace
}  // namespace ckpt::integration
