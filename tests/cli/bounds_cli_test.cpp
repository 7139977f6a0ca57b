// Huge numbers as a user types them: refused at once with the key and the bound, exit 2.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/cli/run_ckptbench.hpp"

namespace ckpt {
namespace {

struct Outcome : cli_test::CommandResult {
  double seconds = 0;
};

Outcome ckptbench(const std::string& args) {
  const auto start = std::chrono::steady_clock::now();
  Outcome result{cli_test::run(args)};
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

TEST(CliBounds, LayoutRefusesAHugeDpAtOnce) {
  const Outcome r = ckptbench("layout --model llama3-8b --dp 1099511627776");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out,
            "ckptbench: error: command line: `--dp`: dp = 1099511627776 exceeds the largest value "
            "allowed, 1048576\n");
  EXPECT_LT(r.seconds, 5);
}

TEST(CliBounds, DryRunRefusesAHugeDpAtOnce) {
  const Outcome r = ckptbench(std::string("run ") + CKPT_SOURCE_DIR +
                              "/configs/quickstart.toml --dry-run --set parallel.dp=1099511627776");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out,
            "ckptbench: error: --set: `parallel.dp`: dp = 1099511627776 exceeds the largest value "
            "allowed, 1048576 "
            "(case 0 (1 of 3): strategy.mapping = \"file_per_tensor\")\n");
  EXPECT_LT(r.seconds, 5);
}

// Runs ckptbench ARGS; expects exit `status`, `fragment` in the output, within `seconds`.
void expect_run(const std::string& args, int status, const std::string& fragment, double seconds) {
  const Outcome r = ckptbench(args);
  EXPECT_EQ(r.status, status) << r.out;
  EXPECT_NE(r.out.find(fragment), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, seconds);
}

TEST(CliBounds, DryRunOfTheLargestWorldFinishesInSeconds) {
  expect_run(
      std::string("run ") + CKPT_SOURCE_DIR +
          "/configs/quickstart.toml --dry-run --set parallel.dp=1048576 --set parallel.zero=3 "
          "--set state.scope=full --set strategy.mapping=file_per_rank",
      2,
      "would fail: case 0: ranks.select: a dry run plans at most 16384 ranks, and this case "
      "selects "
      "1048576 of its 1048576 ranks; select a node (ranks.select = \"node\") or a list of ranks "
      "(ranks.select = \"list\")",
      10);
}

TEST(CliBounds, Llama405bOn16kGpusLayoutStillWorks) {
  expect_run(
      "layout --model llama3.1-405b --tp 8 --pp 16 --dp 128 --pp-first-stage-layers 7 "
      "--pp-last-stage-layers 7",
      0, "world size   16,384 ranks (128 write)", 10);
}

TEST(CliBounds, ClusterCampaignDryRunStillWorks) {
  expect_run(std::string("run ") + CKPT_SOURCE_DIR +
                 "/configs/cluster/llama3-405b-multinode.toml --dry-run --processes 4 --set "
                 "parallel.dp=128 "
                 "--set backend.name=null",
             0, "   0      32     6.75 GiB        40       440       6.22 GiB", 30);
}

}  // namespace
}  // namespace ckpt
