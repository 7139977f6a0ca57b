#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

using namespace campaign_test;
using test_support::TempDir;
namespace fs = std::filesystem;
using nlohmann::json;

TEST(Campaign, DefaultsFillEveryKey) {
  const Campaign campaign = parse(kBase);
  EXPECT_EQ(campaign.name, "t");
  EXPECT_EQ(campaign.source, "c.toml");
  ASSERT_EQ(campaign.cases.size(), 1u);
  const Case& c = campaign.cases[0];
  EXPECT_EQ(c.campaign, "t");
  EXPECT_EQ(c.source, "c.toml");
  EXPECT_EQ(c.index, 0);
  EXPECT_EQ(c.swept, json::object());
  EXPECT_EQ(c.model_argument, "llama3-8b");
  EXPECT_EQ(c.model.name, "llama3-8b");
  EXPECT_EQ(c.model.hidden_size, 4096);
  EXPECT_EQ(c.scale, 1);
  EXPECT_EQ(c.parallel.tp, 1);
  EXPECT_EQ(c.parallel.pp, 1);
  EXPECT_EQ(c.parallel.dp, 1);
  EXPECT_EQ(c.parallel.ep, 1);
  EXPECT_EQ(c.parallel.zero_stage, 0);
  EXPECT_EQ(c.parallel.vocab_divisor, 128);
  EXPECT_EQ(c.state.scope, workloads::StateScope::full);
  EXPECT_FALSE(c.state.naming.has_value());
  EXPECT_EQ(c.state.weight_dtype, workloads::Dtype::bf16);
  EXPECT_EQ(c.state.master_dtype, workloads::Dtype::fp32);
  EXPECT_EQ(c.state.optimizer_dtype, workloads::Dtype::fp32);
  EXPECT_EQ(c.ranks.select, RankSelect::all);
  EXPECT_TRUE(c.ranks.list.empty());
  EXPECT_EQ(c.ranks.node, 0);
  EXPECT_EQ(c.ranks.gpus_per_node, 8);
  EXPECT_EQ(c.mapping, Mapping::file_per_rank);
  EXPECT_EQ(c.directory_layout, DirectoryLayout::dcp);
  EXPECT_EQ(c.alignment, 0u);
  EXPECT_EQ(c.chunk_bytes, 0u);
  EXPECT_EQ(c.coalesce_bytes, 0u);
  EXPECT_EQ(c.backend, "posix");
  EXPECT_FALSE(c.io.direct);
  EXPECT_EQ(c.io.direct_alignment, 4096u);
  EXPECT_EQ(c.io.sync, backends::SyncPolicy::fsync);
  EXPECT_FALSE(c.io.fallocate);
  EXPECT_EQ(c.io.threads, 1);
  EXPECT_EQ(c.io.queue_depth, 1);
  EXPECT_EQ(c.data, DataPattern::random);
  EXPECT_EQ(c.seed, 1u);
  EXPECT_TRUE(c.verify);
  EXPECT_EQ(c.cache, CachePolicy::drop);
  EXPECT_EQ(c.iterations, 3);
  EXPECT_EQ(c.warmup, 1);
  EXPECT_EQ(c.phase, PhaseSelection::both);
  EXPECT_EQ(c.target, fs::current_path() / "out");
  EXPECT_FALSE(c.create_target);
  EXPECT_FALSE(c.overwrite);
  EXPECT_FALSE(c.keep);
  EXPECT_EQ(c.memory_budget, 0u);
}

TEST(Campaign, ConfigHoldsEveryKeyAsTheUserSeesIt) {
  const json config = parse(kBase).cases.at(0).config;
  const json expected = json::parse(R"({
    "campaign": {"name": "t", "target": "out", "create_target": false, "overwrite": false,
                 "keep": false, "iterations": 3, "warmup": 1, "phase": "both", "memory_budget": 0,
                 "mpi_io": "default"},
    "model": {"name": "llama3-8b", "scale": 1, "sizing": "exact"},
    "parallel": {"tp": 1, "pp": 1, "dp": 1, "ep": 1, "zero": 0,
                 "vocab_divisor": 128, "pp_first_stage_layers": 0, "pp_last_stage_layers": 0},
    "state": {"scope": "full", "naming": null, "weight_dtype": "bf16", "master_dtype": "fp32",
              "optimizer_dtype": "fp32"},
    "ranks": {"select": "all", "list": [], "node": 0, "gpus_per_node": 8},
    "strategy": {"mapping": "file_per_rank", "layout": "dcp", "megatron_optimizer": "gathered", "writer_threads": 2, "alignment": 0, "chunk_bytes": 0,
                 "coalesce_bytes": 0, "format": "raw", "framing": "on", "max_shard_bytes": 5000000000},
    "backend": {"name": "posix", "direct": false, "sync": "fsync", "fallocate": false,
                "threads": 1, "queue_depth": 1, "sqpoll": false, "direct_alignment": 4096,
                "posix": {"throttle_percent": 0},
                "mpiio": {"collective": false, "hints": {}},
                "hdf5": {"collective": true, "collective_opt": "collective_io", "layout": "contiguous", "shapes": "scaled",
                         "alignment": 0,
                         "alignment_threshold": 65536, "collective_metadata": true, "hints": {}},
                "gds": {"library": "libcufile.so.0", "register_buffers": true, "batch": false},
                "s3": {"endpoint": "", "endpoint_choice": "rank", "bucket": "", "prefix": "",
                       "region": "us-east-1", "addressing": "path", "part_size": 16777216,
                       "concurrency": 8, "retries": 5, "backoff_ms": 100, "ca_file": ""},
                "skeleton": {"block_bytes": 1048576}},
    "data": {"pattern": "random", "seed": 1, "verify": true},
    "cache": {"policy": "drop"}
  })");
  for (const auto& [table, keys] : expected.items()) {
    EXPECT_EQ(config.at(table), keys) << table << ": " << config.at(table).dump(2);
  }
}

// strategy.max_shard_bytes defaults to transformers 5's 50 GB; a raw case, which the key does
// not size, records transformers 4's 5 GB so that its config_hash is the one it had.
TEST(Campaign, MaxShardBytesIsTransformers5sDefaultAndRawCasesKeepTheirConfig) {
  const Campaign campaign = parse(kBase + "[strategy]\nformat = [\"safetensors\", \"raw\"]\n");
  ASSERT_EQ(campaign.cases.size(), 2u);
  for (const Case& c : campaign.cases) EXPECT_EQ(c.max_shard_bytes, 50'000'000'000u);
  EXPECT_EQ(campaign.cases[0].config.at("strategy").at("max_shard_bytes"), 50'000'000'000);
  EXPECT_EQ(campaign.cases[1].config.at("strategy").at("max_shard_bytes"), 5'000'000'000);
}

TEST(Campaign, BackendTablesReachOnlyTheirBackend) {
  const Campaign campaign = parse(kBase + R"([backend]
name = ["mpiio", "hdf5", "posix"]
[backend.mpiio]
collective = true
hints = { romio_cb_write = "enable", cb_nodes = 4 }
[backend.hdf5]
layout = "chunked"
alignment = "1 MiB"
)");
  ASSERT_EQ(campaign.cases.size(), 3u);
  const backends::BackendOptions mpiio{
      {"collective", "true"}, {"hints.cb_nodes", "4"}, {"hints.romio_cb_write", "enable"}};
  EXPECT_EQ(campaign.cases[0].backend_options, mpiio);
  const backends::BackendOptions hdf5{{"collective", "true"},
                                      {"layout", "chunked"},
                                      {"alignment", "1048576"},
                                      {"alignment_threshold", "65536"},
                                      {"collective_metadata", "true"},
                                      {"shapes", "scaled"},
                                      {"collective_opt", "collective_io"}};
  EXPECT_EQ(campaign.cases[1].backend_options, hdf5);
  EXPECT_EQ(campaign.cases[2].backend_options,
            (backends::BackendOptions{{"throttle_percent", "0"}}));  // its default
  EXPECT_EQ(campaign.cases[0].config["backend"]["mpiio"]["hints"],
            json::parse(R"({"romio_cb_write": "enable", "cb_nodes": "4"})"));
}

// One declaration per option: for every backend, the default `ckptbench backends` lists is the
// default a campaign applies and the value OptionValues (which every backend parses with) gives.
TEST(Campaign, EveryBackendOptionDefaultIsTheSameInTheListingTheCampaignAndTheBackend) {
  for (const backends::BackendInfo& info : backends::list_backends()) {
    const Campaign campaign = parse(kBase + "[backend]\nname = \"" + info.name + "\"\n");
    const backends::BackendOptions& applied = campaign.cases.front().backend_options;
    const backends::OptionValues used(info.name, info.options, {});
    std::size_t plain = 0;
    for (const backends::OptionSpec& option : info.options) {
      if (option.type == backends::OptionType::string_map) {
        EXPECT_TRUE(used.sub_keys(option.name).empty()) << info.name << "." << option.name;
        continue;
      }
      ++plain;
      ASSERT_TRUE(applied.contains(option.name)) << info.name << "." << option.name;
      EXPECT_EQ(applied.at(option.name), option.default_value) << info.name << "." << option.name;
      EXPECT_EQ(used.all().at(option.name), option.default_value)
          << info.name << "." << option.name;
    }
    EXPECT_EQ(applied.size(), plain)
        << info.name << ": the campaign applies exactly the listed options";
  }
}

TEST(Campaign, ATableOfABackendNoCaseUsesIsNoted) {
  const Campaign campaign =
      parse(kBase + "[backend]\nname = \"posix\"\n[backend.hdf5]\nlayout = \"chunked\"\n");
  EXPECT_EQ(campaign.notes,
            std::vector<std::string>{
                "c.toml:9: [backend.hdf5] is ignored: no case uses backend.name = \"hdf5\""});
  EXPECT_TRUE(parse(kBase + "[backend]\nname = \"hdf5\"\n[backend.hdf5]\nlayout = \"chunked\"\n")
                  .notes.empty());
}

TEST(Campaign, BackendTablesSweepAndTakeOverrides) {
  const Campaign campaign = parse(
      kBase +
          "[backend]\nname = \"hdf5\"\n[backend.hdf5]\nlayout = [\"contiguous\", \"chunked\"]\n",
      {"backend.hdf5.collective=false", "backend.mpiio.hints={ striping_factor = \"8\" }"});
  ASSERT_EQ(campaign.cases.size(), 2u);
  EXPECT_EQ(campaign.cases[1].backend_options.at("layout"), "chunked");
  EXPECT_EQ(campaign.cases[1].swept, json::parse(R"({"backend.hdf5.layout": "chunked"})"));
  EXPECT_EQ(campaign.cases[0].backend_options.at("collective"), "false");
  EXPECT_EQ(campaign.cases[0].config["backend"]["mpiio"]["hints"]["striping_factor"], "8");
}

TEST(Campaign, BackendTableErrorsNameTheKey) {
  EXPECT_EQ(message_of(kBase + "[backend.mpiio]\ncolective = true\n"),
            "c.toml:7: `backend.mpiio.colective`: unknown key — did you mean `collective`?");
  EXPECT_EQ(
      message_of(kBase + "[backend.hdf5]\nlayout = \"chunky\"\n"),
      "c.toml:7: `backend.hdf5.layout`: unknown value \"chunky\", expected one of \"contiguous\", "
      "\"chunked\" — did you mean `chunked`?");
  EXPECT_EQ(message_of(kBase + "[backend.mpiio]\nhints = { cb_nodes = true }\n"),
            "c.toml:7: `backend.mpiio.hints`: value of `cb_nodes`: expected a string or an "
            "integer, found a "
            "boolean");
  EXPECT_EQ(message_of(kBase + "[backend.mpio]\ncollective = true\n"),
            "c.toml:6: `backend.mpio`: unknown backend table — did you mean `mpiio`?");
  EXPECT_EQ(message_of(kBase, {"backend.hdf5.layot=chunked"}),
            "--set: `backend.hdf5.layot`: unknown key — did you mean `backend.hdf5.layout`?");
}

// Every key set to a value other than its default.
Case every_key_case() {
  const Campaign campaign = parse(with_model("scale = 4\n") + R"(create_target = true
overwrite = true
keep = true
iterations = 5
warmup = 0
phase = "restore"
memory_budget = "2 GiB"
[parallel]
tp = 2
pp = 2
dp = 4
zero = 1
vocab_divisor = 64
[state]
scope = "weights"
naming = "megatron"
weight_dtype = "fp16"
master_dtype = "none"
optimizer_dtype = "bf16"
[ranks]
select = "list"
list = [3, 1]
[strategy]
mapping = "shared_file"
layout = "deepspeed"
alignment = 512
chunk_bytes = "64 MiB"
coalesce_bytes = 1048576
[backend]
name = "null"
sync = "fdatasync"
fallocate = true
threads = 4
queue_depth = 32
[data]
pattern = "zeros"
seed = 0
verify = false
[cache]
policy = "read_shift"
)");
  if (campaign.cases.size() != 1) throw std::logic_error("expected one case");
  return campaign.cases[0];
}

TEST(Campaign, EveryKeyIsReadCampaignToRanks) {
  const Case c = every_key_case();
  EXPECT_EQ(c.scale, 4);
  EXPECT_TRUE(c.create_target && c.overwrite && c.keep);
  EXPECT_EQ(c.iterations, 5);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.phase, PhaseSelection::restore);
  EXPECT_EQ(c.memory_budget, 2147483648u);
  EXPECT_EQ(c.parallel.tp, 2);
  EXPECT_EQ(c.parallel.pp, 2);
  EXPECT_EQ(c.parallel.dp, 4);
  EXPECT_EQ(c.parallel.zero_stage, 1);
  EXPECT_EQ(c.parallel.vocab_divisor, 64);
  EXPECT_EQ(c.state.scope, workloads::StateScope::weights);
  EXPECT_EQ(c.state.naming, workloads::Naming::megatron);
  EXPECT_EQ(c.state.weight_dtype, workloads::Dtype::fp16);
  EXPECT_FALSE(c.state.master_dtype.has_value());
  EXPECT_EQ(c.state.optimizer_dtype, workloads::Dtype::bf16);
  EXPECT_EQ(c.ranks.select, RankSelect::list);
  EXPECT_EQ(c.ranks.list, (std::vector<std::int64_t>{3, 1}));
}

TEST(Campaign, EveryKeyIsReadStrategyToCache) {
  const Case c = every_key_case();
  EXPECT_EQ(c.mapping, Mapping::shared_file);
  EXPECT_EQ(c.directory_layout, DirectoryLayout::deepspeed);
  EXPECT_EQ(c.alignment, 512u);
  EXPECT_EQ(c.chunk_bytes, 67108864u);
  EXPECT_EQ(c.coalesce_bytes, 1048576u);
  EXPECT_EQ(c.backend, "null");
  EXPECT_EQ(c.io.sync, backends::SyncPolicy::fdatasync);
  EXPECT_TRUE(c.io.fallocate);
  EXPECT_EQ(c.io.threads, 4);
  EXPECT_EQ(c.io.queue_depth, 32);
  EXPECT_EQ(c.data, DataPattern::zeros);
  EXPECT_EQ(c.seed, 0u);
  EXPECT_FALSE(c.verify);
  EXPECT_EQ(c.cache, CachePolicy::read_shift);
  EXPECT_EQ(c.config["state"]["master_dtype"], "none");
  EXPECT_EQ(c.config["ranks"]["list"], json::parse("[3, 1]"));
  EXPECT_EQ(c.config["campaign"]["memory_budget"], 2147483648);
}

TEST(Campaign, SweepExpandsToTheCartesianProductLastKeyFastest) {
  const Campaign campaign = parse(kBase + R"([strategy]
mapping = ["file_per_rank", "shared_file"]
[backend]
threads = [1, 2, 4]
)");
  ASSERT_EQ(campaign.cases.size(), 6u);
  const std::vector<std::pair<Mapping, int>> expected{
      {Mapping::file_per_rank, 1}, {Mapping::file_per_rank, 2}, {Mapping::file_per_rank, 4},
      {Mapping::shared_file, 1},   {Mapping::shared_file, 2},   {Mapping::shared_file, 4}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Case& c = campaign.cases[i];
    EXPECT_EQ(c.index, static_cast<std::int64_t>(i));
    EXPECT_EQ(c.mapping, expected[i].first) << i;
    EXPECT_EQ(c.io.threads, expected[i].second) << i;
  }
  EXPECT_EQ(campaign.cases[4].swept,
            json::parse(R"({"strategy.mapping": "shared_file", "backend.threads": 2})"));
  EXPECT_EQ(campaign.cases[4].config["strategy"]["mapping"], "shared_file");
  EXPECT_EQ(campaign.cases[4].config["backend"]["threads"], 2);
  EXPECT_EQ(campaign.cases[4].config["backend"]["queue_depth"], 1);
}

TEST(Campaign, SweepOrderFollowsTheFileNotTheSchema) {
  const Campaign campaign = parse(kBase + R"([backend]
threads = [1, 2]
[strategy]
mapping = ["file_per_rank", "shared_file", "file_per_tensor"]
)");
  ASSERT_EQ(campaign.cases.size(), 6u);
  EXPECT_EQ(campaign.cases[1].io.threads, 1);
  EXPECT_EQ(campaign.cases[1].mapping, Mapping::shared_file);
  EXPECT_EQ(campaign.cases[3].io.threads, 2);
  EXPECT_EQ(campaign.cases[3].mapping, Mapping::file_per_rank);
}

TEST(Campaign, ASingleValueInBracketsIsASweepOfOne) {
  const Campaign campaign = parse(kBase + "iterations = [2]\n");
  ASSERT_EQ(campaign.cases.size(), 1u);
  EXPECT_EQ(campaign.cases[0].iterations, 2);
  EXPECT_EQ(campaign.cases[0].swept, json::parse(R"({"campaign.iterations": 2})"));
}

TEST(Campaign, SizesAcceptUnits) {
  const Case c = parse(kBase + R"(memory_budget = "4 MiB"
[strategy]
alignment = "1GB"
chunk_bytes = "1.5KiB"
coalesce_bytes = "4096"
[backend]
direct_alignment = "512 B"
)")
                     .cases.at(0);
  EXPECT_EQ(c.memory_budget, 4194304u);
  EXPECT_EQ(c.alignment, 1000000000u);
  EXPECT_EQ(c.chunk_bytes, 1536u);
  EXPECT_EQ(c.coalesce_bytes, 4096u);
  EXPECT_EQ(c.io.direct_alignment, 512u);
  EXPECT_EQ(c.config["campaign"]["memory_budget"], 4194304);
  EXPECT_EQ(c.config["strategy"]["alignment"], 1000000000);

  const auto budget = [](const std::string& value) {
    return parse(kBase + "memory_budget = " + value + "\n").cases.at(0).memory_budget;
  };
  EXPECT_EQ(budget("\"2 KB\""), 2000u);
  EXPECT_EQ(budget("\"3 TiB\""), 3298534883328u);
  EXPECT_EQ(budget("\"1.5 GB\""), 1500000000u);
  EXPECT_EQ(budget("\"0.5 KiB\""), 512u);
  EXPECT_EQ(budget("\"1.250 MB\""), 1250000u);
  EXPECT_EQ(budget("7"), 7u);
}

TEST(Campaign, BadSizesNameTheKeyAndLine) {
  const auto message = [](const std::string& value) {
    return message_of(kBase + "memory_budget = " + value + "\n");
  };
  EXPECT_EQ(message("-5"),
            "c.toml:6: `campaign.memory_budget`: a size must not be negative (got -5)");
  EXPECT_EQ(message("\"-1 MiB\""),
            "c.toml:6: `campaign.memory_budget`: a size must not be negative (got \"-1 MiB\")");
  EXPECT_EQ(
      message("\"4 MB2\""),
      "c.toml:6: `campaign.memory_budget`: \"4 MB2\" is not a size: expected a number and a unit, "
      "one of B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g. \"4 "
      "MiB\"");
  EXPECT_NE(message("\"4 mib\"").find("\"4 mib\" is not a size"), std::string::npos);
  EXPECT_EQ(message("\"1.3 B\""),
            "c.toml:6: `campaign.memory_budget`: \"1.3 B\" is not a whole number of bytes");
  EXPECT_EQ(message("\"9000000 TiB\""),
            "c.toml:6: `campaign.memory_budget`: \"9000000 TiB\" is too large (at most 8 EiB)");
  EXPECT_EQ(
      message("1.5"),
      "c.toml:6: `campaign.memory_budget`: expected a size (an integer number of bytes or a string "
      "such as \"4 MiB\"), found a float");
}

TEST(Campaign, UnknownKeySuggestsTheClosestKeyOfItsTable) {
  EXPECT_EQ(message_of(kBase + "[backend]\nthread = 4\n"),
            "c.toml:7: `backend.thread`: unknown key — did you mean `threads`?");
  const ConfigError e = error_of(kBase + "[backend]\nthread = 4\n");
  EXPECT_EQ(e.source(), "c.toml");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.key(), "backend.thread");
  EXPECT_EQ(message_of(kBase + "[cache]\nflavour = 1\n"),
            "c.toml:7: `cache.flavour`: unknown key ([cache] takes policy)");
  EXPECT_EQ(message_of(kBase + "[backend.uring]\nqdepth = 4\n"),
            "c.toml:6: `backend.uring`: unknown backend table (backends with options: posix, "
            "mpiio, hdf5, gds, s3, skeleton; "
            "the others take only [backend] keys)");
}

TEST(Campaign, UnknownTableSuggestsTheClosestTable) {
  EXPECT_EQ(message_of(kBase + "[bakend]\nthreads = 4\n"),
            "c.toml:6: `bakend`: unknown table — did you mean `backend`?");
  EXPECT_EQ(message_of(kBase + "[storage]\n"),
            "c.toml:6: `storage`: unknown table (tables: campaign, model, parallel, state, ranks, "
            "strategy, backend, data, memory, cache, training, engine, tiers, restore, load, "
            "measure, mlperf)");
  EXPECT_EQ(message_of("seed = 3\n" + kBase),
            "c.toml:1: `seed`: unknown key outside any table — did you mean `seed` under [data]?");
  EXPECT_EQ(message_of("data = 3\n" + kBase),
            "c.toml:1: `data`: expected a table ([data]), found an integer");
}

// The rank selection keys are bounded by the largest world (1,048,576 ranks), so that
// node × gpus_per_node cannot overflow and a list cannot drive unbounded work.
TEST(Campaign, RankSelectionKeysAreBoundedByTheLargestWorld) {
  EXPECT_EQ(message_of(kBase + "[ranks]\nselect = \"node\"\ngpus_per_node = 9223372036854775807\n"),
            "c.toml:8: `ranks.gpus_per_node`: must be at most 1048576 (got 9223372036854775807)");
  EXPECT_EQ(message_of(kBase + "[ranks]\nselect = \"node\"\nnode = 1048576\n"),
            "c.toml:8: `ranks.node`: must be at most 1048575 (got 1048576)");
  std::string list = "[ranks]\nselect = \"list\"\nlist = [0";
  for (int i = 1; i <= 1048576; ++i) list += ",1";
  EXPECT_EQ(message_of(kBase + list + "]\n"),
            "c.toml:8: `ranks.list`: 1048577 ranks listed; at most 1048576 (the largest world, tp "
            "× pp × dp)");
  EXPECT_EQ(message_of(kBase, {"ranks.gpus_per_node=1048577"}),
            "--set: `ranks.gpus_per_node`: must be at most 1048576 (got 1048577)");
}

TEST(Campaign, WrongTypesNameExpectedAndFound) {
  EXPECT_EQ(message_of(kBase + "[backend]\nthreads = \"4\"\n"),
            "c.toml:7: `backend.threads`: expected an integer, found a string");
  EXPECT_EQ(message_of(kBase + "[parallel]\ntp = 2.0\n"),
            "c.toml:7: `parallel.tp`: expected an integer, found a float");
  EXPECT_EQ(message_of(kBase + "[backend]\ndirect = 1\n"),
            "c.toml:7: `backend.direct`: expected a boolean, found an integer");
  EXPECT_EQ(message_of(kBase + "[strategy]\nmapping = 3\n"),
            "c.toml:7: `strategy.mapping`: expected a string, found an integer");
  EXPECT_EQ(message_of(kBase + "[ranks]\nlist = 3\n"),
            "c.toml:7: `ranks.list`: expected an array of integers, found an integer");
  EXPECT_EQ(message_of(kBase + "[ranks]\nlist = [[0], [1]]\n"),
            "c.toml:7: `ranks.list`: expected an array of integers, found an array at position 1 "
            "(ranks.list is one list of ranks and cannot be swept)");
  EXPECT_EQ(
      message_of(kBase + "[backend]\nthreads = [1, \"2\"]\n"),
      "c.toml:7: `backend.threads`: expected an integer, found a string (value 2 of the sweep)");
  EXPECT_EQ(message_of(kBase + "iterations = 0\n"),
            "c.toml:6: `campaign.iterations`: must be at least 1 (got 0)");
  EXPECT_EQ(message_of(with_model("scale = 0\n")),
            "c.toml:3: `model.scale`: must be at least 1 (got 0)");
  EXPECT_EQ(message_of(kBase + "[backend]\nthreads = 3000000000\n"),
            "c.toml:7: `backend.threads`: must be at most 2147483647 (got 3000000000)");
  EXPECT_EQ(message_of(kBase + "[state]\nweight_dtype = \"bf17\"\n"),
            "c.toml:7: `state.weight_dtype`: unknown dtype `bf17` (expected one of fp8, bf16, "
            "fp16, fp32, fp64)");
  EXPECT_EQ(message_of(R"([campaign]
name = ""
target = "out"
)"),
            "c.toml:2: `campaign.name`: must not be empty");
}

TEST(Campaign, BadChoiceListsTheChoices) {
  EXPECT_EQ(
      message_of(kBase + "[strategy]\nmapping = \"file_per_rnk\"\n"),
      "c.toml:7: `strategy.mapping`: unknown value \"file_per_rnk\", expected one of "
      "\"file_per_rank\", "
      "\"file_per_tensor\", \"file_per_node\", \"shared_file\" — did you mean `file_per_rank`?");
  EXPECT_EQ(
      message_of(kBase + "[cache]\npolicy = \"purge\"\n"),
      "c.toml:7: `cache.policy`: unknown value \"purge\", expected one of \"drop\", \"fadvise\", "
      "\"read_shift\", \"none\"");
}

TEST(Campaign, EmptySweepAndUnsweepableKeysAreErrors) {
  EXPECT_EQ(message_of(kBase + "[strategy]\nmapping = []\n"),
            "c.toml:7: `strategy.mapping`: empty sweep: give at least one value (or one value "
            "without brackets)");
  EXPECT_EQ(message_of(kBase + "phase = [\"checkpoint\", \"restore\"]\n"),
            "c.toml:6: `campaign.phase`: cannot be swept (of [campaign], only iterations and "
            "warmup can): "
            "expected a string, found an array");
}

TEST(Campaign, MissingRequiredKeysAreNamed) {
  EXPECT_EQ(
      message_of("[campaign]\nname = \"t\"\n[model]\nname = \"llama3-8b\"\n"),
      "c.toml:1: `campaign.target`: required key is missing: add `target = …` under [campaign] "
      "(or --set campaign.target=…)");
  EXPECT_EQ(message_of("[campaign]\nname = \"t\"\ntarget = \"out\"\n"),
            "c.toml: `model.name`: required key is missing: add `name = …` under [model] "
            "(or --set model.name=…)");
  EXPECT_EQ(
      parse("[campaign]\nname = \"t\"\ntarget = \"out\"\n", {"model.name=llama3-8b"}).cases.size(),
      1u);
}

TEST(Campaign, ImpossibleParallelismPointsAtTheParallelKey) {
  EXPECT_EQ(
      message_of(kBase + "[parallel]\npp = 2\ntp = 3\n"),
      "c.toml:8: `parallel.tp`: num_attention_heads (32) is not divisible by tp (3); valid tp for "
      "llama3-8b: 1, 2, 4, 8");
  const ConfigError e = error_of(kBase + "[parallel]\npp = 2\ntp = 3\n");
  EXPECT_EQ(e.line(), 8);
  EXPECT_EQ(e.key(), "parallel.tp");
  EXPECT_EQ(
      message_of(kBase + "[parallel]\ntp = [\n  1,\n  3,\n]\n[backend]\nthreads = [1, 2]\n"),
      "c.toml:9: `parallel.tp`: num_attention_heads (32) is not divisible by tp (3); valid tp for "
      "llama3-8b: 1, 2, 4, 8 (case 2 (3 of 4): parallel.tp = 3, backend.threads = 1)");
  EXPECT_EQ(message_of(kBase + "[parallel]\nzero = 4\n"),
            "c.toml:7: `parallel.zero`: zero must be 0, 1, 2 or 3 (got 4)");
  EXPECT_EQ(message_of(kBase + "[parallel]\ndp = 2\nep = 2\n"),
            "c.toml:8: `parallel.ep`: ep = 2 needs an MoE model, but llama3-8b has no experts; use "
            "ep = 1");
}

TEST(Campaign, UnknownModelSuggestsAZooName) {
  const std::string message =
      message_of("[model]\nname = \"lama3-8b\"\n[campaign]\nname = \"t\"\ntarget = \"x\"\n");
  EXPECT_EQ(message.rfind(
                "c.toml:2: `model.name`: `lama3-8b`: no such model in the zoo and no such file — "
                "did you mean `llama3-8b`?",
                0),
            0u)
      << message;
}

TEST(Campaign, ModelFromATomlFile) {
  const TempDir dir;
  const fs::path model = dir.write("tiny.toml", R"(name = "tiny"
hidden_size = 64
intermediate_size = 128
num_hidden_layers = 2
num_attention_heads = 4
vocab_size = 1000
)");
  const Case c = parse("[campaign]\nname = \"t\"\ntarget = \"out\"\n[model]\nname = \"" +
                       model.string() + "\"\n")
                     .cases.at(0);
  EXPECT_EQ(c.model.name, "tiny");
  EXPECT_EQ(c.model_argument, model.string());
}

TEST(Campaign, RankSelectionMustLieInTheWorld) {
  EXPECT_EQ(message_of(kBase + "[parallel]\ntp = 8\n[ranks]\nselect = \"list\"\nlist = [0, 8]\n"),
            "c.toml:10: `ranks.list`: rank 8 is outside the world of 8 ranks (TP 8 × PP 1 × DP 1): "
            "ranks are 0..7");
  EXPECT_EQ(message_of(kBase + "[ranks]\nselect = \"list\"\nlist = [0, 0]\n"),
            "c.toml:8: `ranks.list`: rank 0 is listed twice");
  EXPECT_EQ(message_of(kBase + "[ranks]\nselect = \"list\"\n"),
            "c.toml:6: `ranks.list`: select = \"list\" needs at least one rank, e.g. list = [0]");
  EXPECT_EQ(message_of(kBase + "[parallel]\ndp = 12\n[ranks]\nselect = \"node\"\nnode = 2\n"),
            "c.toml:10: `ranks.node`: node 2 lies outside the world of 12 ranks (TP 1 × PP 1 × DP "
            "12): with "
            "gpus_per_node = 8 the nodes are 0..1");
  // 12 ranks on nodes of 8: node 1 is partial, and fine.
  const Case c =
      parse(kBase + "[parallel]\ndp = 12\n[ranks]\nselect = \"node\"\nnode = 1\n").cases.at(0);
  EXPECT_EQ(c.ranks.select, RankSelect::node);
  EXPECT_EQ(c.ranks.node, 1);
  // A list is only checked where it is used.
  EXPECT_EQ(parse(kBase + "[ranks]\nlist = [99]\n").cases.at(0).ranks.select, RankSelect::all);
}

TEST(Campaign, DirectIoNeedsAlignedOffsets) {
  EXPECT_EQ(message_of(kBase + "[strategy]\nalignment = 1000\n[backend]\ndirect = true\n"),
            "c.toml:7: `strategy.alignment`: 1000 is not a multiple of backend.direct_alignment "
            "(4096), which "
            "backend.direct = true needs: use 0 (aligns to 4096) or a multiple of 4096");
  EXPECT_EQ(message_of(kBase + "[backend]\ndirect = true\ndirect_alignment = 3000\n"),
            "c.toml:8: `backend.direct_alignment`: must be a power of two for backend.direct = "
            "true (got 3000)");
  const Campaign campaign =
      parse(kBase + "[strategy]\nalignment = [0, 8192]\n[backend]\ndirect = [false, true]\n");
  ASSERT_EQ(campaign.cases.size(), 4u);
  EXPECT_EQ(campaign.cases[0].alignment, 0u);
  EXPECT_EQ(campaign.cases[1].alignment, 4096u);  // direct: 0 becomes direct_alignment
  EXPECT_EQ(campaign.cases[1].config["strategy"]["alignment"], 4096);
  EXPECT_EQ(campaign.cases[1].swept,
            json::parse(R"({"strategy.alignment": 0, "backend.direct": true})"));
  EXPECT_EQ(campaign.cases[3].alignment, 8192u);
  // Without direct I/O any alignment goes.
  EXPECT_EQ(parse(kBase + "[strategy]\nalignment = 1000\n").cases.at(0).alignment, 1000u);
}

TEST(Campaign, OverrideUnknownKeySuggestsTheDottedKey) {
  const ConfigError e = error_of(kBase, {"backend.thread=4"});
  EXPECT_STREQ(e.what(), "--set: `backend.thread`: unknown key — did you mean `backend.threads`?");
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(message_of(kBase, {"threads=4"}),
            "--set: `threads`: unknown key — did you mean `backend.threads`?");
  EXPECT_EQ(message_of(kBase, {"backend.threads"}),
            "--set: `backend.threads`: expected dotted.key=value, e.g. backend.threads=4");
  EXPECT_EQ(message_of(kBase, {"=4"}),
            "--set: `=4`: expected dotted.key=value, e.g. backend.threads=4");
  EXPECT_EQ(message_of(kBase, {"backend.threads=four"}),
            "--set: `backend.threads`: expected an integer, found a string");
}

TEST(Campaign, OverrideReplacesAValueAndCanTurnItIntoASweep) {
  const std::string text =
      kBase + "[strategy]\nmapping = \"file_per_tensor\"\n[backend]\nthreads = [1, 2]\n";
  const Campaign campaign = parse(text, {"strategy.mapping=[\"file_per_rank\",\"shared_file\"]"});
  ASSERT_EQ(campaign.cases.size(), 4u);
  // The overridden key keeps its place in the file: mapping still varies slower than threads.
  EXPECT_EQ(campaign.cases[1].mapping, Mapping::file_per_rank);
  EXPECT_EQ(campaign.cases[1].io.threads, 2);
  EXPECT_EQ(campaign.cases[2].mapping, Mapping::shared_file);
  EXPECT_EQ(campaign.cases[2].swept,
            json::parse(R"({"strategy.mapping": "shared_file", "backend.threads": 1})"));

  const Campaign single = parse(text, {"backend.threads=8", "backend.threads=4"});  // the last wins
  ASSERT_EQ(single.cases.size(), 1u);
  EXPECT_EQ(single.cases[0].io.threads, 4);
  EXPECT_EQ(single.cases[0].swept, json::object());
  // A key the file lacks is added, as a sweep after the file's.
  const Campaign added = parse(text, {"data.seed=[1, 2, 3]"});
  ASSERT_EQ(added.cases.size(), 6u);
  EXPECT_EQ(added.cases[1].seed, 2u);
  EXPECT_EQ(added.cases[1].io.threads, 1);
}

TEST(Campaign, OverrideValuesThatAreNotTomlAreBareStrings) {
  const Case c =
      parse(kBase, {"model.name=llama2-7b", "campaign.target=/tmp/ckpt x", "backend.threads=4",
                    "strategy.chunk_bytes=4 MiB", "campaign.name=2024", "state.scope=\"weights\"",
                    "backend.direct=true"})
          .cases.at(0);
  EXPECT_EQ(c.model_argument, "llama2-7b");
  EXPECT_EQ(c.model.name, "llama2-7b");
  EXPECT_EQ(c.target, fs::path("/tmp/ckpt x"));
  EXPECT_EQ(c.io.threads, 4);
  EXPECT_EQ(c.chunk_bytes, 4194304u);
  EXPECT_EQ(c.campaign, "2024");
  EXPECT_EQ(c.state.scope, workloads::StateScope::weights);
  EXPECT_TRUE(c.io.direct);
  EXPECT_EQ(c.config["model"]["name"], "llama2-7b");
}

TEST(Campaign, OverrideErrorsPointAtSet) {
  EXPECT_EQ(
      message_of(kBase, {"parallel.tp=3"}),
      "--set: `parallel.tp`: num_attention_heads (32) is not divisible by tp (3); valid tp for "
      "llama3-8b: 1, 2, 4, 8");
  EXPECT_EQ(message_of(kBase, {"strategy.mapping=[]"}),
            "--set: `strategy.mapping`: empty sweep: give at least one value (or one value without "
            "brackets)");
}

TEST(Campaign, TomlSyntaxErrorsCarryTheLine) {
  const ConfigError e = error_of(kBase + "[backend]\nthreads = = 4\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(std::string(e.what()).rfind("c.toml:7: TOML syntax error: ", 0), 0u) << e.what();
}

TEST(Campaign, LoadReadsAFileAndNamesAMissingOne) {
  const TempDir dir;
  const fs::path file = dir.write("quick.toml", kBase + "[backend]\nthread = 4\n");
  const ConfigError e = config_error([&] { load_campaign(file, {}); });
  EXPECT_EQ(std::string(e.what()),
            file.string() + ":7: `backend.thread`: unknown key — did you mean `threads`?");

  const fs::path good = dir.write("good.toml", kBase);
  EXPECT_EQ(load_campaign(good, {}).cases.at(0).source, good.string());

  const fs::path missing = dir.path() / "missing.toml";
  EXPECT_EQ(std::string(config_error([&] { load_campaign(missing, {}); }).what()),
            missing.string() + ": campaign file does not exist");
  EXPECT_EQ(std::string(config_error([&] { load_campaign(dir.path(), {}); }).what()),
            dir.path().string() + ": campaign file cannot be read: it is a directory, not a file");
}

TEST(Campaign, EveryShippedConfigLoads) {
#ifdef CKPT_SOURCE_DIR
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(CKPT_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 5u);
  // Shipped configs run from the repository root: model paths such as
  // configs/models/vs-ior-1gib.toml are relative to it.
  struct WorkingDirectory {
    fs::path previous = fs::current_path();
    explicit WorkingDirectory(const fs::path& to) { fs::current_path(to); }
    ~WorkingDirectory() { fs::current_path(previous); }
    WorkingDirectory(const WorkingDirectory&) = delete;
    WorkingDirectory& operator=(const WorkingDirectory&) = delete;
  } at_root(CKPT_SOURCE_DIR);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    try {
      const Campaign campaign = load_campaign(file, {});
      EXPECT_EQ(campaign.name, file.stem().string());
      EXPECT_FALSE(campaign.cases.empty());
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
#else
  GTEST_SKIP() << "CKPT_SOURCE_DIR is not defined: the build does not say where configs/ is";
#endif
}

#ifdef CKPT_SOURCE_DIR
Campaign shipped(std::string_view name) {
  return load_campaign(fs::path(CKPT_SOURCE_DIR) / "configs" / name, {});
}

TEST(Campaign, QuickstartComparesThreeMappingsOnAboutAHundredMiB) {
  const Campaign campaign = shipped("quickstart.toml");
  ASSERT_EQ(campaign.cases.size(), 3u);
  EXPECT_EQ(campaign.cases[0].mapping, Mapping::file_per_tensor);
  EXPECT_EQ(campaign.cases[1].mapping, Mapping::file_per_rank);
  EXPECT_EQ(campaign.cases[2].mapping, Mapping::shared_file);
  const Case& c = campaign.cases[0];
  const workloads::Layout layout(c.model, c.parallel, c.state);
  EXPECT_EQ(layout.world_size(), 1);
  const std::int64_t bytes = layout.checkpoint_bytes() / c.scale;
  EXPECT_GE(bytes, std::int64_t{100} << 20);
  EXPECT_LE(bytes, std::int64_t{200} << 20);
  EXPECT_TRUE(c.create_target);
  EXPECT_EQ(c.target, fs::current_path() / "ckptbench-target");
}

TEST(Campaign, ShippedSweepsAndSelections) {
  const Campaign sweep = shipped("strategy-sweep.toml");
  EXPECT_EQ(sweep.cases.size(), 32u);
  EXPECT_EQ(sweep.cases[31].swept,
            json::parse(R"({"strategy.mapping": "shared_file", "strategy.alignment": 4096,
                                                  "strategy.coalesce_bytes": 4194304, "backend.direct": true})"));
  const Case node = shipped("llama3-70b-node.toml").cases.at(0);
  EXPECT_EQ(node.parallel.world_size(), 128);
  EXPECT_EQ(node.ranks.select, RankSelect::node);
  EXPECT_EQ(node.directory_layout, DirectoryLayout::megatron);
  const Case mlperf70 = shipped("mlperf-70b.toml").cases.at(0);
  EXPECT_EQ(mlperf70.model.name, "mlperf-llama3-70b");
  EXPECT_EQ(mlperf70.parallel.world_size(), 64);
  const Case mlperf8 = shipped("mlperf-8b.toml").cases.at(0);
  EXPECT_EQ(mlperf8.parallel.dp, 8);
  EXPECT_EQ(mlperf8.parallel.zero_stage, 3);
}
#endif

}  // namespace
}  // namespace ckpt::harness
