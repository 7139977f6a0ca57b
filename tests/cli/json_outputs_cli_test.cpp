// The --json outputs of `layout`, `models`, `backends`, `keys` and `codec` as a script reads
// them: each parsed, its keys held exactly (a key added, renamed or dropped fails here, and the
// command's page must say so too) and its values exactly on a small input.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "harness/campaign/campaign_schema.hpp"
#include "harness/models/model_zoo.hpp"
#include "tests/cli/run_ckptbench.hpp"

namespace {

namespace fs = std::filesystem;
using ckpt::cli_test::CommandResult;
using ckpt::cli_test::run;
using nlohmann::json;

json run_json(const std::string& args) {
  const CommandResult r = run(args);
  EXPECT_EQ(r.status, 0) << r.out;
  return json::parse(r.out);
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

// A file in a directory of its own, removed with it.
class Scratch {
 public:
  Scratch() : path_(fs::temp_directory_path() / ("ckpt_json_" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~Scratch() { fs::remove_all(path_); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }

 private:
  fs::path path_;
};

// Every zoo model as one object of eight keys; two of them whole (parameter counts as
// REFERENCE.md gives them).
TEST(JsonOutputs, ModelsListsTheZooWithEightKeysEach) {
  const json models = run_json("models --json");
  ASSERT_TRUE(models.is_array());
  EXPECT_EQ(models.size(), ckpt::harness::zoo_entries().size());
  const std::set<std::string> keys{"name",
                                   "parameters",
                                   "num_hidden_layers",
                                   "hidden_size",
                                   "num_attention_heads",
                                   "num_key_value_heads",
                                   "num_local_experts",
                                   "vocab_size"};
  std::set<std::string> names;
  for (const json& m : models) {
    EXPECT_EQ(keys_of(m), keys) << m;
    names.insert(m.at("name").get<std::string>());
  }
  EXPECT_EQ(names.size(), models.size()) << "each model once";
  const auto entry = [&models](const std::string& name) {
    for (const json& m : models)
      if (m.at("name") == name) return m;
    return json();
  };
  EXPECT_EQ(entry("llama3-8b"), json::parse(R"({"name": "llama3-8b", "parameters": 8030261248,
      "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_local_experts": 0, "vocab_size": 128256})"));
  EXPECT_EQ(entry("mixtral-8x7b"), json::parse(R"({"name": "mixtral-8x7b",
      "parameters": 46702792704, "num_hidden_layers": 32, "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8,
      "vocab_size": 32000})"));
}

// Every backend of the registry, in its order, with the keys the docs name; each option as the
// registry declares it; the null backend (no options) whole.
TEST(JsonOutputs, BackendsListsEveryBackendWithItsOptionsAndCapabilities) {
  const json list = run_json("backends --json");
  const std::vector<ckpt::backends::BackendInfo> registry = ckpt::backends::list_backends();
  ASSERT_EQ(list.size(), registry.size());
  const std::set<std::string> capabilities{"direct_io",  "device_memory",     "shared_file",
                                           "collective", "threads",           "fallocate",
                                           "sqpoll",     "max_queue_depth",   "stores_data",
                                           "raw_layout", "background_thread", "request_latency",
                                           "mmap",       "object_store"};
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const ckpt::backends::BackendInfo& b = registry[i];
    const json& entry = list[i];
    SCOPED_TRACE(b.name);
    std::set<std::string> keys{"name",      "available", "description", "cmake_option",
                               "needs_mpi", "options",   "capabilities"};
    if (!b.available) keys.insert("reason");
    EXPECT_EQ(keys_of(entry), keys);
    EXPECT_EQ(entry.at("name"), b.name);
    EXPECT_EQ(entry.at("available"), b.available);
    EXPECT_EQ(entry.at("cmake_option"), b.cmake_option);
    EXPECT_EQ(keys_of(entry.at("capabilities")), capabilities);
    ASSERT_EQ(entry.at("options").size(), b.options.size());
    for (std::size_t k = 0; k < b.options.size(); ++k) {
      const ckpt::backends::OptionSpec& o = b.options[k];
      const json& option = entry.at("options")[k];
      std::set<std::string> option_keys{"name", "type", "help"};
      if (o.type != ckpt::backends::OptionType::string_map) option_keys.insert("default");
      if (!o.choices.empty()) option_keys.insert("choices");
      if (o.type == ckpt::backends::OptionType::integer ||
          o.type == ckpt::backends::OptionType::size) {
        option_keys.insert("min");
        if (o.max != std::numeric_limits<std::int64_t>::max()) option_keys.insert("max");
      }
      EXPECT_EQ(keys_of(option), option_keys) << option;
      EXPECT_EQ(option.at("name"), o.name);
      EXPECT_EQ(option.at("help"), o.help);
    }
  }
  for (const json& entry : list) {
    if (entry.at("name") == "posix") {
      EXPECT_EQ(entry.at("options"), json::parse(R"([{"name": "throttle_percent",
          "type": "integer", "default": "0", "min": 0, "max": 1000, "help": "a deliberate slowdown for proving regression gates: after each request (pwrite, pread, fsync/fdatasync) sleep this percent of its time (benchmarks/gate_proof.sh); 0: off"}])"));
    }
    if (entry.at("name") != "null" || !entry.at("available").get<bool>()) continue;
    EXPECT_EQ(entry, json::parse(R"({"name": "null", "available": true,
        "description": "no I/O: measures the harness's own overhead",
        "cmake_option": "CKPT_BACKEND_NULL", "needs_mpi": false, "options": [],
        "capabilities": {"direct_io": true, "device_memory": true, "shared_file": true,
          "collective": false, "threads": true, "fallocate": true, "sqpoll": true,
          "max_queue_depth": 2147483647, "stores_data": false, "raw_layout": true,
          "background_thread": true, "request_latency": false, "mmap": false,
          "object_store": false}})"));
  }
}

// Every campaign key as one object: eight keys, plus min (and max, where bounded) for numbers and
// choices for choices; one key whole per kind that adds keys.
TEST(JsonOutputs, KeysListsEveryKeyWithTheKeysItsKindHas) {
  using ckpt::harness::schema::Kind;
  const json list = run_json("keys --json");
  const auto& schema = ckpt::harness::schema::keys();
  ASSERT_EQ(list.size(), schema.size());
  for (std::size_t i = 0; i < schema.size(); ++i) {
    const ckpt::harness::schema::KeySpec& spec = schema[i];
    const json& entry = list[i];
    SCOPED_TRACE(spec.dotted());
    EXPECT_EQ(entry.at("key"), spec.dotted());
    std::set<std::string> keys{"key",      "table",     "type",    "default",
                               "required", "sweepable", "accepts", "help"};
    if (spec.kind == Kind::integer || spec.kind == Kind::size || spec.kind == Kind::number) {
      keys.insert("min");
      if (spec.max != std::numeric_limits<std::int64_t>::max()) keys.insert("max");
    }
    if (!spec.choices.empty()) keys.insert("choices");
    EXPECT_EQ(keys_of(entry), keys) << entry;
  }
  EXPECT_EQ(run_json("keys backend.sync --json"), json::parse(R"([{"key": "backend.sync",
      "table": "backend", "type": "choice", "default": "fsync", "required": false,
      "sweepable": true, "accepts": "none, fsync, fdatasync",
      "choices": ["none", "fsync", "fdatasync"],
      "help": "flush after writing, inside the timed checkpoint"}])"));
}

// A one-layer model's weights at TP 2: the whole object, its figures checked against the model's
// arithmetic; with --rank, that rank's coordinates and shards.
TEST(JsonOutputs, LayoutOfAOneLayerModelWhole) {
  const Scratch dir;
  const fs::path model = dir.write("tiny.toml",
                                   "name = \"tiny\"\nhidden_size = 64\nintermediate_size = 128\n"
                                   "num_hidden_layers = 1\nnum_attention_heads = 4\n"
                                   "vocab_size = 1000\n");
  const json j = run_json("layout --model " + model.string() + " --tp 2 --state weights --json");
  // Per layer 4·64² + 3·64·128 + 2·64, two 1000 × 64 tables and the final norm; at TP 2 each table
  // pads to 1024 rows (a multiple of 128 × 2): 24 more rows of 64 bf16 each.
  EXPECT_EQ(j.at("parameters"), 4 * 64 * 64 + 3 * 64 * 128 + 2 * 64 + 2 * 1000 * 64 + 64);
  EXPECT_EQ(j.at("checkpoint_bytes"), 2 * 169152 + 2 * 24 * 64 * 2);
  EXPECT_EQ(
      j, json::parse(
             R"({"model": "tiny", "parameters": 169152, "world_size": 2, "checkpoint_bytes": 344448,
      "shards": 21, "writing_ranks": 2,
      "parallelism": {"tp": 2, "pp": 1, "dp": 1, "ep": 1, "zero": 0, "vocab_divisor": 128,
        "padded_vocab": 1024, "pp_first_stage_layers": 0, "pp_last_stage_layers": 0},
      "state": {"scope": "weights", "naming": "hf", "weight_dtype": "bf16",
        "master_dtype": "fp32", "optimizer_dtype": "fp32", "sizing": "exact",
        "weights": "unquantized"},
      "rank_summary": {"bytes": {"min": 172032, "median": 172032, "max": 172416},
        "tensors": {"min": 9, "median": 9, "max": 12}},
      "ranks": [{"rank": 0, "bytes": 172416, "tensors": 12},
        {"rank": 1, "bytes": 172032, "tensors": 9}],
      "histogram": [{"lower_bytes": 128, "shards": 3, "bytes": 384},
        {"lower_bytes": 4096, "shards": 8, "bytes": 32768},
        {"lower_bytes": 8192, "shards": 6, "bytes": 49152},
        {"lower_bytes": 65536, "shards": 4, "bytes": 262144}]})"))
      << j;
  const json one =
      run_json("layout --model " + model.string() + " --tp 2 --state weights --rank 1 --json");
  EXPECT_EQ(one.at("ranks"), json::parse(R"([{"rank": 1, "bytes": 172032, "tensors": 9,
      "coord": {"tp": 1, "pp": 0, "dp": 0, "ep": 0, "expert_dp": 0}, "shards": [
      {"name": "model.embed_tokens.weight", "state": "weight", "dtype": "bf16", "global_shape": [1024, 64], "offset": [512, 0], "extent": [512, 64], "flat_begin": 0, "flat_end": 32768, "bytes": 65536},
      {"name": "model.layers.0.self_attn.q_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [64, 64], "offset": [32, 0], "extent": [32, 64], "flat_begin": 0, "flat_end": 2048, "bytes": 4096},
      {"name": "model.layers.0.self_attn.k_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [64, 64], "offset": [32, 0], "extent": [32, 64], "flat_begin": 0, "flat_end": 2048, "bytes": 4096},
      {"name": "model.layers.0.self_attn.v_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [64, 64], "offset": [32, 0], "extent": [32, 64], "flat_begin": 0, "flat_end": 2048, "bytes": 4096},
      {"name": "model.layers.0.self_attn.o_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [64, 64], "offset": [0, 32], "extent": [64, 32], "flat_begin": 0, "flat_end": 2048, "bytes": 4096},
      {"name": "model.layers.0.mlp.gate_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [128, 64], "offset": [64, 0], "extent": [64, 64], "flat_begin": 0, "flat_end": 4096, "bytes": 8192},
      {"name": "model.layers.0.mlp.up_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [128, 64], "offset": [64, 0], "extent": [64, 64], "flat_begin": 0, "flat_end": 4096, "bytes": 8192},
      {"name": "model.layers.0.mlp.down_proj.weight", "state": "weight", "dtype": "bf16", "global_shape": [64, 128], "offset": [0, 64], "extent": [64, 64], "flat_begin": 0, "flat_end": 4096, "bytes": 8192},
      {"name": "lm_head.weight", "state": "weight", "dtype": "bf16", "global_shape": [1024, 64], "offset": [512, 0], "extent": [512, 64], "flat_begin": 0, "flat_end": 32768, "bytes": 65536}]}])"))
      << one.at("ranks");
}

// One row per input and codec, eleven keys each; random bytes are stored as they are (frames and
// headers on top, exact), the generated weights shrink, grouped more; the rates are those of the
// recorded times.
TEST(JsonOutputs, CodecRowsOfGeneratedContent) {
  const json rows = run_json(
      "codec --content random --content weight-bf16 --codec zstd --codec grouped-bf16 "
      "--bytes 64KiB --chunk-bytes 16KiB --repeat 2 --json");
  ASSERT_EQ(rows.size(), 4u) << rows;
  const std::set<std::string> keys{"input",
                                   "bytes",
                                   "codec",
                                   "level",
                                   "chunk_bytes",
                                   "compressed_bytes",
                                   "ratio",
                                   "compress_gib_per_s",
                                   "decompress_gib_per_s",
                                   "compress_seconds",
                                   "decompress_seconds"};
  const std::vector<std::pair<std::string, std::string>> order{{"random", "zstd"},
                                                               {"random", "grouped-bf16"},
                                                               {"weight-bf16", "zstd"},
                                                               {"weight-bf16", "grouped-bf16"}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[i];
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(keys_of(r), keys);
    EXPECT_EQ(r.at("input"), order[i].first);
    EXPECT_EQ(r.at("codec"), order[i].second);
    EXPECT_EQ(r.at("bytes"), 65536);
    EXPECT_EQ(r.at("chunk_bytes"), 16384);
    EXPECT_EQ(r.at("level"), 3);
    const auto compressed = r.at("compressed_bytes").get<std::uint64_t>();
    EXPECT_DOUBLE_EQ(r.at("ratio").get<double>(), 65536.0 / static_cast<double>(compressed));
    for (const char* phase : {"compress", "decompress"}) {
      const std::vector<double> seconds = r.at(std::string(phase) + "_seconds");
      ASSERT_EQ(seconds.size(), 2u);
      EXPECT_GT(seconds[0], 0);
      EXPECT_DOUBLE_EQ(r.at(std::string(phase) + "_gib_per_s").get<double>(),
                       65536.0 / ((seconds[0] + seconds[1]) / 2) / (1 << 30));
    }
  }
  EXPECT_EQ(rows[0].at("compressed_bytes"), 65800) << "4 frames of 16 KiB, each 66 bytes on top";
  EXPECT_EQ(rows[1].at("compressed_bytes"), 65872) << "and 2 planes each";
  EXPECT_LT(rows[2].at("compressed_bytes").get<std::uint64_t>(), 65536u);
  EXPECT_LT(rows[3].at("compressed_bytes").get<std::uint64_t>(),
            rows[2].at("compressed_bytes").get<std::uint64_t>());
}

}  // namespace
