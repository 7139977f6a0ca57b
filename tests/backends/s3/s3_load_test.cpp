// Safetensors checkpoints and `ckptbench load` through the s3 backend against a real S3 server:
// the manifest, the files' sizes, the headers and the index read through the object store, every
// load verified and its requests counted, and what is not a checkpoint refused before any data
// moves.
#include "tests/backends/s3/s3_campaign_support.hpp"

namespace ckpt::integration {
namespace {

// The tiny model's weights (21 bf16 tensors, 213632 bytes) in three Hugging Face shards of at most
// 100000 bytes each, with their index.
const std::string kSafetensors = R"(keep = true
iterations = 1
warmup = 0
[strategy]
format = "safetensors"
max_shard_bytes = 100000
)";

class S3Load : public S3Campaign {
 protected:
  // `more` and --set state.scope=weights.
  static std::vector<std::string> weights(std::vector<std::string> more) {
    more.insert(more.end(), {"--set", "state.scope=weights"});
    return more;
  }
  // Writes the checkpoint under prefix `name`; its objects' path.
  fs::path write_checkpoint(const std::string& name) {
    const Outcome o = run_campaign(name, kSafetensors, weights({"--phase", "checkpoint"}));
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    return case_dir(name) / "step_0000001";
  }
  // `ckptbench load CHECKPOINT --backend s3` with the server's options and `more`.
  static Outcome load(const std::string& name, const fs::path& checkpoint,
                      const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{"load", checkpoint.string(), "--backend", "s3"};
    for (const std::string& arg : server_options(name)) args.push_back(arg);
    args.insert(args.end(), more.begin(), more.end());
    return ckptbench(args);
  }
};

// The write puts each shard and the index as objects; a restore and a load in new processes check
// every header and the index through the store (one listing for the sizes, two ranged GETs a
// header: its length word, then the rest) before they read and verify the tensors.
TEST_F(S3Load, SafetensorsCheckpointsRestoreAndLoadWithTheirHeadersReadFromTheStore) {
  write_checkpoint("st");
  EXPECT_FALSE(fs::exists(target()));
  const std::vector<std::string> expected{"latest",
                                          "step_0000001/ckptbench-manifest.json",
                                          "step_0000001/model-00001-of-00003.safetensors",
                                          "step_0000001/model-00002-of-00003.safetensors",
                                          "step_0000001/model-00003-of-00003.safetensors",
                                          "step_0000001/model.safetensors.index.json"};
  EXPECT_EQ(case_objects("st"), expected);

  const Outcome restored =
      run_campaign("st", kSafetensors, weights({"--phase", "restore"}), "restored");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir_ / "out-restored").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& store = r.at("store_requests");
  EXPECT_EQ(store.at("requests.list"), 1) << store.dump();
  EXPECT_EQ(store.at("requests.ranged_get"), 6);
  // The restore's lock object and its check, `latest`, the manifest, the index.
  EXPECT_EQ(store.at("requests.get"), 4);
  EXPECT_EQ(r.at("phases").at("read").at("counters").at("requests.ranged_get"), 3);

  const Outcome loaded =
      run_campaign("st", kSafetensors + "[load]\ntp = 2\n", weights({"--phase", "load"}), "loaded");
  ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
  const nlohmann::json l = read_results(dir_ / "out-loaded").at(0);
  EXPECT_EQ(l.at("status"), "ok") << l.dump();
  EXPECT_EQ(l.at("verified"), true);
  EXPECT_EQ(case_objects("st"), expected) << "restore and load change nothing";
}

// `ckptbench load` reads the manifest, the sizes, the headers and the index from the store, then
// the files whole (one ranged GET each: a chunk holds a whole file) or the slices of --tp 2, and
// verifies them; it refuses what is not a checkpoint of the store.
TEST_F(S3Load, TheLoadCommandLoadsACheckpointOfTheStoreAndRefusesWhatIsNone) {
  const fs::path checkpoint = write_checkpoint("cmd");
  const Outcome whole = load("cmd", checkpoint);
  ASSERT_EQ(whole.exit_code, 0) << whole.describe();
  EXPECT_TRUE(contains(whole.out, "from 3 files")) << whole.out;
  EXPECT_TRUE(contains(whole.out, "cache none, backend s3, verified")) << whole.out;
  EXPECT_TRUE(contains(whole.out, "requests.put 0, requests.ranged_get 3, retries 0")) << whole.out;

  const Outcome sliced = load("cmd", checkpoint, {"--tp", "2"});
  ASSERT_EQ(sliced.exit_code, 0) << sliced.describe();
  EXPECT_TRUE(contains(sliced.out, "plan: --tp 2 (PP 1, DP 1, weights)")) << sliced.out;
  EXPECT_TRUE(contains(sliced.out, "verified")) << sliced.out;
  EXPECT_FALSE(fs::exists(target())) << "nothing of the checkpoint on local disk";

  // What is not a checkpoint of the store, and options of another table, are refused with one
  // message and exit 2 before any data moves.
  const Outcome case_dir_given = load("cmd", checkpoint.parent_path());
  EXPECT_EQ(case_dir_given.exit_code, 2) << case_dir_given.describe();
  EXPECT_TRUE(contains(case_dir_given.err, checkpoint.parent_path().string() +
                                               " is a case directory, not a checkpoint: give "
                                               "one of its checkpoints, e.g. the latest, " +
                                               checkpoint.string()))
      << case_dir_given.err;
  const Outcome missing = load("cmd", checkpoint.parent_path() / "step_0000009");
  EXPECT_EQ(missing.exit_code, 2) << missing.describe();
  EXPECT_TRUE(contains(missing.err, "step_0000009/ckptbench-manifest.json: no manifest"))
      << missing.err;
  const Outcome other_table = load("cmd", checkpoint, {"--set", "backend.posix.queue=1"});
  EXPECT_EQ(other_table.exit_code, 2) << other_table.describe();
  EXPECT_TRUE(contains(other_table.err,
                       "--set backend.posix.queue=1: give backend.s3.KEY=VALUE, an option of "
                       "--backend s3"))
      << other_table.err;
  const Outcome no_bucket = load("cmd", checkpoint, {"--set", "backend.s3.bucket=nope"});
  EXPECT_EQ(no_bucket.exit_code, 2) << no_bucket.describe();
  EXPECT_TRUE(contains(no_bucket.err, "bucket `nope` does not exist")) << no_bucket.err;
}

}  // namespace
}  // namespace ckpt::integration
