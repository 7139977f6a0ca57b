// What report and compare read and build: results.jsonl lines into cases (errors naming path and
// line), key lookup in the swept keys and the configuration, bandwidths from the samples, groups
// and baselines, the phase columns, the compression table, case matching between two runs, HTML
// escaping.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "harness/common/elapsed.hpp"
#include "harness/report/compare.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_model.hpp"
#include "harness/report/run_input.hpp"
#include "harness/results/schema_version.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using nlohmann::json;

// One results.jsonl line: 1 GiB per checkpoint, write seconds as given, read twice as fast.
std::string line(const json& swept, std::vector<double> write, const std::string& hash,
                 const std::string& backend = "posix") {
  std::vector<double> read;
  for (double s : write) read.push_back(s / 2);
  json j{{"schema_version", kResultsSchemaVersion},
         {"campaign", "t"},
         {"case", swept},
         {"status", "ok"},
         {"backend", backend},
         {"bytes_per_checkpoint", kGiBBytes},
         {"config_hash", hash},
         {"stores_data", true},
         {"config", {{"backend", {{"name", backend}, {"threads", 1}}}}},
         {"samples", {{"write_seconds", write}, {"read_seconds", read}}},
         {"phases",
          {{"write", {{"open", 0.25}, {"transfer", 0.5}, {"d2h", 0.125}}},
           {"read", {{"open", 0.125}}}}},
         {"environment", {{"host", "h1"}, {"kernel", "Linux 6"}}}};
  return j.dump() + "\n";
}

TEST(RunInput, ReadsCasesFromADirectoryOrAFile) {
  test_support::TempDir dir;
  dir.write("run-a/results.jsonl", line({{"backend.threads", 1}}, {1, 0.5, 2}, "aa") + "\n" +
                                       line({{"backend.threads", 2}}, {0.5}, "bb"));
  const RunRecord run = load_run(dir.path() / "run-a");
  EXPECT_EQ(run.name, "run-a");
  ASSERT_EQ(run.cases.size(), 2u);
  EXPECT_EQ(run.cases[1].line, 3u);  // the blank line counts
  EXPECT_EQ(run.cases[0].label(), "backend.threads=1");
  EXPECT_EQ(run.cases[0].value_of("backend.threads"), "1");
  EXPECT_EQ(run.cases[0].value_of("backend.name"), "posix");  // from config
  EXPECT_EQ(run.cases[0].value_of("backend.nothing"), std::nullopt);
  EXPECT_EQ(run.cases[0].value_of("run"), "run-a");
  EXPECT_EQ(bandwidth_samples(run.cases[0], run.cases[0].write), (std::vector<double>{1, 2, 0.5}));
  EXPECT_EQ(run.cases[0].write.phases.at("d2h"), 0.125);
  EXPECT_EQ(load_run(dir.path() / "run-a" / "results.jsonl").name, "run-a");
}

TEST(RunInput, ReadsTheAsyncEnginesStallAndTimeToDurable) {
  json j = json::parse(line({}, {1}, "aa"));
  j["training"] = {{"engine", "async"}, {"stall_seconds", 0.5}, {"time_to_durable_seconds", 3.0}};
  const CaseRecord c = parse_case(j, {.file = "x", .line = 1});
  EXPECT_EQ(c.stall_seconds, 0.5);
  EXPECT_EQ(c.time_to_durable_seconds, 3.0);
  EXPECT_EQ(c.engine, "async");
}

std::string error_of(const std::filesystem::path& p) {
  try {
    load_run(p);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(RunInput, ErrorsNameThePathAndLine) {
  test_support::TempDir dir;
  const auto bad = dir.write("bad/results.jsonl", line({}, {1}, "a") + "{not json\n");
  EXPECT_TRUE(error_of(dir.path() / "bad").starts_with(bad.string() + ":2: not JSON"))
      << error_of(dir.path() / "bad");
  const auto other = dir.write("other.jsonl", "{\"schema_version\": 1, \"x\": 1}\n");
  EXPECT_EQ(error_of(other),
            other.string() +
                ":1: `case`: missing — is this a ckptbench results.jsonl (results/SCHEMA.md)?");
  const auto array = dir.write("array.jsonl", "[1]\n");
  EXPECT_EQ(error_of(array), array.string() +
                                 ":1: must be an object, found an array of 1 elements — is this a "
                                 "ckptbench results.jsonl (results/SCHEMA.md)?");
  EXPECT_EQ(error_of(dir.path() / "missing"),
            (dir.path() / "missing").string() + ": no such run directory or results file");
  std::filesystem::create_directories(dir.path() / "empty");
  EXPECT_EQ(error_of(dir.path() / "empty"),
            (dir.path() / "empty").string() + ": holds no results.jsonl");
  const auto blank = dir.write("blank.jsonl", "\n");
  EXPECT_EQ(error_of(blank), blank.string() + ": holds no cases");
}

RunRecord run_of(const std::string& name, const std::string& text) {
  test_support::TempDir dir;
  return load_run(dir.write(name + "/results.jsonl", text).parent_path());
}

TEST(ReportModel, GroupsBaselinesAndPhases) {
  RunRecord a = run_of("a", line({{"backend.threads", 4}}, {0.5, 0.5, 0.5}, "1") +
                                line({{"backend.threads", 1}}, {1, 1, 1}, "2"));
  RunRecord b = run_of("b", line({{"backend.threads", 4}}, {0.25}, "3") +
                                line({{"backend.threads", 1}}, {2, 1, 2}, "4"));
  const ReportModel m = build_report({a, b}, {"backend.threads", "backend.threads=1"});
  ASSERT_EQ(m.rows.size(), 4u);
  EXPECT_EQ(m.rows[0].name, "a: backend.threads=1");  // numeric order of the groups, then run order
  EXPECT_EQ(m.rows[1].name, "b: backend.threads=1");
  EXPECT_EQ(m.rows[2].group, "4");
  // Each case against the baseline of its own run: a's 4 threads 2 GiB/s vs 1 GiB/s.
  EXPECT_DOUBLE_EQ(*m.rows[2].write_speedup, 2.0);
  EXPECT_DOUBLE_EQ(*m.rows[3].write_speedup, 4.0 / 0.5);
  EXPECT_EQ(spread_text(m.rows[1].write), "0.500 [0.500–1.000]");
  EXPECT_EQ(m.write_phases, (std::vector<std::string>{"open", "transfer", "d2h"}));
  EXPECT_EQ(m.numeric_keys, (std::vector<std::string>{"backend.threads"}));
  std::ostringstream text;
  print_report(m, true, text);
  EXPECT_NE(text.str().find("| **backend.threads = 4** |"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("| b: backend.threads=4 | ok | 4.00 | 8.00 | 8.00× | 8.00× |"),
            std::string::npos)
      << text.str();
}

TEST(ReportModel, BadBaselineOrByNamesWhatExists) {
  RunRecord a = run_of("a", line({{"backend.threads", 4}}, {0.5}, "1"));
  try {
    build_report({a}, {"", "backend.threads=8"});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "--baseline backend.threads=8 matches no case (backend.threads: 4)");
  }
  EXPECT_THROW(build_report({a}, {"", "threads"}), std::runtime_error);
  EXPECT_THROW(build_report({a}, {"no.such", ""}), std::runtime_error);
}

// Two runs of one campaign with a --set between them: the report names the key and both values;
// swept keys and the target are not differences.
TEST(ReportModel, ConfigDifferencesBetweenRuns) {
  json one = json::parse(line({{"backend.threads", 1}}, {1}, "1"));
  json other = one;
  other["config"]["backend"]["name"] = "uring";
  other["config"]["backend"]["threads"] = 8;
  one["config"]["campaign"] = {{"target", "/a"}};
  other["config"]["campaign"] = {{"target", "/b"}};
  const RunRecord a = run_of("a", one.dump() + "\n");
  const RunRecord b = run_of("b", other.dump() + "\n");
  const ReportModel m = build_report({a, b}, {});
  EXPECT_EQ(
      config_differences(m),
      (std::vector<std::pair<std::string, std::string>>{{"backend.name", "posix (a), uring (b)"}}));
  EXPECT_TRUE(config_differences(build_report({a}, {})).empty());
}

TEST(Compare, MatchesByConfigHashThenSweptKeys) {
  const RunRecord base = run_of("base", line({{"m", "a"}}, {1, 1, 1, 1}, "h1") +
                                            line({{"m", "b"}}, {1, 1.1, 1.2, 1.3}, "h2") +
                                            line({{"m", "gone"}}, {1}, "h3"));
  const RunRecord next =
      run_of("new", line({{"m", "b"}}, {2, 2.1, 2.2, 2.3}, "other") +
                        line({{"m", "x"}}, {1}, "h1") + line({{"m", "new"}}, {1}, "h9"));
  const Comparison c = compare_runs(base, next, 0.05);
  ASSERT_EQ(c.cases.size(), 2u);
  EXPECT_EQ(c.cases[0].label, "m=b");
  EXPECT_FALSE(c.cases[0].same_config);
  EXPECT_EQ(c.cases[0].directions[0].verdict, Verdict::slower);  // twice the seconds
  // Medians of four bandwidths: the means of the middle two, (1/2.1 + 1/2.2) / (1/1.1 + 1/1.2).
  EXPECT_NEAR(c.cases[0].directions[0].ratio, (1 / 2.1 + 1 / 2.2) / (1 / 1.1 + 1 / 1.2), 1e-12);
  EXPECT_EQ(c.cases[1].label, "m=x");  // the same config_hash under another label
  EXPECT_TRUE(c.cases[1].same_config);
  EXPECT_EQ(c.only_base, (std::vector<std::string>{"m=gone"}));
  EXPECT_EQ(c.only_new, (std::vector<std::string>{"m=new"}));
  EXPECT_TRUE(c.any_slower());
  std::ostringstream text;
  print_comparison(c, base, next, 0.05, false, text);
  EXPECT_NE(text.str().find("only in BASE: m=gone"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("slower"), std::string::npos);
}

TEST(ReportModel, CompressionTableShowsBytesSavedAndCodecSeconds) {
  json z = json::parse(line({{"strategy.compression", "bytegroup"}}, {1}, "z"));
  z["compression"] = {{"codec", "bytegroup"},
                      {"level", 3},
                      {"unit", "shard"},
                      {"chunk_bytes", nullptr},
                      {"threads", 2},
                      {"logical_bytes", kGiBBytes},
                      {"stored_bytes", kGiBBytes / 4 * 3},
                      {"ratio", 4.0 / 3},
                      {"encode_seconds", 0.5},
                      {"encode_cpu_seconds", 1.0},
                      {"decode_seconds", nullptr},
                      {"decode_cpu_seconds", nullptr}};
  const RunRecord run =
      run_of("r", z.dump() + "\n" + line({{"strategy.compression", "none"}}, {1}, "n"));
  const ReportModel m = build_report({run}, {});
  std::ostringstream markdown;
  print_report(m, true, markdown);
  // One row: the case that compresses nothing has none.
  EXPECT_NE(markdown.str().find(
                "## Compression (strategy.compression)\n\n"
                "| case | codec | logical | stored | ratio | saved | encode | decode |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|\n"
                "| strategy.compression=bytegroup | bytegroup level 3 per shard, 2 threads | "
                "1.00 GiB | 768.00 MiB | 1.33× | 25.0% | 0.500 s (CPU 1.00 s) | - |\n\n"),
            std::string::npos)
      << markdown.str();
  const std::string html = html_report(m);
  EXPECT_NE(html.find("<h2>Compression</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td class=n>768.00 MiB</td><td class=n>1.33×</td><td class=n>25.0%</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html_report(build_report({run_of("p", line({}, {1}, "p"))}, {})).find("Compression"),
            std::string::npos);
}

TEST(ReportModel, RequestTableShowsOneCheckpointsRequestsByKindAndPlace) {
  // Two timed iterations: the counts are sums over both, and the table halves them.
  json s3 = json::parse(line({{"backend.name", "s3"}}, {1, 1}, "s"));
  const json counts{{"requests.put", 0},  {"requests.part", 18},      {"requests.multipart", 4},
                    {"requests.get", 0},  {"requests.ranged_get", 0}, {"requests.list", 0},
                    {"requests.head", 0}, {"requests.delete", 0},     {"retries", 3},
                    {"throttled", 1},     {"backoff_us", 500000}};
  s3["phases"]["write"]["counters"] = counts;
  s3["store_requests"] = {
      {"requests.put", 4}, {"requests.list", 2}, {"requests.get", 3}, {"first_byte_us", 4500}};
  const RunRecord run = run_of("r", s3.dump() + "\n" + line({{"backend.name", "posix"}}, {1}, "p"));
  EXPECT_EQ(run.cases[0].requests.at("write").at("requests.part"), 18u);
  const ReportModel m = build_report({run}, {});
  std::ostringstream markdown;
  print_report(m, true, markdown);
  EXPECT_NE(markdown.str().find(
                "| backend.name=s3 | store | case | 4 | - | - | 3 | - | 2 | - | - | - | - | - | "
                "1.5 ms |\n"
                "| backend.name=s3 | write | checkpoint | 0 | 9 | 2 | 0 | 0 | 0 | 0 | 0 | 1.5 | "
                "0.5 | 0.25 | - |\n"),
            std::string::npos)
      << markdown.str();
  // The posix case counts nothing and gets no row.
  EXPECT_EQ(markdown.str().find("| backend.name=posix | write"), std::string::npos);
  const std::string html = html_report(m);
  EXPECT_NE(html.find("<h2>Requests (object storage)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>write</td><td>checkpoint</td><td class=n>0</td><td class=n>9</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html_report(build_report({run_of("p", line({}, {1}, "p"))}, {})).find("Requests"),
            std::string::npos);
}

TEST(ReportModel, QuantizedTableShowsTheBytesSavedAgainstUnquantizedWeights) {
  json q = json::parse(line({{"model.weights", "fp8_block"}}, {1}, "q"));
  q["quantized_weights"] = {{"format", "fp8_block"},
                            {"bytes", kGiBBytes / 4 * 3},
                            {"unquantized_bytes", kGiBBytes},
                            {"saved_bytes", kGiBBytes / 4},
                            {"saved_fraction", 0.25}};
  const RunRecord run =
      run_of("r", q.dump() + "\n" + line({{"model.weights", "unquantized"}}, {1}, "u"));
  const ReportModel m = build_report({run}, {});
  std::ostringstream markdown;
  print_report(m, true, markdown);
  // One row: the unquantized case has none.
  EXPECT_NE(markdown.str().find("## Quantized weights (model.weights)\n\n"
                                "| case | weights | checkpoint | unquantized | saved | saved % |\n"
                                "|---|---|---:|---:|---:|---:|\n"
                                "| model.weights=fp8_block | fp8_block | 768.00 MiB | 1.00 GiB | "
                                "256.00 MiB | 25.0% |\n\n"),
            std::string::npos)
      << markdown.str();
  const std::string html = html_report(m);
  EXPECT_NE(html.find("<h2>Quantized weights</h2>"), std::string::npos);
  EXPECT_EQ(html_report(build_report({run_of("p", line({}, {1}, "p"))}, {})).find("Quantized"),
            std::string::npos);
}

TEST(Html, EscapesEveryString) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  const RunRecord run = run_of("r<script>", line({{"m", "<b>&"}}, {1, 2}, "h"));
  const std::string html = html_report(build_report({run}, {}));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("m=&lt;b&gt;&amp;"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace ckpt::harness
