// Campaigns through the s3 backend against a real S3 server (moto's, started by run_with_moto.sh
// with CKPT_TEST_S3_* and AWS_* in the environment): checkpoints written, kept, retired and
// restored verified with nothing of them on local disk, the bucket's keys exact, and the requests
// counted in results.jsonl, exactly.
#include <string>
#include <utility>
#include <vector>

#include "tests/backends/s3/s3_campaign_support.hpp"

namespace ckpt::integration {
namespace {

// `checkpoints` committed checkpoints of record `r`, each seen by another connection within the
// 10 s the look polls.
void expect_seen(const nlohmann::json& r, std::size_t checkpoints) {
  ASSERT_TRUE(r.contains("checkpoint_visible_seconds")) << r.dump();
  const std::vector<double> visible = r.at("checkpoint_visible_seconds");
  EXPECT_EQ(visible.size(), checkpoints) << r.dump();
  for (const double seconds : visible) {
    EXPECT_GT(seconds, 0.0);
    EXPECT_LT(seconds, 10.0);
  }
}

// Each iteration writes the rank's one data file as one PUT (it is below the part size) and reads
// it back as one ranged GET; nothing is retried or throttled on a local server.
TEST_F(S3Campaign, WriteAndRestoreVerifyAndCountEveryRequest) {
  const std::vector<nlohmann::json> records = run("counted", 2);
  ASSERT_EQ(records.size(), 1u);
  const nlohmann::json& r = records[0];
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& write = r.at("phases").at("write").at("counters");
  const nlohmann::json& read = r.at("phases").at("read").at("counters");
  EXPECT_EQ(write.at("requests.put"), 2) << write.dump();
  EXPECT_EQ(write.at("requests.part"), 0);
  EXPECT_EQ(write.at("requests.ranged_get"), 0);
  EXPECT_EQ(read.at("requests.ranged_get"), 2) << read.dump();
  EXPECT_EQ(read.at("requests.put"), 0);
  // Each ranged GET's time to its first byte is summed: more than nothing, less than a second.
  EXPECT_GT(read.at("first_byte_us").get<std::uint64_t>(), 0u) << read.dump();
  EXPECT_LT(read.at("first_byte_us").get<std::uint64_t>(), 2'000'000u) << read.dump();
  EXPECT_EQ(write.at("first_byte_us"), 0);
  for (const nlohmann::json* counters : {&write, &read}) {
    EXPECT_EQ(counters->at("retries"), 0);
    EXPECT_EQ(counters->at("throttled"), 0);
  }
  // Each committed checkpoint was seen by another connection (a LIST and a GET on a store with
  // read-after-write consistency), and the report shows the median beside the write's phases.
  expect_seen(r, 2);
  const Outcome report = ckptbench({"report", run_directory(dir_ / "out-counted").string()});
  EXPECT_EQ(report.exit_code, 0) << report.describe();
  EXPECT_TRUE(contains(report.out, "w.visible")) << report.out;
  EXPECT_TRUE(
      contains(report.out, "w.visible: from the commit until another process saw the checkpoint"))
      << report.out;
  // One checkpoint's and one restore's requests by kind, for pricing.
  const Outcome markdown =
      ckptbench({"report", run_directory(dir_ / "out-counted").string(), "--markdown"});
  EXPECT_TRUE(contains(markdown.out, "## Requests (object storage)")) << markdown.out;
  EXPECT_TRUE(contains(markdown.out,
                       "| write | checkpoint | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - |"))
      << markdown.out;
  EXPECT_TRUE(contains(markdown.out,
                       "| read | restore or load | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | "))
      << markdown.out;
}

// A kept [training] run in the Megatron layout, its checkpoints flushed in the background (the
// async engine): each checkpoint committed (data, then manifest, then `latest` and
// latest_checkpointed_iteration.txt) retires the one before it by batched deletes, so the bucket
// holds exactly the newest checkpoint and its pointers, and the local disk nothing (no target
// directory at all). A restore in a new process then finds it through
// the pointers and verifies it. The store lists the case once for the target check, twice under
// the lock (its objects, its unfinished multipart uploads), and once per retired checkpoint; no
// process lists anything else.
TEST_F(S3Campaign, KeptTrainingCheckpointsRetireTheirObjectsAndRestoreFromTheBucket) {
  const std::string keys = R"(keep = true
iterations = 1
warmup = 0
[strategy]
layout = "megatron"
[training]
iterations = 3
iteration_seconds = 0.01
checkpoint_every = 1
[engine]
name = "async"
)";
  const Outcome written = run_campaign("kept", keys, {"--phase", "checkpoint"});
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  EXPECT_FALSE(fs::exists(target())) << "nothing of the checkpoint on local disk";
  const std::vector<std::string> expected{"iter_0000003/ckptbench-manifest.json",
                                          "iter_0000003/mp_rank_00/model_optim_rng.pt", "latest",
                                          "latest_checkpointed_iteration.txt"};
  EXPECT_EQ(case_objects("kept"), expected);
  const std::vector<nlohmann::json> records = read_results(dir_ / "out-kept");
  ASSERT_EQ(records.size(), 1u);
  const nlohmann::json& w = records[0];
  EXPECT_EQ(w.at("status"), "ok") << w.dump();
  // Process 0's store: listed for the target, under the lock (the case's objects and its
  // unfinished multipart uploads) and per retired checkpoint; the lock, then per checkpoint its
  // manifest and both pointers written (and both once more as the loop ends), each pointer read
  // before it is replaced; two deletes per retired checkpoint.
  const nlohmann::json& store = w.at("store_requests");
  EXPECT_EQ(store.at("requests.list"), 5) << store.dump();
  EXPECT_EQ(store.at("requests.put"), 12);
  EXPECT_EQ(store.at("requests.get"), 7);
  EXPECT_EQ(store.at("requests.delete"), 4);
  // The background flushes: one PUT of the rank's file per checkpoint, nothing listed.
  const nlohmann::json& flushed = w.at("training").at("counters");
  EXPECT_EQ(flushed.at("requests.put"), 3) << flushed.dump();
  EXPECT_EQ(flushed.at("requests.list"), 0);
  // Each checkpoint the background flush committed (on the flush thread: one process) was seen
  // by another connection, as the write phase's are; its LIST and GET are in neither count above.
  expect_seen(w, 3);

  const Outcome restored = run_campaign("kept", keys, {"--phase", "restore"}, "restored");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  EXPECT_FALSE(fs::exists(target()));
  EXPECT_EQ(case_objects("kept"), expected) << "a restore changes nothing, its lock object gone";
  const std::vector<nlohmann::json> reads = read_results(dir_ / "out-restored");
  ASSERT_EQ(reads.size(), 1u);
  const nlohmann::json& r = reads[0];
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("store_requests").at("requests.list"), 0) << r.dump();
}

// Two processes, the lazy engine: each checkpoint is committed by the loop after both flushes
// ended (a collective on the main thread), then process 1 looks for it.
TEST_F(S3Campaign, LazyTrainingCheckpointsOfTwoProcessesAreSeenByTheOther) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::string keys = R"(keep = true
iterations = 1
warmup = 0
[parallel]
tp = 2
[training]
iterations = 2
iteration_seconds = 0.01
checkpoint_every = 1
[engine]
name = "lazy"
)";
  const Outcome written = run_campaign("lazy", keys, {"--phase", "checkpoint"}, "", 2);
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const nlohmann::json w = read_results(dir_ / "out-lazy").at(0);
  ASSERT_EQ(w.at("status"), "ok") << w.dump();
  EXPECT_EQ(w.at("training").at("checkpoints").size(), 2u);
  expect_seen(w, 2);
  EXPECT_EQ(w.at("training").at("counters").at("requests.list"), 0) << "the looks are not flushes";
}

// Four processes, one modeled rank each (TP 2, PP 2): each writes its rank's file as one PUT per
// checkpoint, process 0 alone lists and commits, and the second checkpoint retires the first. A
// restore into TP 1 (DP 2: a rank a process) and a load at TP 1 then read only what they need
// with ranged GETs, and list nothing. Every request is counted, exactly.
TEST_F(S3Campaign, FourProcessesWriteRestoreReshardedAndLoadCountingEveryRequest) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::string keys = kFourRanksKept;
  const Outcome written = run_campaign("four", keys, {"--phase", "checkpoint"}, "", 4);
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  EXPECT_FALSE(fs::exists(target()));
  const std::vector<std::string> expected{"latest",
                                          "step_0000002/.metadata",
                                          "step_0000002/__0_0.distcp",
                                          "step_0000002/__1_0.distcp",
                                          "step_0000002/__2_0.distcp",
                                          "step_0000002/__3_0.distcp",
                                          "step_0000002/ckptbench-manifest.json"};
  EXPECT_EQ(case_objects("four"), expected);
  const nlohmann::json w = read_results(dir_ / "out-four").at(0);
  ASSERT_EQ(w.at("status"), "ok") << w.dump();
  const nlohmann::json& data = w.at("phases").at("write").at("counters");
  EXPECT_EQ(data.at("requests.put"), 8) << data.dump();  // 4 files, 2 checkpoints
  EXPECT_EQ(data.at("requests.list"), 0);
  EXPECT_EQ(data.at("requests.get"), 0);
  const nlohmann::json& store = w.at("store_requests");
  // Listed for the target, under the lock (objects and unfinished multipart uploads) and to retire
  // checkpoint 1; the lock, then per
  // checkpoint .metadata, manifest and latest written; `latest` read first, then the pointers
  // read before each is replaced; checkpoint 1's manifest deleted, then its other objects.
  EXPECT_EQ(store.at("requests.list"), 4) << store.dump();
  EXPECT_EQ(store.at("requests.put"), 7);
  EXPECT_EQ(store.at("requests.get"), 5);
  EXPECT_EQ(store.at("requests.delete"), 2);
  EXPECT_EQ(w.at("checkpoint_visible_seconds").size(), 2u) << "seen by process 1, each";

  const Outcome restored = run_campaign("four", keys + "[restore]\ntp = 1\ndp = 2\n",
                                        {"--phase", "restore"}, "restored", 4);
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir_ / "out-restored").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& reads = r.at("phases").at("read").at("counters");
  EXPECT_EQ(reads.at("requests.list"), 0) << reads.dump();
  EXPECT_EQ(reads.at("requests.put"), 0);
  // Each of the 4 new ranks (its stage's whole TP 1 shards) reads its stage's 2 stored files,
  // the ranges of one file coalesced into one GET.
  EXPECT_EQ(reads.at("requests.ranged_get"), 8);
  // The restore's lock object and the search: no listing at all.
  EXPECT_EQ(r.at("store_requests").at("requests.list"), 0);
  EXPECT_EQ(r.at("store_requests").at("requests.get"), 3);  // the lock, latest, the manifest

  const Outcome loaded =
      run_campaign("four", keys + "[load]\ntp = 1\n", {"--phase", "load"}, "loaded", 4);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
  const nlohmann::json l = read_results(dir_ / "out-loaded").at(0);
  EXPECT_EQ(l.at("status"), "ok") << l.dump();
  EXPECT_EQ(l.at("verified"), true);
  const nlohmann::json& load = l.at("phases").at("read").at("counters");
  // The one inference rank's loader reads each of the 4 files as one chunk (4 preads through
  // posix); a chunk's ranges that are not adjacent in the object are GETs of their own: 8.
  EXPECT_EQ(load.at("requests.ranged_get"), 8) << load.dump();
  EXPECT_EQ(load.at("requests.get"), 0);
  EXPECT_EQ(load.at("requests.list"), 0);
  EXPECT_EQ(case_objects("four"), expected) << "restore and load change nothing";
}

// Four processes (TP 2, PP 2) checkpoint in a [training] loop whose async engine flushes each
// checkpoint in the background: each process PUTs its rank's file per checkpoint, process 0 alone
// commits. The newest checkpoint then restores in the same layout, each process reading its own
// file with one ranged GET (its tensors back to back, strategy.framing = "off"; with torch.save's
// framing between them each tensor is a GET of its own, as DCP reads item by item), verified,
// listing nothing.
TEST_F(S3Campaign, FourProcessesCheckpointWithTheAsyncEngineAndRestoreInTheSameLayout) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::string keys = R"(keep = true
iterations = 1
warmup = 0
[parallel]
tp = 2
pp = 2
[training]
iterations = 4
iteration_seconds = 0.01
checkpoint_every = 2
[engine]
name = "async"
[strategy]
framing = "off"
)";
  const Outcome written = run_campaign("async4", keys, {"--phase", "checkpoint"}, "", 4);
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const nlohmann::json w = read_results(dir_ / "out-async4").at(0);
  ASSERT_EQ(w.at("status"), "ok") << w.dump();
  const nlohmann::json& flushed = w.at("training").at("counters");
  EXPECT_EQ(flushed.at("requests.put"), 8) << flushed.dump();  // 4 files, 2 checkpoints
  EXPECT_EQ(flushed.at("requests.list"), 0);
  EXPECT_EQ(flushed.at("requests.get"), 0);
  EXPECT_EQ(w.at("training").at("checkpoints").size(), 2u) << w.dump();

  const Outcome restored = run_campaign("async4", keys, {"--phase", "restore"}, "restored", 4);
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir_ / "out-restored").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  // The loop's checkpoints are named by their iteration: the newest is iteration 4's.
  EXPECT_EQ(r.at("checkpoint_dir"), (case_dir("async4") / "step_0000004").string());
  const nlohmann::json& reads = r.at("phases").at("read").at("counters");
  EXPECT_EQ(reads.at("requests.ranged_get"), 4) << reads.dump();
  EXPECT_EQ(reads.at("requests.list"), 0);
  EXPECT_EQ(r.at("store_requests").at("requests.list"), 0);
}

// The case lock of an object store is an object: while another run's is there, a keeping run
// stops before any data moves (exit 2), naming the holder and the object to delete if that run is
// gone; once it is deleted the run goes ahead and removes its own at the end.
TEST_F(S3Campaign, AnotherRunsLockObjectKeepsAKeepingRunOut) {
  const auto backend = bucket("locked");
  auto* store = dynamic_cast<backends::ObjectStore*>(backend.get());
  const std::string lock = (case_dir("locked") / ".ckptbench.lock").string();
  store->put(lock, "elsewhere 4242\n");
  const std::string keys = "keep = true\niterations = 1\nwarmup = 0\n";
  const Outcome refused = run_campaign("locked", keys, {"--phase", "checkpoint"});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_TRUE(contains(refused.err,
                       "in use by another ckptbench run (host elsewhere, pid 4242), "
                       "which holds the object " +
                           lock))
      << refused.err;
  EXPECT_EQ(case_objects("locked"), std::vector<std::string>{".ckptbench.lock"});
  store->remove({lock});
  const Outcome written = run_campaign("locked", keys, {"--phase", "checkpoint"}, "again");
  EXPECT_EQ(written.exit_code, 0) << written.describe();
  const std::vector<std::string> expected{"latest", "step_0000001/.metadata",
                                          "step_0000001/__0_0.distcp",
                                          "step_0000001/ckptbench-manifest.json"};
  EXPECT_EQ(case_objects("locked"), expected);
}

// Bad configuration stops a run before any data moves: one message naming what to fix, exit 2,
// no object written. The credentials appear in no message.
TEST_F(S3Campaign, BadConfigurationIsRefusedWithExit2BeforeAnyDataMoves) {
  const std::string keys = "create_target = true\niterations = 1\nwarmup = 0\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad{
      {{"--set", "backend.s3.endpoint=http://127.0.0.1:1", "--set", "backend.s3.retries=0"},
       "s3: cannot reach backend.s3.endpoint \"http://127.0.0.1:1\""},
      {{"--set", "backend.s3.bucket=no-such-bucket"}, "bucket `no-such-bucket` does not exist"},
      {{"--set", "backend.s3.part_size=5242879"}, "`backend.s3.part_size`"}};
  for (const auto& [set, message] : bad) {
    const Outcome o = run_campaign("bad", keys, set);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    const std::size_t first = o.err.find(message);
    EXPECT_NE(first, std::string::npos) << o.err;
    EXPECT_EQ(o.err.find(message, first + 1), std::string::npos) << "said once: " << o.err;
  }
  const std::string secret = environment("AWS_SECRET_ACCESS_KEY");
  ::setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
  const Outcome refused = run_campaign("bad", keys);
  ::setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_TRUE(contains(refused.err, "refused the credentials")) << refused.err;
  EXPECT_FALSE(contains(refused.err, "not-the-secret")) << refused.err;
  EXPECT_TRUE(case_objects("bad").empty());
}

}  // namespace
}  // namespace ckpt::integration
