// The [training]/[engine] and model.sizing keys of a campaign.
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

using namespace campaign_test;

// [training] and [engine] (harness/engine): absent = no loop; numbers take floats or integers.
TEST(CampaignTraining, KeysParseSweepAndDefaultToNoLoop) {
  const Case plain = parse(kBase).cases.at(0);
  EXPECT_FALSE(plain.training.enabled());
  EXPECT_EQ(plain.engine.kind, EngineKind::sync);
  const Campaign c =
      parse(kBase +
            "[training]\niterations = 6\niteration_seconds = 0.5\nupdate_fraction = 1\n"
            "checkpoint_every = 3\ncompute = \"spin\"\n[engine]\nname = [\"sync\", \"async\", "
            "\"lazy\"]\nhost_pool_bytes = \"1 GiB\"\n");
  ASSERT_EQ(c.cases.size(), 3u);
  const Case& lazy = c.cases[2];
  EXPECT_EQ(lazy.training.iterations, 6);
  EXPECT_DOUBLE_EQ(lazy.training.iteration_seconds, 0.5);
  EXPECT_DOUBLE_EQ(lazy.training.update_fraction, 1.0);
  EXPECT_EQ(lazy.training.checkpoint_every, 3);
  EXPECT_EQ(lazy.training.compute, ComputeKind::spin);
  EXPECT_EQ(lazy.engine.kind, EngineKind::lazy);
  EXPECT_EQ(lazy.engine.host_pool_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(lazy.swept.at("engine.name"), "lazy");
  EXPECT_EQ(lazy.config.at("training").at("iteration_seconds"), 0.5);
}

TEST(CampaignTraining, ImpossibleValuesNameTheirKeys) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[training]\nupdate_fraction = 1.5\n",
       "c.toml:7: `training.update_fraction`: must be in [0, 1] (got 1.5)"},
      {"[training]\niteration_seconds = \"1 s\"\n",
       "c.toml:7: `training.iteration_seconds`: expected a number, found a string"},
      {"[training]\niterations = 2\ncheckpoint_every = 3\n",
       "c.toml:8: `training.checkpoint_every`: 3 is more than training.iterations = 2: no "
       "checkpoint would be taken"},
      {"[engine]\nname = \"async\"\n",
       "c.toml:7: `engine.name`: \"async\" runs inside the training loop: set training.iterations "
       "(> 0)"}};
  for (const auto& [tables, expected] : cases) EXPECT_EQ(message_of(kBase + tables), expected);
}

// Megatron's gathered distrib_optim.pt has no background save (Megatron's --async-save needs
// torch_dist); per_dp, megatron_dist and the sync loop are accepted.
TEST(CampaignTraining, AsyncOrLazyWithTheGatheredMegatronOptimizerIsRefused) {
  const std::string megatron = kBase +
                               "[parallel]\ndp = 4\nzero = 1\n[strategy]\nlayout = \"megatron\"\n"
                               "[training]\niterations = 2\n[engine]\nname = ";
  EXPECT_EQ(message_of(megatron + "\"async\"\n"),
            "c.toml:14: `engine.name`: \"async\" with strategy.layout = \"megatron\" and "
            "strategy.megatron_optimizer "
            "= \"gathered\": Megatron-LM's asynchronous save (--async-save) works only with the "
            "torch_dist checkpoint "
            "format, not with the gathered distrib_optim.pt; use strategy.layout = "
            "\"megatron_dist\" (torch_dist), "
            "strategy.megatron_optimizer = \"per_dp\" (no gather) or engine.name = \"sync\"");
  EXPECT_EQ(error_of(megatron + "\"lazy\"\n").key(), "engine.name");
  EXPECT_EQ(parse(megatron + "\"sync\"\n").cases.size(), 1u);
  EXPECT_EQ(parse(megatron + "\"async\"\n", {"strategy.megatron_optimizer=per_dp"}).cases.size(),
            1u);
  EXPECT_EQ(parse(megatron + "\"async\"\n", {"strategy.layout=megatron_dist"}).cases.size(), 1u);
}

}  // namespace
}  // namespace ckpt::harness

namespace ckpt::harness {
namespace {

TEST(CampaignSizing, DefaultExactAndASweepOverSizing) {
  EXPECT_EQ(parse(kBase).cases[0].state.sizing, workloads::Sizing::exact);
  const Campaign sweep =
      parse(with_model("sizing = [\"exact\", \"dlio\"]\n") + "[parallel]\ndp = 8\nzero = 3\n");
  ASSERT_EQ(sweep.cases.size(), 2u);
  EXPECT_EQ(sweep.cases[1].state.sizing, workloads::Sizing::dlio);
  const workloads::Layout exact(sweep.cases[0].model, sweep.cases[0].parallel,
                                sweep.cases[0].state);
  const workloads::Layout dlio(sweep.cases[1].model, sweep.cases[1].parallel, sweep.cases[1].state);
  EXPECT_EQ(exact.checkpoint_bytes(), 112'423'657'472);
  EXPECT_EQ(dlio.checkpoint_bytes(), 112'425'623'552);
}

TEST(CampaignSizing, ErrorsNameModelSizing) {
  EXPECT_EQ(
      message_of(with_model("sizing = \"mlperf\"\n")),
      "c.toml:3: `model.sizing`: unknown value \"mlperf\", expected one of \"exact\", \"dlio\"");
  const ConfigError moe = error_of(
      "[model]\nname = \"mixtral-8x7b\"\nsizing = \"dlio\"\n[campaign]\nname = \"t\"\n"
      "target = \"out\"\n");
  EXPECT_EQ(moe.key(), "model.sizing");
  EXPECT_NE(std::string(moe.what()).find("it is a mixture of experts"), std::string::npos)
      << moe.what();
}

}  // namespace
}  // namespace ckpt::harness
