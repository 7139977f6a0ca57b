// What a run records beside its bandwidths, end to end: the mkdir and retire phases, where the
// case's wall time went, the command line, every process's host and the straggler per phase
// (one process, and two under mpirun, where another process looks for each checkpoint after its
// commit), and no results directory for a run refused before its first case.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

std::string this_host() {
  std::array<char, 256> name{};
  ::gethostname(name.data(), name.size() - 1);
  return name.data();
}

std::set<std::string> keys_of(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

// Llama 3 8B weights scaled 1024× (15 MiB) as 291 files, kept: each timed checkpoint retires
// the one before it.
std::string kept_campaign(const fs::path& target) {
  return campaign_toml("record", target, R"(create_target = true
keep = true
iterations = 3
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
[state]
scope = "weights"
[strategy]
mapping = "file_per_tensor"
[cache]
policy = "none"
)");
}

TEST(RunRecord, PhasesWallTimeAndProvenanceOfOneProcess) {
  Scratch dir;
  const fs::path campaign = dir.write("record.toml", kept_campaign(dir / "target"));
  const fs::path output = dir / "results";
  const std::vector<std::string> args{kBinary,
                                      "run",
                                      campaign.string(),
                                      "--output",
                                      output.string(),
                                      "--set",
                                      "strategy.mapping=[\"file_per_tensor\"]",
                                      "--units",
                                      "GB"};
  const Outcome o = run_process(args);
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(output);
  ASSERT_EQ(results.size(), 1u) << o.describe();
  const nlohmann::json& r = results[0];
  const std::string host = this_host();
  EXPECT_FALSE(r.contains("checkpoint_visible_seconds")) << "no other process to look from";

  // Phases: mkdir inside the checkpoint, retire beside it, per iteration and as medians.
  EXPECT_EQ(keys_of(r.at("phases").at("write")),
            (std::set<std::string>{"mkdir", "open", "transfer", "sync", "close", "gather",
                                   "metadata", "manifest", "retire"}));
  EXPECT_EQ(keys_of(r.at("phases").at("read")),
            (std::set<std::string>{"open", "transfer", "sync", "close"}));
  const auto& samples = r.at("samples");
  for (const char* key :
       {"write_seconds", "read_seconds", "mkdir_seconds", "manifest_seconds", "retire_seconds"}) {
    ASSERT_EQ(samples.at(key).size(), 3u) << key << ": " << samples.dump();
  }
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_GT(samples.at("mkdir_seconds")[i].get<double>(), 0);
    EXPECT_LT(samples.at("mkdir_seconds")[i].get<double>(),
              samples.at("write_seconds")[i].get<double>());
  }
  // Iterations 2 and 3 each removed the 291 files of the checkpoint before them.
  EXPECT_GT(samples.at("retire_seconds")[1].get<double>(), 0);
  EXPECT_GT(samples.at("retire_seconds")[2].get<double>(), 0);
  EXPECT_GT(r.at("retire_seconds").get<double>(), 0);
  EXPECT_EQ(r.at("retire_seconds"), r.at("phases").at("write").at("retire"));
  std::size_t kept = 0;
  for (const auto& entry : fs::directory_iterator(dir / "target" / "record" / "case-0000"))
    kept += entry.is_directory();
  EXPECT_EQ(kept, 1u) << "superseded checkpoints were not retired";

  // The wall time: disjoint parts of process 0's clock, adding up to no more than the whole.
  const auto& wall = r.at("wall_time");
  double sum = 0;
  for (const auto& [part, seconds] : wall.at("parts").items()) {
    EXPECT_GE(seconds.get<double>(), 0) << part;
    sum += seconds.get<double>();
  }
  EXPECT_EQ(keys_of(wall.at("parts")),
            (std::set<std::string>{"setup", "fill", "checkpoint", "commit", "retire", "cache drop",
                                   "zero buffers", "restore", "verify"}));
  EXPECT_LE(sum, wall.at("seconds").get<double>());
  EXPECT_NEAR(wall.at("covered_seconds").get<double>(), sum, 1e-9);
  EXPECT_GT(wall.at("covered_percent").get<double>(), 0);
  EXPECT_LE(wall.at("covered_percent").get<double>(), 100);
  EXPECT_NEAR(wall.at("covered_percent").get<double>(),
              100 * sum / wall.at("seconds").get<double>(), 1e-9);
  EXPECT_TRUE(contains(o.out, "case 0: phases cover ")) << o.out;
  EXPECT_TRUE(contains(o.out, "write GB/s")) << o.out;
  EXPECT_TRUE(contains(o.out, "GB/s = 10^9 bytes/s")) << o.out;
  EXPECT_TRUE(contains(o.out, "model.scale = 1024: shards 1/1024 of full size")) << o.out;

  // Provenance.
  const auto& env = r.at("environment");
  EXPECT_EQ(env.at("command_line"),
            kBinary + " run " + campaign.string() + " --output " + output.string() +
                " --set 'strategy.mapping=[\"file_per_tensor\"]' --units GB");
  EXPECT_EQ(env.at("hosts"), nlohmann::json::array({host}));
  EXPECT_EQ(env.at("processes_per_host"), nlohmann::json({{host, 1}}));
  const auto& write = r.at("stragglers").at("write");
  EXPECT_EQ(keys_of(write), (std::set<std::string>{"mkdir", "open", "transfer", "sync", "close",
                                                   "total", "manifest"}));
  EXPECT_EQ(keys_of(r.at("stragglers").at("read")),
            (std::set<std::string>{"open", "transfer", "sync", "close", "total"}));
  for (const auto& phases : {write, r.at("stragglers").at("read")}) {
    for (const auto& [phase, s] : phases.items()) {
      EXPECT_EQ(s.at("process"), 0) << phase;
      EXPECT_EQ(s.at("host"), host) << phase;
    }
  }
  // Three iterations: the median iteration is the one whose time is the median.
  EXPECT_EQ(write.at("total").at("seconds"), r.at("write_seconds"));
  EXPECT_EQ(r.at("stragglers").at("read").at("total").at("seconds"), r.at("read_seconds"));

  const std::string csv = read_text(run_directory(output) / "results.csv");
  EXPECT_TRUE(contains(csv, ",scale,iterations,host,time_utc,config_hash,error\n")) << csv;
  EXPECT_TRUE(contains(csv, ",1024,3," + host + "," + env.at("time_utc").get<std::string>() + "," +
                                r.at("config_hash").get<std::string>() + ",\n"))
      << csv;
}

TEST(RunRecord, ARunRefusedBeforeItsFirstCaseLeavesNoResultsDirectory) {
  Scratch dir;
  const fs::path campaign = dir.write(
      "refused.toml", campaign_toml("refused", dir / "absent" / "target", R"(iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
)"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "results").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_FALSE(fs::exists(dir / "results")) << o.describe();
  EXPECT_FALSE(contains(o.out, "results:")) << o.describe();
}

TEST(RunRecord, AnOutputThatCannotHoldResultsIsRefusedBeforeTheFirstCase) {
  Scratch dir;
  const fs::path campaign = dir.write("out.toml", kept_campaign(dir / "target"));
  const fs::path file = dir.write("plain", "not a directory");
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (file / "runs").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "ckptbench: error: --output: cannot make the results directory under " +
                 (file / "runs").string() + ": " + file.string() + " is not a writable directory"))
      << o.describe();
  EXPECT_FALSE(fs::exists(dir / "target")) << "a case started: " << o.describe();
}

TEST(RunRecord, TwoProcessesUnderMpirunListBothAndNameEachStragglersHost) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign =
      dir.write("two.toml", campaign_toml("two", dir / "target", R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 2048
[parallel]
dp = 2
[state]
scope = "weights"
[cache]
policy = "none"
)"));
  const fs::path output = dir / "results";
  std::vector<std::string> args = mpirun_args(*mpirun, 2);
  args.insert(args.end(), {kBinary, "run", campaign.string(), "--output", output.string()});
  const Outcome o = run_process(args, std::chrono::seconds(180));
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(output);
  ASSERT_EQ(results.size(), 1u) << o.describe();
  const nlohmann::json& r = results[0];
  const auto& env = r.at("environment");
  ASSERT_EQ(env.at("hosts").size(), 2u) << env.dump();
  EXPECT_EQ(env.at("hosts")[0], this_host());
  int processes = 0;
  for (const auto& [host, count] : env.at("processes_per_host").items())
    processes += count.get<int>();
  EXPECT_EQ(processes, 2) << env.dump();
  EXPECT_EQ(env.at("command_line"),
            kBinary + " run " + campaign.string() + " --output " + output.string());
  // Process 1 (on this host: no process runs on another) looked for the one timed checkpoint
  // after its commit and found it at once.
  ASSERT_EQ(r.at("checkpoint_visible_seconds").size(), 1u) << r.dump();
  EXPECT_GE(r.at("checkpoint_visible_seconds")[0].get<double>(), 0);
  EXPECT_LT(r.at("checkpoint_visible_seconds")[0].get<double>(), 10);
  for (const char* direction : {"write", "read"}) {
    for (const auto& [phase, s] : r.at("stragglers").at(direction).items()) {
      const int process = s.at("process").get<int>();
      ASSERT_TRUE(process == 0 || process == 1) << direction << " " << phase << ": " << s.dump();
      EXPECT_EQ(s.at("host"), env.at("hosts")[static_cast<std::size_t>(process)])
          << direction << " " << phase;
    }
  }
}

}  // namespace
}  // namespace ckpt::integration
