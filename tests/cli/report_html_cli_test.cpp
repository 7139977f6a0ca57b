// `ckptbench report --html` of real runs as a user reads it, rendered by headless Chromium: the
// page leads with the verdict, the training cases' write cells are their flush bandwidth as the
// console shows it, the stall/durable chart and the loop timeline carry the figures of
// results.jsonl, and a projection chart keeps every marked interval on its axis without running
// along its top. Every expected number is computed here from results.jsonl. Skipped, saying why,
// where chromium is not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "harness/results/schema_version.hpp"
#include "harness/results/stats.hpp"
#include "tests/cli/headless_browser.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

using nlohmann::json;

// Three significant digits, as the report writes its figures: 0.0123 -> "0.0123", 12.34 -> "12.3".
std::string sig3(double v) {
  const int decimals =
      v > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(v))), 0, 6) : 0;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

std::string duration(double s) {
  if (s < 1e-3) return sig3(s * 1e6) + " µs";
  if (s < 1) return sig3(s * 1e3) + " ms";
  return sig3(s) + " s";
}

// "median [min–max]" of the committed checkpoints' flush bandwidth, the median as recorded.
std::string flush_cell(const json& training) {
  std::vector<double> values;
  for (const json& c : training.at("checkpoints")) {
    if (c.at("committed").get<bool>() && c.at("flush_gib_s").get<double>() > 0)
      values.push_back(c.at("flush_gib_s"));
  }
  const double median = training.at("flush_gib_s");
  if (values.size() < 2) return sig3(median);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(median))), 0, 6);
  char text[128];
  std::snprintf(text, sizeof text, "%.*f [%.*f–%.*f]", decimals, median, decimals, *lo, decimals,
                *hi);
  return text;
}

Outcome render_dom(const Scratch& dir, const fs::path& html) {
  return render_page(chromium(), dir / "profile", html, "--dump-dom");
}

// The text between <p class="verdict"> and </p>.
std::string verdict_in(const std::string& dom) {
  const std::string open = "<p class=\"verdict\">";
  const std::size_t at = dom.find(open);
  if (at == std::string::npos) return "";
  return dom.substr(at + open.size(), dom.find("</p>", at) - at - open.size());
}

// sync, async and lazy on the tiny model's full state: four 30 ms iterations, a checkpoint every
// second one, posix with fsync.
class EngineReport : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path model = dir_.write("tiny.toml", kTinyModel);
    const fs::path campaign = dir_.write(
        "engines.toml",
        campaign_toml(
            "engines", dir_ / "target",
            "create_target = true\noverwrite = true\n[model]\nname = \"" + model.string() +
                "\"\n[state]\nscope = \"full\"\n[backend]\nname = \"posix\"\nsync = \"fsync\"\n"
                "[cache]\npolicy = \"none\"\n[training]\niterations = 4\niteration_seconds = 0.03\n"
                "checkpoint_every = 2\n[engine]\nname = [\"sync\", \"async\", \"lazy\"]\n"));
    run_ = ckptbench({"run", campaign.string(), "--output", (dir_ / "out").string()});
    ASSERT_EQ(run_.exit_code, 0) << run_.describe();
    results_ = read_results(dir_ / "out");
    ASSERT_EQ(results_.size(), 3u);
  }
  Scratch dir_;
  Outcome run_;
  std::vector<json> results_;
};

// The verdict's statement on best against worst: their samples' two-sided Mann–Whitney U test,
// or too few samples by the rule `compare` applies.
std::string significance(const std::vector<double>& best, const std::vector<double>& worst,
                         bool lower_is_better) {
  if (best.empty() || worst.empty()) return "";
  if (harness::too_few_samples(best.size(), worst.size(), 0.05)) {
    return "; too few samples to test: " + std::to_string(best.size()) + " and " +
           std::to_string(worst.size());
  }
  const harness::MannWhitney test = harness::mann_whitney_u(best, worst);
  const double half = static_cast<double>(best.size() * worst.size()) / 2;
  const bool significant = test.p_value < 0.05 && (lower_is_better ? test.u < half : test.u > half);
  char p[32];  // these tests' few samples keep p far above 0.001, where the verdict would switch
  std::snprintf(p, sizeof p, "%.3f", test.p_value);  // to scientific notation
  return "; " + std::string(significant ? "" : "not significant: ") + "p = " + std::string(p) +
         " over " + std::to_string(best.size()) + " and " + std::to_string(worst.size()) +
         " samples";
}

// A committed checkpoint's field over the training record's checkpoints.
std::vector<double> committed(const json& training, const char* field) {
  std::vector<double> values;
  for (const json& k : training.at("checkpoints"))
    if (k.at("committed").get<bool>()) values.push_back(k.at(field).get<double>());
  return values;
}

// What the verdict must say, from results.jsonl: the engine that stalls least against the one that
// stalls most, and the same two engines' time to durable.
std::string expected_verdict(const std::vector<json>& results) {
  std::map<std::string, std::pair<double, double>> by_engine;  // stall, durable
  std::map<std::string, std::vector<double>> stalls;
  for (const json& r : results) {
    const json& t = r.at("training");
    by_engine[t.at("engine")] = {t.at("stall_seconds"), t.at("time_to_durable_seconds")};
    stalls[t.at("engine")] = committed(t, "stall_seconds");
  }
  const auto by_stall = [](const auto& a, const auto& b) {
    return a.second.first < b.second.first;
  };
  const auto best = *std::min_element(by_engine.begin(), by_engine.end(), by_stall);
  const auto worst = *std::max_element(by_engine.begin(), by_engine.end(), by_stall);
  const double mine = best.second.second, theirs = worst.second.second;
  const std::string durable_ratio = sig3(std::max(mine, theirs) / std::min(mine, theirs));
  return "By engine.name: " + best.first + " stalls the loop " +
         sig3(worst.second.first / best.second.first) + "× less than " + worst.first + " (" +
         duration(best.second.first) + " against " + duration(worst.second.first) +
         " per checkpoint" + significance(stalls[best.first], stalls[worst.first], true) +
         "); its checkpoint is durable " +
         (durable_ratio == "1.00" ? std::string("as soon")
                                  : durable_ratio + "× " + (mine > theirs ? "later" : "sooner")) +
         " (" + duration(mine) + " against " + duration(theirs) + ").";
}

TEST_F(EngineReport, HtmlLeadsWithTheVerdictAndChartsTheLoop) {
  const std::string verdict = expected_verdict(results_);
  EXPECT_TRUE(contains(run_.out, "summary: " + verdict + "\n")) << run_.out;
  const fs::path html = dir_ / "report.html";
  const Outcome text =
      ckptbench({"report", run_directory(dir_ / "out").string(), "--html", html.string()});
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  EXPECT_EQ(text.out.rfind("Summary\n\n" + verdict + "\n", 0), 0u) << text.out;
  if (chromium().empty())
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; ci/setup.sh lists it)";
  const Outcome dom = render_dom(dir_, html);
  ASSERT_EQ(dom.exit_code, 0) << dom.describe();
  EXPECT_EQ(verdict_in(dom.out), verdict);
  EXPECT_LT(dom.out.find("class=\"verdict\""), dom.out.find("<svg")) << "the verdict comes first";
  for (const char* chart :
       {"stall and time to durable per case", "training loop timeline", "bandwidth per case"}) {
    EXPECT_TRUE(contains(dom.out, "aria-label=\"" + std::string(chart) + "\"")) << chart;
  }
  for (const json& r : results_) {
    const json& t = r.at("training");
    SCOPED_TRACE(t.at("engine").get<std::string>());
    // The write cell: the flush bandwidth, as the console shows it.
    EXPECT_TRUE(contains(run_.out, "  " + flush_cell(t) + "  ")) << run_.out;
    EXPECT_TRUE(contains(dom.out, "<td class=\"n\">" + flush_cell(t) + "</td>")) << flush_cell(t);
    EXPECT_TRUE(
        contains(dom.out, "class=\"value\">" + duration(t.at("stall_seconds")) + "</text>"));
    EXPECT_TRUE(contains(
        dom.out, "class=\"value\">" + duration(t.at("time_to_durable_seconds")) + "</text>"));
    const json& iterations = t.at("iteration_times");
    ASSERT_EQ(iterations.size(), 4u);
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      const json& it = iterations[i];
      EXPECT_TRUE(contains(dom.out, "<title>iteration " + std::to_string(i) + ": compute " +
                                        sig3(it.at("start")) + " s to " +
                                        sig3(it.at("compute_end")) + " s</title>"))
          << it.dump();
    }
    ASSERT_EQ(t.at("checkpoints").size(), 2u);
    for (const json& c : t.at("checkpoints")) {
      const json& times = c.at("times");
      const double due = times.at("due"), resumed = times.at("resumed");
      const std::string name =
          "checkpoint of iteration " + std::to_string(c.at("iteration").get<int>());
      EXPECT_TRUE(contains(dom.out, "<title>" + name + ": stall " + duration(resumed - due) +
                                        " (due " + sig3(due) + " s, resumed " + sig3(resumed) +
                                        " s)</title>"))
          << times.dump();
      const double f0 = times.at("flush")[0], f1 = times.at("flush")[1];
      EXPECT_TRUE(contains(dom.out, "<title>" + name + ": flush " + duration(f1 - f0) + " (" +
                                        sig3(f0) + " s to " + sig3(f1) + " s)</title>"))
          << times.dump();
      // The durable mark is drawn at the commit's end, labelled with the record's time to durable;
      // sync's stall as drawn is the record's.
      const double durable = c.at("time_to_durable_seconds");
      EXPECT_TRUE(contains(dom.out, "<title>" + name + ": durable at " + sig3(due + durable) +
                                        " s, " + duration(durable) + " after it was due</title>"))
          << times.dump();
      EXPECT_NEAR(due + durable, times.at("commit")[1].get<double>(), 1e-9) << times.dump();
      if (t.at("engine") == "sync") {
        EXPECT_NEAR(resumed - due, c.at("stall_seconds").get<double>(), 1e-9) << times.dump();
      }
      EXPECT_EQ(times.at("snapshot").is_null(), t.at("engine") == "sync");
    }
  }
  EXPECT_FALSE(contains(dom.out, "<script")) << "no JavaScript";
}

// One rank writing the tiny model's weights as one file per tensor, per rank and one shared file.
TEST(BandwidthReport, VerdictNamesTheFastestWriterAndReader) {
  const Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write(
      "maps.toml",
      campaign_toml("maps", dir / "target",
                    "create_target = true\niterations = 3\nwarmup = 0\n[model]\nname = \"" +
                        model.string() +
                        "\"\n[backend]\nname = \"posix\"\n[cache]\npolicy = \"none\"\n[strategy]\n"
                        "mapping = [\"file_per_tensor\", \"file_per_rank\", \"shared_file\"]\n"));
  const Outcome run =
      ckptbench({"-q", "run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  std::map<std::string, std::pair<double, double>> rates;  // mapping -> median write, read GiB/s
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> samples;  // GiB/s
  for (const json& r : read_results(dir / "out")) {
    const double bytes = r.at("bytes_per_checkpoint").get<double>() / (1 << 30);
    const auto rates_of = [&](const char* key) {
      std::vector<double> s;
      for (const json& seconds : r.at("samples").at(key))
        s.push_back(bytes / seconds.get<double>());
      return s;
    };
    const auto median = [](std::vector<double> s) {
      std::sort(s.begin(), s.end());
      return s[1];
    };
    const std::string mapping = r.at("case").at("strategy.mapping");
    samples[mapping] = {rates_of("write_seconds"), rates_of("read_seconds")};
    rates[mapping] = {median(samples[mapping].first), median(samples[mapping].second)};
  }
  const auto sentence = [&](bool write) {
    const auto rate = [&](const auto& e) { return write ? e.second.first : e.second.second; };
    const auto order = [&](const auto& a, const auto& b) { return rate(a) < rate(b); };
    const auto best = *std::max_element(rates.begin(), rates.end(), order);
    const auto worst = *std::min_element(rates.begin(), rates.end(), order);
    const auto of = [&](const std::string& m) {
      return write ? samples[m].first : samples[m].second;
    };
    return best.first + (write ? " writes " : " reads ") + sig3(rate(best) / rate(worst)) +
           "× faster than " + worst.first + " (" + sig3(rate(best)) + " GiB/s against " +
           sig3(rate(worst)) + " GiB/s" + significance(of(best.first), of(worst.first), false) +
           ")";
  };
  const std::string verdict =
      "By strategy.mapping: " + sentence(true) + "; " + sentence(false) + ".";
  const fs::path html = dir / "report.html";
  ASSERT_EQ(
      ckptbench({"report", run_directory(dir / "out").string(), "--html", html.string()}).exit_code,
      0);
  if (chromium().empty())
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; ci/setup.sh lists it)";
  const Outcome dom = render_dom(dir, html);
  ASSERT_EQ(dom.exit_code, 0) << dom.describe();
  EXPECT_EQ(verdict_in(dom.out), verdict);
  for (const auto& [mapping, rate] : rates) {
    EXPECT_TRUE(contains(dom.out, "class=\"value\">" + sig3(rate.first) + " GiB/s</text>"))
        << mapping;
  }
}

// An async case whose time to durable (0.5 s) is far below tau Daly (about 17 s at C = 10 ms and
// M = 4 h): the old axis began at tau / 10 and lost the marker.
TEST(ProjectionChart, EveryMarkerStaysOnTheAxisAndNoCurveRunsAlongTheTop) {
  const Scratch dir;
  const json line{
      {"schema_version", harness::kResultsSchemaVersion},
      {"case", {{"engine.name", "async"}}},
      {"status", "ok"},
      {"bytes_per_checkpoint", std::uint64_t{1} << 30},
      {"full_scale_bytes_per_checkpoint", std::uint64_t{1} << 30},
      {"world_size", 8},
      {"config", {{"ranks", {{"gpus_per_node", 8}}}}},
      {"samples", {{"read_seconds", {1.0}}}},
      {"training",
       {{"engine", "async"}, {"stall_seconds", 0.01}, {"time_to_durable_seconds", 0.5}}}};
  const fs::path results = dir.write("run/results.jsonl", line.dump() + "\n");
  const fs::path html = dir / "projection.html";
  const Outcome o =
      ckptbench({"project", results.string(), "--mtbf-hours", "4", "--html", html.string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  if (chromium().empty())
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; ci/setup.sh lists it)";
  const Outcome dom = render_dom(dir, html);
  ASSERT_EQ(dom.exit_code, 0) << dom.describe();
  // The plot spans x 70 to 630 and y 20 (top) to 240.
  const std::regex marker(
      R"re(<line x1="([0-9.]+)"[^>]*stroke-dasharray="5 3"><title>([^<:]+) = )re");
  int markers = 0;
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), marker);
       it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]);
    EXPECT_GE(x, 70.0) << (*it)[2];
    EXPECT_LE(x, 630.0) << (*it)[2];
    ++markers;
  }
  EXPECT_EQ(markers, 3) << "τ Young, τ Daly and the time to durable";
  const std::regex curve(R"re(<path d="([^"]+)" fill="none" stroke="#3b6fb6" stroke-width="2")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom.out, m, curve));
  const std::regex point(R"re([ML]([0-9.]+),([0-9.]+))re");
  const std::string d = m[1];
  double previous_y = -1;
  for (auto it = std::sregex_iterator(d.begin(), d.end(), point); it != std::sregex_iterator();
       ++it) {
    const double y = std::stod((*it)[2]);
    EXPECT_GE(y, 20.0);
    EXPECT_FALSE(y == 20.0 && previous_y == 20.0)
        << "the curve runs along the top of the plot: " << d;
    previous_y = y;
  }
  EXPECT_TRUE(contains(dom.out, "too often: C/τ dominates"));
  EXPECT_TRUE(contains(dom.out, "too rarely: (τ/2 + R)/M dominates"));
}

}  // namespace
}  // namespace ckpt::integration
