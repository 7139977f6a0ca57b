// The [load] keys of a campaign (the load phase): defaults shared with `ckptbench load`
// (LoadSettings), a sweep over load.method, the inference layout, and one clear error per bad
// value.
#include <set>

#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

using namespace campaign_test;

TEST(CampaignLoad, DefaultsAreTheLoaderDefaultsAndTheCheckpointTp) {
  const Case c = parse(kBase + "[parallel]\ntp = 2\n").cases.at(0);
  const LoadSettings defaults;
  EXPECT_EQ(c.load.settings.method, defaults.method);
  EXPECT_EQ(c.load.settings.threads, 4);
  EXPECT_EQ(c.load.settings.direct, false);
  EXPECT_EQ(c.load.settings.chunk_bytes, std::uint64_t{32} << 20);
  EXPECT_EQ(c.load.settings.pool_bytes, std::uint64_t{4} << 30);
  EXPECT_EQ(c.load.inference.parallel.tp, 2);
  EXPECT_EQ(c.load.inference.gap_bytes, kLoadGapBytes);
  EXPECT_EQ(kLoadGapBytes, 65536u);
  EXPECT_EQ(c.config.at("load").at("gap_bytes"), 65536);
  EXPECT_EQ(c.load.inference.parallel.pp, 1);
  EXPECT_EQ(c.load.inference.parallel.dp, 1);
  EXPECT_EQ(c.load.inference.state.scope, workloads::StateScope::weights);
  EXPECT_TRUE(c.load.inference.reshard);
  EXPECT_EQ(c.config.at("load").at("method"), "pipelined");
  EXPECT_EQ(c.config.at("load").at("tp"), 0);
}

TEST(CampaignLoad, KeysParseAndLoadMethodSweeps) {
  const Campaign c =
      parse(kBase +
            "phase = \"load\"\n[load]\nmethod = [\"pipelined\", \"mmap\", \"read\"]\n"
            "threads = 8\ndirect = true\nchunk_bytes = \"4 MiB\"\npool_bytes = \"64 MiB\"\ntp = 4\n"
            "gap_bytes = \"4 KiB\"\n");
  ASSERT_EQ(c.cases.size(), 3u);
  EXPECT_EQ(c.cases[0].load.settings.method, LoadMethod::pipelined);
  EXPECT_EQ(c.cases[1].load.settings.method, LoadMethod::mmap);
  EXPECT_EQ(c.cases[2].load.settings.method, LoadMethod::read);
  EXPECT_EQ(c.cases[2].swept.at("load.method"), "read");
  const Case& read = c.cases[2];
  EXPECT_EQ(read.phase, PhaseSelection::load);
  EXPECT_EQ(read.load.settings.threads, 8);
  EXPECT_TRUE(read.load.settings.direct);
  EXPECT_EQ(read.load.settings.chunk_bytes, std::uint64_t{4} << 20);
  EXPECT_EQ(read.load.settings.pool_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(read.load.inference.parallel.tp, 4);
  EXPECT_EQ(read.load.inference.gap_bytes, 4096u);
  EXPECT_EQ(parse(kBase + "[load]\ngap_bytes = 0\n").cases.at(0).load.inference.gap_bytes, 0u);
}

TEST(CampaignLoad, BadValuesNameTheirKeys) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[load]\nthreads = 0\n", "c.toml:7: `load.threads`: must be at least 1 (got 0)"},
      {"[load]\nmethod = \"foo\"\n", "load.method"},
      {"[load]\nchunk_bytes = 5000\n",
       "c.toml:7: `load.chunk_bytes`: load.chunk_bytes = 5000 must be a multiple of 4096"},
      {"[load]\nchunk_bytes = \"8 MiB\"\npool_bytes = \"4 MiB\"\n",
       "`load.pool_bytes`: load.pool_bytes = 4194304 must hold"},
      // llama3-8b: 32 attention heads, 8 KV heads.
      {"[load]\ntp = 3\n", "`load.tp`: load.tp = 3: "},
      {"[load]\ngap_bytes = -1\n",
       "c.toml:7: `load.gap_bytes`: a size must not be negative (got -1)"},
      {"[load]\ngap_bytes = \"many\"\n", "c.toml:7: `load.gap_bytes`: "}};
  for (const auto& [tables, expected] : cases) {
    const std::string message = message_of(kBase + tables);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  EXPECT_EQ(error_of(kBase + "[load]\nmethod = \"foo\"\n").key(), "load.method");
  EXPECT_EQ(error_of(kBase + "[load]\ntp = 3\n").key(), "load.tp");
  EXPECT_EQ(error_of(kBase + "[load]\ngap_bytes = \"many\"\n").key(), "load.gap_bytes");
}

// load.cooperative and a resharded restore.replicas = "cooperative": what they cannot read is
// refused naming the key; off, neither is in the config (config hashes as before).
TEST(CampaignLoad, CooperativeReadsParseAndRefuseWhatTheyCannotRead) {
  const Case plain = parse(kBase).cases.at(0);
  EXPECT_FALSE(plain.load.cooperative);
  EXPECT_FALSE(plain.config.at("load").contains("cooperative"));
  const Case on = parse(kBase + "[load]\ncooperative = true\n").cases.at(0);
  EXPECT_TRUE(on.load.cooperative);
  EXPECT_EQ(on.config.at("load").at("cooperative"), true);
  const Case reshard = parse(kBase + "[restore]\ntp = 2\nreplicas = \"cooperative\"\n").cases.at(0);
  EXPECT_EQ(reshard.restore.replicas, ReplicaRead::cooperative);
  EXPECT_TRUE(reshard.restore.reshard);
  const std::vector<std::pair<std::string, std::string>> refused{
      {"[load]\ncooperative = true\ndirect = true\n", "load.direct"},
      {"[load]\ncooperative = true\n[backend]\ndirect = true\n", "backend.direct"},
      {"[load]\ncooperative = true\n[memory]\nspace = \"cuda\"\n", "memory.space"},
      {"[load]\ncooperative = true\n[strategy]\ncompression = \"zstd\"\n", "strategy.compression"},
      {"[restore]\ntp = 2\nreplicas = \"read\"\n", "restore.tp"}};
  for (const auto& [tables, key] : refused) {
    SCOPED_TRACE(tables);
    EXPECT_EQ(error_of(kBase + tables).key(), key);
  }
  EXPECT_NE(message_of(kBase + "[load]\ncooperative = true\ndirect = true\n")
                .find("or set load.cooperative = false"),
            std::string::npos);
  EXPECT_EQ(
      error_of(kBase +
               "[parallel]\ndp = 2\n[strategy]\nlayout = \"megatron_dist\"\n[restore]\nreplicas = "
               "\"cooperative\"\n")
          .key(),
      "strategy.layout");
  // The new layout's DP replicas get copies across all of DP, which expert tensors are not.
  const std::string moe =
      "[model]\nname = \"mixtral-8x7b\"\n[campaign]\nname = \"t\"\ntarget = "
      "\"out\"\n[parallel]\ndp = 4\n[restore]\nreplicas = \"cooperative\"\n";
  EXPECT_EQ(parse(moe + "tp = 2\n").cases.at(0).restore.parallel.ep, 1);
  EXPECT_EQ(error_of(moe + "ep = 2\n").key(), "restore.ep");
  EXPECT_NE(message_of(moe + "ep = 2\n").find("expert group only: use restore.ep = 1"),
            std::string::npos);
}

}  // namespace
}  // namespace ckpt::harness

namespace ckpt::harness {
namespace {

using namespace campaign_test;

// A sweep over load.* loads one checkpoint: the first case that differs in [load] keys only.
TEST(CampaignLoad, CasesDifferingInLoadKeysOnlyLoadTheFirstOnesCheckpoint) {
  const Campaign c = parse(kBase +
                           "[strategy]\nmapping = [\"file_per_rank\", \"shared_file\"]\n"
                           "[load]\nmethod = [\"pipelined\", \"mmap\", \"read\"]\n");
  ASSERT_EQ(c.cases.size(), 6u);
  for (const Case& k : c.cases) {
    const auto first = std::find_if(c.cases.begin(), c.cases.end(),
                                    [&k](const Case& o) { return o.mapping == k.mapping; });
    EXPECT_EQ(k.load.source_index, first->index) << "case " << k.index;
  }
  std::set<std::int64_t> sources;
  for (const Case& k : c.cases) sources.insert(k.load.source_index);
  EXPECT_EQ(sources.size(), 2u);  // one checkpoint per mapping
  EXPECT_EQ(parse(kBase).cases.at(0).load.source_index, 0);
}

}  // namespace
}  // namespace ckpt::harness
