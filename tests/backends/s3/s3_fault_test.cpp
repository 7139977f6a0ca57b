// Faults of a real S3 server (moto's), injected by fault_proxy.py in front of it: a server that
// stops in the middle of a multipart upload, 503 SlowDown answers, slow answers, and objects
// deleted or truncated behind the benchmark's back. Nothing incomplete is called complete (the
// exit status, no manifest, `latest` unchanged), retries and back-off are counted in results, and
// the previous checkpoint still restores.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tests/backends/s3/s3_campaign_support.hpp"

namespace ckpt::integration {
namespace {

const std::string kKept = "keep = true\niterations = 1\nwarmup = 0\n";

class S3Faults : public S3Campaign {
 protected:
  void SetUp() override {
    S3Campaign::SetUp();
    if (!IsSkipped() && environment("CKPT_TEST_S3_PROXY").empty())
      GTEST_SKIP() << "no fault proxy: run through tests/backends/s3/run_with_moto.sh";
  }
  void TearDown() override { faults(""); }

  // --set of the proxy's endpoint and of `retries` quick retries.
  static std::vector<std::string> through_proxy(std::vector<std::string> more, int retries) {
    more.insert(more.end(), {"--set", "backend.s3.endpoint=" + environment("CKPT_TEST_S3_PROXY"),
                             "--set", "backend.s3.retries=" + std::to_string(retries), "--set",
                             "backend.s3.backoff_ms=1"});
    return more;
  }
  // The bucket's primitives under prefix `name`.
  static backends::ObjectStore& objects(const std::unique_ptr<backends::Backend>& backend) {
    return *dynamic_cast<backends::ObjectStore*>(backend.get());
  }
};

// The server stops after the first part of checkpoint 2's multipart upload: the run fails (exit 1)
// saying what failed, writes no manifest and leaves `latest` at checkpoint 1. Its lock object
// stays (the server was gone when the run let go of it), and a restore names it as left by a run
// that is gone; once it is deleted, checkpoint 1 restores and verifies, and the next writing run
// aborts the stopped run's multipart upload.
TEST_F(S3Faults, AServerThatStopsMidUploadLeavesNoCompleteCheckpointAndThePreviousRestores) {
  const fs::path model = dir_.write("parted.toml", kPartedModel);
  const std::vector<std::string> parted{"--set", "model.name=" + model.string(), "--set",
                                        "backend.s3.part_size=5242880"};
  std::vector<std::string> write = parted;
  write.insert(write.end(), {"--phase", "checkpoint"});
  const Outcome first = run_campaign("stop", kKept, write);
  ASSERT_EQ(first.exit_code, 0) << first.describe();

  faults("stop 1 partNumber=\n");
  std::vector<std::string> again = through_proxy(write, 1);
  again.insert(again.end(), {"--set", "campaign.overwrite=true"});
  const Outcome stopped = run_campaign("stop", kKept, again, "stopped");
  faults("");
  EXPECT_EQ(stopped.exit_code, 1) << stopped.describe();
  const nlohmann::json failed = read_results(dir_ / "out-stopped").at(0);
  EXPECT_EQ(failed.at("status"), "failed") << failed.dump();
  EXPECT_TRUE(contains(failed.at("error"), "step_0000002/__0_0.distcp")) << failed.dump();
  const auto backend = bucket("stop");
  const std::string case_path = case_dir("stop").string();
  EXPECT_EQ(objects(backend).get(case_path + "/step_0000002/ckptbench-manifest.json"),
            std::nullopt);
  const std::optional<std::string> latest = objects(backend).get(case_path + "/latest");
  EXPECT_TRUE(latest && latest->starts_with("step_0000001")) << latest.value_or("(none)");

  std::vector<std::string> restore = parted;
  restore.insert(restore.end(), {"--phase", "restore"});
  const Outcome refused = run_campaign("stop", kKept, restore, "refused");
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  // The run that left the lock ran on this host and is gone: the refusal says so.
  EXPECT_TRUE(contains(refused.err, "is locked by the object " + case_path +
                                        "/.ckptbench.lock, left behind by a ckptbench run"))
      << refused.err;
  EXPECT_TRUE(contains(refused.err, "no longer runs on this host")) << refused.err;
  objects(backend).remove({case_path + "/.ckptbench.lock"});
  const Outcome restored = run_campaign("stop", kKept, restore, "restored");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir_ / "out-restored").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("checkpoint_dir"), case_path + "/step_0000001");
  // The stopped writer's multipart upload stayed open. The next writing run, holding the case,
  // aborts it and says so.
  std::vector<std::string> overwrite = write;
  overwrite.insert(overwrite.end(), {"--set", "campaign.overwrite=true"});
  const Outcome next = run_campaign("stop", kKept, overwrite, "next");
  ASSERT_EQ(next.exit_code, 0) << next.describe();
  const nlohmann::json notes = read_results(dir_ / "out-next").at(0).at("notes");
  const std::string aborted =
      "aborted 1 unfinished multipart uploads that an earlier run left under " + case_path;
  EXPECT_NE(std::find(notes.begin(), notes.end(), aborted), notes.end()) << notes.dump();
  EXPECT_EQ(objects(backend).abort_uploads(case_path + "/"), 0u);
}

// Two 503 SlowDown answers to the data object's PUT are retried after back-off (at most 1 ms,
// then 2 ms) and counted; a slow server's answers (100 ms a GET) show in the request latency. Both
// runs verify.
TEST_F(S3Faults, ThrottledAndSlowAnswersAreRetriedCountedAndTimed) {
  faults("slowdown 2 /__0_0.distcp\n");
  const Outcome throttled = run_campaign(
      "slow", "create_target = true\niterations = 1\nwarmup = 0\n", through_proxy({}, 3));
  ASSERT_EQ(throttled.exit_code, 0) << throttled.describe();
  const nlohmann::json t = read_results(dir_ / "out-slow").at(0);
  EXPECT_EQ(t.at("verified"), true) << t.dump();
  const nlohmann::json& write = t.at("phases").at("write").at("counters");
  EXPECT_EQ(write.at("requests.put"), 3) << write.dump();
  EXPECT_EQ(write.at("retries"), 2);
  EXPECT_EQ(write.at("throttled"), 2);
  EXPECT_LE(write.at("backoff_us").get<std::uint64_t>(), 3000u);
  EXPECT_EQ(t.at("phases").at("read").at("counters").at("retries"), 0);

  faults("delay 100 GET /\n");
  const Outcome slow = run_campaign("slow", "create_target = true\niterations = 1\nwarmup = 0\n",
                                    through_proxy({"--set", "measure.latency=true"}, 0), "delayed");
  ASSERT_EQ(slow.exit_code, 0) << slow.describe();
  const nlohmann::json d = read_results(dir_ / "out-delayed").at(0);
  EXPECT_EQ(d.at("verified"), true) << d.dump();
  EXPECT_GE(d.at("latency").at("read").at("min_seconds").get<double>(), 0.1) << d.dump();
}

// An object of a complete checkpoint truncated, then deleted, behind the benchmark's back: each
// restore fails (exit 1) naming the object and what the server answered, and calls nothing
// verified.
TEST_F(S3Faults, ATruncatedOrDeletedObjectFailsTheRestoreNamingIt) {
  const Outcome written = run_campaign("gone", kKept, {"--phase", "checkpoint"});
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const auto backend = bucket("gone");
  const std::string object = (case_dir("gone") / "step_0000001" / "__0_0.distcp").string();
  const std::string bytes = objects(backend).get(object).value_or("");
  ASSERT_GT(bytes.size(), 1000u);
  objects(backend).put(object, std::string_view(bytes).substr(0, 1000));
  const std::string name = "s3://" + environment("CKPT_TEST_S3_BUCKET") + "/gone" + object;

  const Outcome truncated = run_campaign("gone", kKept, {"--phase", "restore"}, "truncated");
  EXPECT_EQ(truncated.exit_code, 1) << truncated.describe();
  const nlohmann::json t = read_results(dir_ / "out-truncated").at(0);
  EXPECT_EQ(t.at("status"), "failed");
  EXPECT_NE(t.value("verified", false), true);
  EXPECT_TRUE(contains(t.at("error"), name)) << t.dump();
  EXPECT_TRUE(contains(t.at("error"), "object shorter than the plan (")) << t.dump();

  objects(backend).remove({object});
  const Outcome deleted = run_campaign("gone", kKept, {"--phase", "restore"}, "deleted");
  EXPECT_EQ(deleted.exit_code, 1) << deleted.describe();
  const nlohmann::json g = read_results(dir_ / "out-deleted").at(0);
  EXPECT_EQ(g.at("status"), "failed");
  EXPECT_TRUE(contains(g.at("error"), name)) << g.dump();
  EXPECT_TRUE(contains(g.at("error"), "HTTP 404 NoSuchKey")) << g.dump();
}

}  // namespace
}  // namespace ckpt::integration
