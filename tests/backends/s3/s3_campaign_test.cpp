// Campaigns through the s3 backend against a real S3 server (moto's, started by run_with_moto.sh
// with CKPT_TEST_S3_* and AWS_* in the environment): checkpoints written, kept, retired and
// restored verified with nothing of them on local disk, the bucket's keys exact, and the requests
// counted in results.jsonl, exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/object_store.hpp"
#include "backends/registry.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

class S3Campaign : public ::testing::Test {
 protected:
  void SetUp() override {
    if (environment("CKPT_TEST_S3_ENDPOINT").empty())
      GTEST_SKIP() << "no S3 server: run through tests/backends/s3/run_with_moto.sh";
  }

  // The tiny model's full state, one rank, file per rank, through s3 under a prefix of its own
  // (`name`), the campaign's own keys after its [campaign] table in `rest`; results under
  // out-`output`.
  // `processes` > 0: under mpirun with that many processes.
  Outcome run_campaign(const std::string& name, const std::string& rest,
                       const std::vector<std::string>& more = {}, std::string output = "",
                       int processes = 0) {
    if (output.empty()) output = name;
    const fs::path model = dir_.write("tiny.toml", kTinyModel);
    const fs::path file = dir_.write(name + ".toml", campaign_toml(name, target(), rest + R"(
[model]
name = ")" + model.string() + R"("
[state]
scope = "full"
[cache]
policy = "none"
[backend]
name = "s3"
)"));
    std::vector<std::string> args{"run",
                                  file.string(),
                                  "--output",
                                  (dir_ / ("out-" + output)).string(),
                                  "-q",
                                  "--set",
                                  "backend.s3.endpoint=" + environment("CKPT_TEST_S3_ENDPOINT"),
                                  "--set",
                                  "backend.s3.bucket=" + environment("CKPT_TEST_S3_BUCKET"),
                                  "--set",
                                  "backend.s3.region=" + environment("CKPT_TEST_S3_REGION"),
                                  "--set",
                                  "backend.s3.prefix=" + name};
    args.insert(args.end(), more.begin(), more.end());
    if (processes == 0) return ckptbench(args);
    std::vector<std::string> argv = mpirun_args(*find_mpirun(), processes);
    argv.push_back(kBinary);
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, std::chrono::seconds(240));
  }

  std::vector<nlohmann::json> run(const std::string& name, int iterations) {
    const Outcome o =
        run_campaign(name, "create_target = true\niterations = " + std::to_string(iterations) +
                               "\nwarmup = 0\n");
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    return read_results(dir_ / ("out-" + name));
  }

  fs::path target() const { return dir_ / "target"; }

  // The bucket under prefix `name`, through the backend's own primitives.
  static std::unique_ptr<backends::Backend> bucket(const std::string& name) {
    return backends::make_backend("s3", {},
                                  {{"endpoint", environment("CKPT_TEST_S3_ENDPOINT")},
                                   {"bucket", environment("CKPT_TEST_S3_BUCKET")},
                                   {"region", environment("CKPT_TEST_S3_REGION")},
                                   {"prefix", name}});
  }
  fs::path case_dir(const std::string& name) const { return target() / name / "case-0000"; }

  // The objects under case 0 of campaign `name` (written under prefix `name`), by their path
  // below the case directory, in key order.
  std::vector<std::string> case_objects(const std::string& name) const {
    const auto backend = bucket(name);
    auto* store = dynamic_cast<backends::ObjectStore*>(backend.get());
    const std::string folder = case_dir(name).string() + "/";
    std::vector<std::string> paths;
    for (const backends::StoredObject& o : store->list(folder))
      paths.push_back(o.path.substr(folder.size()));
    return paths;
  }

  Scratch dir_;
};

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
  for (const nlohmann::json* counters : {&write, &read}) {
    EXPECT_EQ(counters->at("retries"), 0);
    EXPECT_EQ(counters->at("throttled"), 0);
  }
}

// A kept [training] run in the Megatron layout, its checkpoints flushed in the background (the
// async engine): each checkpoint committed (data, then manifest, then `latest` and
// latest_checkpointed_iteration.txt) retires the one before it by batched deletes, so the bucket
// holds exactly the newest checkpoint and its pointers, and the local disk nothing (no target
// directory at all). A restore in a new process then finds it through
// the pointers and verifies it. The store lists the case once for the target check and once
// under the lock, and once per retired checkpoint; no process lists anything else.
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
  // Process 0's store: listed for the target, under the lock and per retired checkpoint; the
  // lock, then per checkpoint its manifest and both pointers written (and both once more as the
  // loop ends), each pointer read before it is replaced; two deletes per retired checkpoint.
  const nlohmann::json& store = w.at("store_requests");
  EXPECT_EQ(store.at("requests.list"), 4) << store.dump();
  EXPECT_EQ(store.at("requests.put"), 12);
  EXPECT_EQ(store.at("requests.get"), 7);
  EXPECT_EQ(store.at("requests.delete"), 4);
  // The background flushes: one PUT of the rank's file per checkpoint, nothing listed.
  const nlohmann::json& flushed = w.at("training").at("counters");
  EXPECT_EQ(flushed.at("requests.put"), 3) << flushed.dump();
  EXPECT_EQ(flushed.at("requests.list"), 0);

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

// Four processes, one modeled rank each (TP 2, PP 2): each writes its rank's file as one PUT per
// checkpoint, process 0 alone lists and commits, and the second checkpoint retires the first. A
// restore into TP 1 (DP 2: a rank a process) and a load at TP 1 then read only what they need
// with ranged GETs, and list nothing. Every request is counted, exactly.
TEST_F(S3Campaign, FourProcessesWriteRestoreReshardedAndLoadCountingEveryRequest) {
  if (!find_mpirun()) GTEST_SKIP() << "no mpirun on PATH";
  const std::string keys = R"(keep = true
iterations = 2
warmup = 0
[parallel]
tp = 2
pp = 2
)";
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
  // Listed for the target, under the lock and to retire checkpoint 1; the lock, then per
  // checkpoint .metadata, manifest and latest written; `latest` read first, then the pointers
  // read before each is replaced; checkpoint 1's manifest deleted, then its other objects.
  EXPECT_EQ(store.at("requests.list"), 3) << store.dump();
  EXPECT_EQ(store.at("requests.put"), 7);
  EXPECT_EQ(store.at("requests.get"), 5);
  EXPECT_EQ(store.at("requests.delete"), 2);

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

}  // namespace
}  // namespace ckpt::integration
