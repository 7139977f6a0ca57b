// `ckptbench keys` as a user runs it: the listing, its selection, JSON, Markdown and errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/campaign/campaign_schema.hpp"
#include "tests/cli/run_ckptbench.hpp"

namespace {

using ckpt::cli_test::CommandResult;
using ckpt::cli_test::run;

nlohmann::json keys_json(const std::string& args) {
  const CommandResult r = run("keys " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

std::vector<std::string> names(const nlohmann::json& listing) {
  std::vector<std::string> keys;
  for (const nlohmann::json& key : listing) keys.push_back(key.at("key"));
  return keys;
}

TEST(KeysCli, JsonListsEveryKeyOfTheSchemaWithItsHelp) {
  const nlohmann::json all = keys_json("");
  ASSERT_EQ(all.size(), ckpt::harness::schema::keys().size());
  EXPECT_EQ(all.front().at("key"), "campaign.name");
  for (const nlohmann::json& key : all)
    EXPECT_FALSE(key.at("help").get<std::string>().empty()) << key;
  const nlohmann::json iterations = keys_json("campaign.iterations").at(0);
  EXPECT_EQ(iterations, nlohmann::json::parse(R"({"key": "campaign.iterations", "table": "campaign",
      "type": "integer", "default": 3, "required": false, "sweepable": true, "accepts": "1–2147483647",
      "min": 1, "max": 2147483647, "help": "timed checkpoint and restore iterations per case"})"));
  const nlohmann::json name = keys_json("campaign.name").at(0);
  EXPECT_EQ(name.at("default"), nullptr);
  EXPECT_EQ(name.at("required"), true);
  EXPECT_EQ(name.at("sweepable"), false);
}

TEST(KeysCli, APrefixSelectsATableOrOneKey) {
  EXPECT_EQ(names(keys_json("load")),
            (std::vector<std::string>{"load.method", "load.threads", "load.direct",
                                      "load.chunk_bytes", "load.pool_bytes", "load.tp",
                                      "load.gap_bytes", "load.cooperative"}));
  EXPECT_EQ(names(keys_json("backend.sync")), std::vector<std::string>{"backend.sync"});
  EXPECT_EQ(names(keys_json("backend.posix")),
            std::vector<std::string>{"backend.posix.throttle_percent"});
  // "backend" is the [backend] table and every backend's own table beneath it; "back" is neither.
  const std::vector<std::string> backend = names(keys_json("backend"));
  EXPECT_EQ(backend.front(), "backend.name");
  EXPECT_EQ(backend.back(), ckpt::harness::schema::keys().back().dotted());
  for (const std::string& key : backend) EXPECT_EQ(key.rfind("backend.", 0), 0u) << key;
}

TEST(KeysCli, TextShowsDefaultAcceptsAndTheHelpBelow) {
  const CommandResult r = run("keys campaign.iterations");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "key                                  default          accepts\ncampaign.iterations    "
            "              3                1–2147483647\n    timed checkpoint and restore "
            "iterations per case\n");
  const CommandResult sizes = run("keys memory.staging_bytes");
  EXPECT_NE(
      sizes.out.find("\nmemory.staging_bytes                 64 MiB           ≥ 4096 bytes\n"),
      std::string::npos)
      << sizes.out;
  const CommandResult fixed = run("keys campaign.name");
  EXPECT_NE(
      fixed.out.find(
          "\ncampaign.name                        required         text (one value, no sweep)\n    "
          "names the results directory and the checkpoint directory <target>/<name>: one path "
          "component (no\n    '/', not '.' or '..', at most 200 bytes)\n"),
      std::string::npos)
      << fixed.out;
}

TEST(KeysCli, MarkdownIsOneTablePerCampaignTable) {
  const CommandResult r = run("keys restore.gap_bytes --markdown");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "### [restore]\n\n| key | default | accepts | sweep | meaning "
            "|\n|---|---|---|---|---|\n| `restore.gap_bytes` | 0 | ≥ 0 bytes | yes | exact reads: "
            "pieces one new shard needs from one stored piece at most this many bytes apart are "
            "one request, the gaps read and dropped (amplification); 0: exact ranges only |\n");
  // '<' would open an HTML tag in a Markdown cell.
  EXPECT_NE(
      run("keys campaign.name --markdown").out.find("directory \\<target>/\\<name>: one path"),
      std::string::npos);
  const std::string parallel = run("keys parallel --markdown").out;
  EXPECT_EQ(parallel.rfind("### [parallel]\n", 0), 0u) << parallel;
  EXPECT_NE(parallel.find("| `parallel.zero` | 0 | 0–2147483647 | yes | "), std::string::npos)
      << parallel;
}

TEST(KeysCli, AnUnknownPrefixIsRefusedNamingTheClosest) {
  const CommandResult typo = run("keys lod");
  EXPECT_EQ(typo.status, 2);
  EXPECT_EQ(typo.out,
            "ckptbench: error: keys: `lod` is no campaign table or key — did you mean `load`?\n");
  const CommandResult key = run("keys strategy.maping");
  EXPECT_EQ(key.status, 2);
  EXPECT_EQ(key.out,
            "ckptbench: error: keys: `strategy.maping` is no campaign table or key — did you mean "
            "`strategy.mapping`?\n");
  const CommandResult far = run("keys zzzzzzzzzzzz");
  EXPECT_EQ(far.status, 2);
  EXPECT_EQ(far.out,
            "ckptbench: error: keys: `zzzzzzzzzzzz` is no campaign table or key — `ckptbench keys` "
            "lists every key\n");
  EXPECT_EQ(run("keys --json --markdown").status, 2);
}

}  // namespace
