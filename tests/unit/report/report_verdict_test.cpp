// The report's verdict on constructed results, as exact sentences: the stall of a training sweep
// by the key that changes it most (geometric means over the other keys' settings, the time to
// durable of the same two values), a bandwidth sweep's fastest writer and reader, runs compared
// with each other, failed cases counted, a single case, an irregular sweep compared case by case,
// and the read-back of the loop's recorded timestamps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/report/report_model.hpp"
#include "harness/report/run_input.hpp"
#include "harness/report/verdict.hpp"
#include "harness/results/schema_version.hpp"

namespace ckpt::harness {
namespace {

using nlohmann::json;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// A line of 1 GiB per checkpoint; `write`, `read`: the timed iterations' seconds (none: omitted).
json bandwidth_line(const json& swept, const std::vector<double>& write,
                    const std::vector<double>& read) {
  json samples = json::object();
  if (!write.empty()) samples["write_seconds"] = write;
  if (!read.empty()) samples["read_seconds"] = read;
  return {{"schema_version", kResultsSchemaVersion},
          {"case", swept},
          {"status", "ok"},
          {"bytes_per_checkpoint", kGiB},
          {"samples", samples}};
}

// A [training] case of one committed checkpoint with this stall and time to durable.
json training_line(const json& swept, double stall, double durable) {
  const json checkpoint{{"iteration", 1},
                        {"stall_seconds", stall},
                        {"time_to_durable_seconds", durable},
                        {"flush_gib_s", 1.0},
                        {"committed", true}};
  return {{"schema_version", kResultsSchemaVersion},
          {"case", swept},
          {"status", "ok"},
          {"bytes_per_checkpoint", kGiB},
          {"samples", {{"read_seconds", {0.5}}}},
          {"training",
           {{"engine", swept.value("engine.name", "sync")},
            {"stall_seconds", stall},
            {"time_to_durable_seconds", durable},
            {"flush_gib_s", 1.0},
            {"checkpoints", json::array({checkpoint})}}}};
}

RunRecord verdict_run_of(const std::string& name, const std::vector<json>& lines) {
  RunRecord run{.name = name, .file = name + "/results.jsonl"};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    run.cases.push_back(parse_case(
        lines[i], {.file = run.file.string(), .line = static_cast<std::int64_t>(i + 1)}));
    run.cases.back().run = name;
  }
  return run;
}

std::string verdict_of(std::vector<RunRecord> runs, BandwidthUnit unit = BandwidthUnit::gib) {
  return verdict(build_report(std::move(runs), {}), unit);
}

// Engines × checkpoint intervals. Stall: sync 0.4 / 0.9 s, async 0.02 / 0.045 s, lazy 0.002 /
// 0.0045 s: geometric means 0.6, 0.03 and 0.003 s, lazy 200× below sync; lazy durable after 0.5
// and 0.98 s (mean 0.7 s) against sync's 0.6 s: 1.17× later. Every 2 against every 4: 2.25× in
// every engine.
TEST(Verdict, TrainingSweepLeadsWithTheKeyThatChangesTheStallMost) {
  std::vector<json> lines;
  for (const auto& [engine, stall, durable] :
       {std::tuple{"sync", 0.4, 0.4}, {"async", 0.02, 0.6}, {"lazy", 0.002, 0.5}}) {
    lines.push_back(
        training_line({{"engine.name", engine}, {"training.checkpoint_every", 2}}, stall, durable));
  }
  for (const auto& [engine, stall, durable] :
       {std::tuple{"sync", 0.9, 0.9}, {"async", 0.045, 0.6}, {"lazy", 0.0045, 0.98}}) {
    lines.push_back(
        training_line({{"engine.name", engine}, {"training.checkpoint_every", 4}}, stall, durable));
  }
  EXPECT_EQ(verdict_of({verdict_run_of("r", lines)}),
            "By engine.name: lazy stalls the loop 200× less than sync (3.00 ms against 600 ms per "
            "checkpoint; geometric means over 2 settings of training.checkpoint_every; too few "
            "samples to test in any of 2 settings); its checkpoint is durable 1.17× later (700 ms "
            "against 600 ms). By training.checkpoint_every: 2 stalls the loop 2.25× less than 4 "
            "(25.2 ms against 56.7 ms per checkpoint; geometric means over 3 settings of "
            "engine.name; too few samples to test in any of 3 settings).");
}

// 1 GiB written in 2, 0.5 and 1 s; read in 1, 0.5 and 1/3 s.
TEST(Verdict, BandwidthSweepNamesTheFastestWriterAndReader) {
  const RunRecord run = verdict_run_of(
      "r", {bandwidth_line({{"strategy.mapping", "file_per_tensor"}}, {2, 2, 2}, {1}),
            bandwidth_line({{"strategy.mapping", "file_per_rank"}}, {0.5}, {0.5}),
            bandwidth_line({{"strategy.mapping", "shared_file"}}, {1}, {1.0 / 3})});
  EXPECT_EQ(verdict_of({run}),
            "By strategy.mapping: file_per_rank writes 4.00× faster than file_per_tensor (2.00 "
            "GiB/s against 0.500 GiB/s; too few samples to test: 1 and 3); shared_file reads "
            "3.00× faster than file_per_tensor (3.00 GiB/s against 1.00 GiB/s; too few samples to "
            "test: 1 and 1).");
  // 2^30 bytes/s = 1.073741824 GB/s.
  EXPECT_EQ(verdict_of({run}, BandwidthUnit::gb),
            "By strategy.mapping: file_per_rank writes 4.00× faster than file_per_tensor (2.15 "
            "GB/s against 0.537 GB/s; too few samples to test: 1 and 3); shared_file reads 3.00× "
            "faster than file_per_tensor (3.22 GB/s against 1.07 GB/s; too few samples to test: 1 "
            "and 1).");
}

// Run a at 1 and 2 GiB/s, run b three times slower; b's third case failed.
TEST(Verdict, RunsAreAKeyAndFailuresAreCounted) {
  const RunRecord a = verdict_run_of("a", {bandwidth_line({{"backend.threads", 1}}, {1}, {}),
                                           bandwidth_line({{"backend.threads", 2}}, {0.5}, {})});
  json failed = bandwidth_line({{"backend.threads", 4}}, {}, {});
  failed["status"] = "failed";
  const RunRecord b =
      verdict_run_of("b", {bandwidth_line({{"backend.threads", 1}}, {3}, {}),
                           bandwidth_line({{"backend.threads", 2}}, {1.5}, {}), failed});
  EXPECT_EQ(verdict_of({a, b}),
            "By run: a writes 3.00× faster than b (1.41 GiB/s against 0.471 GiB/s; geometric means "
            "over 2 settings of backend.threads; too few samples to test in any of 2 settings). By "
            "backend.threads: 2 writes 2.00× faster than 1 (1.15 GiB/s against 0.577 GiB/s; "
            "geometric means over 2 settings of run; too few samples to test in any of 2 "
            "settings). 1 of 5 cases failed (see the status column).");
}

TEST(Verdict, OneCaseStatesItsFigures) {
  EXPECT_EQ(verdict_of({verdict_run_of("r", {bandwidth_line(nullptr, {1}, {0.5})})}),
            "The one case writes 1.00 GiB/s and reads 2.00 GiB/s (medians).");
  EXPECT_EQ(
      verdict_of({verdict_run_of("r", {training_line({{"engine.name", "async"}}, 0.02, 1.5)})}),
      "engine.name=async stalls the loop 20.0 ms per checkpoint; its checkpoint is durable "
      "after 1.50 s.");
}

// No two cases differ in one key alone: the cases themselves are compared.
TEST(Verdict, AnIrregularSweepComparesTheCases) {
  const RunRecord run = verdict_run_of("r", {bandwidth_line({{"a", 1}, {"b", "x"}}, {1}, {}),
                                             bandwidth_line({{"a", 2}, {"b", "y"}}, {0.5}, {})});
  EXPECT_EQ(verdict_of({run}),
            "a=2 b=y writes 2.00× faster than a=1 b=x (2.00 GiB/s against 1.00 GiB/s; too few "
            "samples to test: 1 and 1).");
}

TEST(Verdict, EqualFiguresAndNoStallAreSaidSo) {
  EXPECT_EQ(verdict_of({verdict_run_of("r", {bandwidth_line({{"m", "x"}}, {1}, {}),
                                             bandwidth_line({{"m", "y"}}, {1}, {})})}),
            "By m: x writes as fast as y (1.00 GiB/s against 1.00 GiB/s; too few samples to test: "
            "1 and 1).");
  EXPECT_EQ(verdict_of({verdict_run_of("r", {training_line({{"engine.name", "sync"}}, 0.5, 0.5),
                                             training_line({{"engine.name", "lazy"}}, 0, 0.5)})}),
            "By engine.name: lazy stalls the loop far less than sync (0 s against 500 ms per "
            "checkpoint; too few samples to test: 1 and 1); its checkpoint is durable as soon (500 "
            "ms against 500 ms).");
}

// The leading difference carries a two-sided Mann–Whitney U test of best against worst: 5 against
// 5 fully separated samples give the exact p = 2/252; 4 interleaved ones are not significant; 3
// against 3 (whose smallest p is 0.1) and 2 against 2 are too few, as `compare` says; over several
// settings the sentence counts the settings where the difference was significant, and those with
// too few samples.
TEST(Verdict, StatesWhetherTheLeadingDifferenceIsSignificant) {
  EXPECT_EQ(verdict_of({verdict_run_of(
                "r", {bandwidth_line({{"m", "x"}}, {1, 1.1, 0.9, 1.05, 0.95}, {}),
                      bandwidth_line({{"m", "y"}}, {2, 2.1, 1.9, 2.05, 1.95}, {})})}),
            "By m: x writes 2.00× faster than y (1.00 GiB/s against 0.500 GiB/s; p = 0.008 over 5 "
            "and 5 samples).");
  EXPECT_EQ(
      verdict_of({verdict_run_of("r", {bandwidth_line({{"m", "x"}}, {1, 2, 1.2, 1.1}, {}),
                                       bandwidth_line({{"m", "y"}}, {1.1, 1.9, 1.3, 1.2}, {})})}),
      "By m: x writes 1.09× faster than y (0.871 GiB/s against 0.801 GiB/s; not significant: "
      "p = 0.657 over 4 and 4 samples).");
  EXPECT_EQ(verdict_of({verdict_run_of("r", {bandwidth_line({{"m", "x"}}, {1, 2, 1.2}, {}),
                                             bandwidth_line({{"m", "y"}}, {1.1, 1.9, 1.3}, {})})}),
            "By m: x writes 1.08× faster than y (0.833 GiB/s against 0.769 GiB/s; too few samples "
            "to test: 3 and 3).");
  EXPECT_EQ(verdict_of({verdict_run_of("r", {bandwidth_line({{"m", "x"}}, {1, 1.1}, {}),
                                             bandwidth_line({{"m", "y"}}, {2, 2.1}, {})})}),
            "By m: x writes 1.96× faster than y (0.955 GiB/s against 0.488 GiB/s; too few samples "
            "to test: 2 and 2).");
  std::vector<json> lines;
  for (int k : {1, 2}) {
    lines.push_back(bandwidth_line({{"m", "x"}, {"k", k}}, {1, 1.1, 0.9, 1.05, 0.95}, {}));
    lines.push_back(bandwidth_line({{"m", "y"}, {"k", k}},
                                   k == 1 ? std::vector<double>{2, 2.1, 1.9, 2.05, 1.95}
                                          : std::vector<double>{1.02, 1.12, 0.92, 1.07, 0.97},
                                   {}));
  }
  EXPECT_EQ(verdict_of({verdict_run_of("r", lines)}),
            "By m: x writes 1.43× faster than y (1.00 GiB/s against 0.700 GiB/s; geometric means "
            "over 2 settings of k; significant (p < 0.05) in 1 of 2 tested settings). By k: 2 "
            "writes 1.40× faster than 1 (0.990 GiB/s against 0.707 GiB/s; geometric means over 2 "
            "settings of m; significant (p < 0.05) in 1 of 2 tested settings).");
  lines = {bandwidth_line({{"m", "x"}, {"k", 1}}, {1, 1.1, 0.9, 1.05, 0.95}, {}),
           bandwidth_line({{"m", "y"}, {"k", 1}}, {2, 2.1, 1.9, 2.05, 1.95}, {}),
           bandwidth_line({{"m", "x"}, {"k", 2}}, {1, 1.1}, {}),
           bandwidth_line({{"m", "y"}, {"k", 2}}, {2, 2.1}, {})};
  EXPECT_EQ(verdict_of({verdict_run_of("r", lines)}),
            "By m: x writes 1.98× faster than y (0.977 GiB/s against 0.494 GiB/s; geometric means "
            "over 2 settings of k; significant (p < 0.05) in 1 of 1 tested settings, too few "
            "samples in 1 more). By k: 1 writes 1.04× faster than 2 (0.707 GiB/s against 0.683 "
            "GiB/s; geometric means over 2 settings of m; too few samples to test in any of 2 "
            "settings).");
}

TEST(Verdict, NothingButFailures) {
  json failed = bandwidth_line({{"m", "x"}}, {}, {});
  failed["status"] = "failed";
  EXPECT_EQ(verdict_of({verdict_run_of("r", {failed})}),
            "Every case failed (see the status column).");
}

// training.iteration_times and checkpoints[].times come back as written; a span that ends
// before it starts names its key.
TEST(TrainingRecord, ReadsTheLoopsTimestamps) {
  json line = training_line({{"engine.name", "async"}}, 0.02, 0.5);
  line["training"]["iteration_times"] =
      json::array({{{"start", 0}, {"compute_end", 0.07}, {"update_start", 0.07}, {"end", 0.1}},
                   {{"start", 0.1}, {"compute_end", 0.17}, {"update_start", 0.18}, {"end", 0.21}}});
  line["training"]["checkpoints"][0]["times"] = {{"due", 0.21},
                                                 {"resumed", 0.23},
                                                 {"snapshot", {0.21, 0.23}},
                                                 {"flush", {0.23, 0.5}},
                                                 {"commit", {0.5, 0.71}}};
  const CaseRecord c = parse_case(line, {.file = "x", .line = 1});
  ASSERT_TRUE(c.training);
  ASSERT_EQ(c.training->iterations.size(), 2u);
  EXPECT_EQ(c.training->iterations[1].update_start, 0.18);
  const LoopCheckpoint& k = c.training->checkpoints.at(0);
  EXPECT_TRUE(k.timed);
  EXPECT_EQ(k.resumed, 0.23);
  EXPECT_EQ(k.flush->start, 0.23);
  EXPECT_EQ(k.commit->end, 0.71);
  line["training"]["checkpoints"][0]["times"]["flush"] = {0.5, 0.23};
  try {
    parse_case(line, {.file = "x", .line = 3});
    FAIL() << "a span ending before its start was read";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).find(
                  "x:3: `training.checkpoints[0].times.flush`: ends before it starts"),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace ckpt::harness
