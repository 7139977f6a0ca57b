// One storage interface serves every phase: a backend that implements the Backend contract —
// skeleton, the template a new backend starts from, and uring where this machine runs it — writes
// and restores a checkpoint, restores it into another layout, loads it as inference weights by
// every load method, and flushes the training loop's checkpoints under each engine, every record
// verified and naming the backend.
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/backend_available.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

class EveryPhase : public ::testing::TestWithParam<std::string> {
 protected:
  // The tiny model's full state through the backend under test, kept, caches left alone.
  std::string campaign(const std::string& name, const std::string& rest) {
    return tiny_full_state_campaign(dir_, name, 1, 0,
                                    "[backend]\nname = \"" + GetParam() + "\"\n" + rest);
  }

  // Runs the campaign with `args`; every record ok, through the backend under test, and verified
  // unless the phase only writes (--phase checkpoint reads nothing back). Returns the records.
  std::vector<nlohmann::json> run(const std::string& name, const std::string& text,
                                  const std::vector<std::string>& args = {}) {
    const fs::path file = dir_.write(name + ".toml", text);
    const fs::path output = dir_ / ("out-" + name + "-" + std::to_string(runs_++));
    std::vector<std::string> argv{"run", file.string(), "--output", output.string(), "-q"};
    argv.insert(argv.end(), args.begin(), args.end());
    const Outcome o = ckptbench(argv);
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    const std::vector<nlohmann::json> records = read_results(output);
    for (const nlohmann::json& r : records) {
      EXPECT_EQ(r.at("status"), "ok") << r.dump();
      EXPECT_EQ(r.at("config").at("backend").at("name"), GetParam());
      if (args.empty() || args[0] != "--phase" || args[1] != "checkpoint") {
        EXPECT_EQ(r.at("verified"), true) << r.dump();
      }
    }
    return records;
  }

  void SetUp() override {
    if (!backend_available(GetParam())) {
      GTEST_SKIP() << "backend " << GetParam() << " is unavailable in this build or machine";
    }
  }

  Scratch dir_;
  int runs_ = 0;
};

TEST_P(EveryPhase, WriteRestoreReshardLoadAndEveryEngineFlushThroughOneBackend) {
  EXPECT_EQ(run("both", campaign("both", "")).size(), 1u);

  const std::string tp2 = campaign("kept", "[parallel]\ntp = 2\n");
  EXPECT_EQ(run("kept", tp2, {"--phase", "checkpoint"}).size(), 1u);
  const std::vector<nlohmann::json> reshard =
      run("kept", tp2, {"--phase", "restore", "--set", "restore.tp=1"});
  ASSERT_EQ(reshard.size(), 1u);
  EXPECT_TRUE(reshard[0].contains("reshard")) << reshard[0].dump();
  const std::vector<nlohmann::json> loads = run("kept", tp2,
                                                {"--phase", "load", "--set", "load.tp=1", "--set",
                                                 R"(load.method=["pipelined","mmap","read"])"});
  EXPECT_EQ(loads.size(), 3u);

  const std::vector<nlohmann::json> training = run("training", campaign("training", R"([training]
iterations = 4
iteration_seconds = 0.01
checkpoint_every = 2
[engine]
name = ["sync", "async", "lazy"]
)"));
  ASSERT_EQ(training.size(), 3u);
  for (const nlohmann::json& r : training)
    EXPECT_EQ(r.at("training").at("checkpoints").size(), 2u) << r.dump();
}

INSTANTIATE_TEST_SUITE_P(Backends, EveryPhase, ::testing::Values("skeleton", "uring"),
                         [](const ::testing::TestParamInfo<std::string>& backend) {
                           return backend.param;
                         });

}  // namespace
}  // namespace ckpt::integration
