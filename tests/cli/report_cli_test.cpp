// `ckptbench report` and `ckptbench compare` as a user runs them: exit statuses 0 / 1 / 2 and the
// messages naming path and line, the --fail-on slower gate, and the HTML report rendered by a
// real browser (headless Chromium): its screenshot is not blank and its DOM holds the case names
// and the numbers of the table. Skipped, saying why, where chromium is not installed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/results/schema_version.hpp"
#include "tests/cli/headless_browser.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A results.jsonl line of 1 GiB per checkpoint with these write seconds (reads twice as fast).
std::string result_line(int threads, const std::vector<double>& write, const std::string& hash) {
  std::vector<double> read;
  for (double s : write) read.push_back(s / 2);
  const nlohmann::json j{
      {"schema_version", harness::kResultsSchemaVersion},
      {"campaign", "threads"},
      {"case", {{"backend.threads", threads}}},
      {"status", "ok"},
      {"backend", "posix"},
      {"bytes_per_checkpoint", kGiB},
      {"config_hash", hash},
      {"config", {{"backend", {{"name", "posix"}, {"threads", threads}}}}},
      {"samples", {{"write_seconds", write}, {"read_seconds", read}}},
      {"phases",
       {{"write", {{"open", 0.125}, {"transfer", 0.5}, {"sync", 0.25}, {"close", 0.0625}}},
        {"read", {{"open", 0.0625}, {"transfer", 0.25}}}}},
      {"environment", {{"host", "testhost"}, {"file_system", "ext4"}}}};
  return j.dump() + "\n";
}

// Threads 1, 2, 4 at 1, 2 and 4 GiB/s median (write seconds 1/t with spread), five samples each.
std::string threads_run(double slowdown) {
  std::string text;
  for (int t : {1, 2, 4}) {
    std::vector<double> s;
    for (double f : {1.0, 0.5, 2.0, 0.9, 1.1}) s.push_back(f * slowdown / t);
    text += result_line(t, s, "hash" + std::to_string(t));
  }
  return text;
}

class ReportCli : public ::testing::Test {
 protected:
  Scratch dir_;
  fs::path base_ = dir_.write("base-run/results.jsonl", threads_run(1)).parent_path();
  fs::path slower_ = dir_.write("slow-run/results.jsonl", threads_run(4)).parent_path();
};

TEST_F(ReportCli, TextTableWithSpeedups) {
  const Outcome o = ckptbench({"report", base_.string(), "--baseline", "backend.threads=1"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(
      o.out, "backend.threads=4  ok      4.00 [2.00–8.00]  8.00 [4.00–16.00]    4.00×   4.00×"))
      << o.out;
  EXPECT_TRUE(contains(o.out, "testhost")) << o.out;
}

TEST_F(ReportCli, BadInputExitsTwoNamingPathAndLine) {
  Outcome o = ckptbench({"report", (dir_ / "nothing").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(
      contains(o.err, (dir_ / "nothing").string() + ": no such run directory or results file"))
      << o.err;
  const fs::path bad = dir_.write("bad/results.jsonl", result_line(1, {1}, "h") + "{\"case\": \n");
  o = ckptbench({"compare", base_.string(), bad.parent_path().string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, bad.string() + ":2: not JSON")) << o.err;
  o = ckptbench({"report", base_.string(), "--baseline", "backend.threads=8"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "matches no case (backend.threads: 1, 2, 4)")) << o.err;
}

TEST_F(ReportCli, CompareVerdictsAndFailOnSlower) {
  Outcome o = ckptbench({"compare", base_.string(), slower_.string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  // Four times slower; only NEW's 0.5 GiB/s ties BASE's slowest sample (U = 0.5): exact p = 0.016.
  EXPECT_TRUE(contains(o.out,
                       "backend.threads=4  write   4.00 [2.00–8.00] n=5     1.00 [0.50–2.00] n=5   "
                       "  0.250  0.016  slower"))
      << o.out;
  EXPECT_FALSE(contains(o.out, "faster")) << o.out;
  o = ckptbench({"compare", base_.string(), slower_.string(), "--fail-on", "slower"});
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  o = ckptbench({"compare", slower_.string(), base_.string(), "--fail-on", "slower"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "faster")) << o.out;
  o = ckptbench({"compare", base_.string(), base_.string()});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "1.000  1.000  no significant change")) << o.out;
  o = ckptbench({"compare", base_.string(), slower_.string(), "--alpha", "2"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
}

TEST_F(ReportCli, HtmlRendersInHeadlessChromium) {
  const std::string browser = chromium();
  if (browser.empty())
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; ci/setup.sh lists it)";
  const fs::path html = dir_ / "report.html";
  const Outcome made = ckptbench({"report", base_.string(), slower_.string(), "--baseline",
                                  "backend.threads=1", "--html", html.string()});
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const fs::path blank = dir_.write("blank.html", "<!DOCTYPE html><html><body></body></html>");
  const auto render = [&](const fs::path& page, const std::string& what) {
    return render_page(browser, dir_ / "profile", page, what);
  };
  const Outcome shot = render(html, "--screenshot=" + (dir_ / "report.png").string());
  ASSERT_EQ(shot.exit_code, 0) << shot.describe();
  const Outcome empty = render(blank, "--screenshot=" + (dir_ / "blank.png").string());
  ASSERT_EQ(empty.exit_code, 0) << empty.describe();
  const std::string png = read_text(dir_ / "report.png");
  const std::string blank_png = read_text(dir_ / "blank.png");
  EXPECT_EQ(png_size(png), (std::pair<std::uint32_t, std::uint32_t>{1200, 2000}));
  // A white page compresses to a few kilobytes; text, tables and charts do not.
  EXPECT_GT(png.size(), 10 * blank_png.size())
      << "report " << png.size() << " bytes, blank page " << blank_png.size();

  const Outcome dom = render(html, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0) << dom.describe();
  for (const std::string& expected :
       {std::string("base-run: backend.threads=4"), std::string("slow-run: backend.threads=1"),
        std::string("4.00 [2.00–8.00]"), std::string("0.250 [0.125–0.500]"), std::string("4.00×"),
        std::string("testhost"), std::string("Bandwidth against backend.threads"),
        std::string("<circle"), std::string("Checkpoint phases")}) {
    EXPECT_TRUE(contains(dom.out, expected)) << "the rendered DOM lacks " << expected;
  }
  EXPECT_FALSE(contains(dom.out, "<script")) << "no JavaScript";
}

}  // namespace
}  // namespace ckpt::integration
