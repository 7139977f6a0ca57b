#include "harness/models/model_file.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "harness/common/config_error.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using workloads::MlpKind;
using workloads::ModelSpec;
using workloads::NormKind;
using workloads::PositionEmbedding;

using test_support::TempDir;

// Runs `parse` and returns the ConfigError it throws; fails the test if it throws none.
ConfigError config_error(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError";
  return ConfigError("", 0, "", "");
}

ConfigError toml_error(std::string_view text) {
  return config_error([&] { parse_model_toml(text, "m.toml"); });
}

ConfigError json_error(std::string_view text) {
  return config_error([&] { parse_model_hf_json(text, "cfg.json"); });
}

constexpr std::string_view kLlama3Toml = R"(# Meta Llama 3 8B
name = "llama3-8b"
description = "Meta Llama 3 8B base"
source = "https://huggingface.co/meta-llama/Meta-Llama-3-8B"
hidden_size = 4096
intermediate_size = 14336
num_hidden_layers = 32
num_attention_heads = 32
num_key_value_heads = 8
vocab_size = 128256
max_position_embeddings = 8192
tie_word_embeddings = false
norm = "rmsnorm"
mlp = "gated"
position_embedding = "rope"
)";

constexpr std::string_view kLlama3Json =
    R"({"architectures":["LlamaForCausalLM"],"attention_bias":false,"attention_dropout":0.0,)"
    R"("bos_token_id":128000,"eos_token_id":128001,"hidden_act":"silu","hidden_size":4096,)"
    R"("initializer_range":0.02,"intermediate_size":14336,"max_position_embeddings":8192,)"
    R"("model_type":"llama","num_attention_heads":32,"num_hidden_layers":32,)"
    R"("num_key_value_heads":8,"pretraining_tp":1,"rms_norm_eps":1e-05,"rope_scaling":null,)"
    R"("rope_theta":500000.0,"tie_word_embeddings":false,"torch_dtype":"bfloat16",)"
    R"("transformers_version":"4.40.0.dev0","use_cache":true,"vocab_size":128256})";

constexpr std::string_view kMixtralJson =
    R"({"architectures":["MixtralForCausalLM"],"attention_dropout":0.0,"bos_token_id":1,)"
    R"("eos_token_id":2,"hidden_act":"silu","hidden_size":4096,"initializer_range":0.02,)"
    R"("intermediate_size":14336,"max_position_embeddings":32768,"model_type":"mixtral",)"
    R"("num_attention_heads":32,"num_experts_per_tok":2,"num_hidden_layers":32,)"
    R"("num_key_value_heads":8,"num_local_experts":8,"output_router_logits":false,)"
    R"("rms_norm_eps":1e-05,"rope_theta":1000000.0,"router_aux_loss_coef":0.02,)"
    R"("sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16",)"
    R"("transformers_version":"4.36.0.dev0","use_cache":true,"vocab_size":32000})";

constexpr std::string_view kQwen2Json =
    R"({"architectures":["Qwen2ForCausalLM"],"attention_dropout":0.0,"bos_token_id":151643,)"
    R"("eos_token_id":151643,"hidden_act":"silu","hidden_size":3584,"initializer_range":0.02,)"
    R"("intermediate_size":18944,"max_position_embeddings":131072,"max_window_layers":28,)"
    R"("model_type":"qwen2","num_attention_heads":28,"num_hidden_layers":28,)"
    R"("num_key_value_heads":4,"rms_norm_eps":1e-06,"rope_theta":1000000.0,)"
    R"("sliding_window":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16",)"
    R"("transformers_version":"4.37.2","use_cache":true,"use_sliding_window":false,)"
    R"("vocab_size":152064})";

constexpr std::string_view kDeepseekV3Json = R"({
  "architectures": ["DeepseekV3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV3Config",
    "AutoModel": "modeling_deepseek.DeepseekV3Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 0,
  "eos_token_id": 1,
  "ep_size": 1,
  "first_k_dense_replace": 3,
  "hidden_act": "silu",
  "hidden_size": 7168,
  "initializer_range": 0.02,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v3",
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 8,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 128,
  "num_nextn_predict_layers": 1,
  "pretraining_tp": 1,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [128, 128]
  },
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 10000,
  "routed_scaling_factor": 2.5,
  "scoring_func": "sigmoid",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 4,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.33.1",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 129280
})";

// A small Mistral-style config with one size per line: line 2 is model_type, line 3
// hidden_size, ..., line 7 vocab_size.
std::string small_json(std::string_view extra_lines = "") {
  return std::string("{\n") +
         "  \"model_type\": \"mistral\",\n"
         "  \"hidden_size\": 1024,\n"
         "  \"intermediate_size\": 4096,\n"
         "  \"num_hidden_layers\": 4,\n"
         "  \"num_attention_heads\": 16,\n"
         "  \"vocab_size\": 32000" +
         std::string(extra_lines) + "\n}\n";
}

// Our TOML with the Llama-3-8B sizes, minus the key `without` if given, plus `extra` lines.
std::string small_toml(std::string_view extra = "", std::string_view without = "") {
  std::string text;
  const std::pair<std::string_view, std::string_view> lines[] = {
      {"name", "name = \"t\""},
      {"hidden_size", "hidden_size = 4096"},
      {"intermediate_size", "intermediate_size = 14336"},
      {"num_hidden_layers", "num_hidden_layers = 32"},
      {"num_attention_heads", "num_attention_heads = 32"},
      {"vocab_size", "vocab_size = 128256"},
  };
  for (const auto& [key, line] : lines) {
    if (key != without) text += std::string(line) + "\n";
  }
  return text + std::string(extra);
}

void expect_llama3_8b_sizes(const ModelSpec& m) {
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.intermediate_size, 14336);
  EXPECT_EQ(m.num_hidden_layers, 32);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_key_value_heads, 8);
  EXPECT_EQ(m.head_dim, 0);
  EXPECT_EQ(m.resolved().head_dim, 128);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.max_position_embeddings, 8192);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_EQ(m.norm, NormKind::rmsnorm);
  EXPECT_EQ(m.mlp, MlpKind::gated);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::rope);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.embedding_norm);
  EXPECT_FALSE(m.is_moe());
  EXPECT_FALSE(m.uses_mla());
  EXPECT_FALSE(m.moe_router_bias);
}

void expect_deepseek_v3(const ModelSpec& m) {
  EXPECT_EQ(m.hidden_size, 7168);
  EXPECT_EQ(m.intermediate_size, 18432);
  EXPECT_EQ(m.moe_intermediate_size, 2048);
  EXPECT_EQ(m.num_hidden_layers, 61);
  EXPECT_EQ(m.num_attention_heads, 128);
  EXPECT_EQ(m.num_key_value_heads, 128);
  EXPECT_EQ(m.vocab_size, 129280);
  EXPECT_EQ(m.max_position_embeddings, 163840);
  EXPECT_EQ(m.num_local_experts, 256);
  EXPECT_EQ(m.num_experts_per_tok, 8);
  EXPECT_EQ(m.n_shared_experts, 1);
  EXPECT_EQ(m.first_k_dense_replace, 3);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.qk_nope_head_dim, 128);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  EXPECT_EQ(m.v_head_dim, 128);
  EXPECT_TRUE(m.moe_router_bias);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_TRUE(m.uses_mla());
  EXPECT_FALSE(m.layer_is_moe(2));
  EXPECT_TRUE(m.layer_is_moe(3));
}

// ---- our TOML: accepted files

TEST(ModelToml, Llama3_8bParsesToExactFields) {
  const ModelSpec m = parse_model_toml(kLlama3Toml, "llama3-8b.toml");
  EXPECT_EQ(m.name, "llama3-8b");
  expect_llama3_8b_sizes(m);
}

TEST(ModelToml, LoadsFromAFile) {
  const TempDir dir;
  const ModelSpec m = load_model_toml(dir.write("llama3-8b.toml", kLlama3Toml));
  EXPECT_EQ(m.name, "llama3-8b");
  expect_llama3_8b_sizes(m);
}

TEST(ModelToml, Gpt2StyleChoicesAndBiases) {
  const ModelSpec m = parse_model_toml(R"(name = "gpt2"
hidden_size = 768
intermediate_size = 3072
num_hidden_layers = 12
num_attention_heads = 12
vocab_size = 50257
max_position_embeddings = 1024
tie_word_embeddings = true
norm = "layernorm"
mlp = "plain"
position_embedding = "learned"
linear_bias = true
)",
                                       "gpt2.toml");
  EXPECT_EQ(m.name, "gpt2");
  EXPECT_EQ(m.hidden_size, 768);
  EXPECT_EQ(m.intermediate_size, 3072);
  EXPECT_EQ(m.num_hidden_layers, 12);
  EXPECT_EQ(m.num_attention_heads, 12);
  EXPECT_EQ(m.num_key_value_heads, 0);
  EXPECT_EQ(m.resolved().num_key_value_heads, 12);
  EXPECT_EQ(m.vocab_size, 50257);
  EXPECT_EQ(m.max_position_embeddings, 1024);
  EXPECT_TRUE(m.tie_word_embeddings);
  EXPECT_EQ(m.norm, NormKind::layernorm);
  EXPECT_EQ(m.mlp, MlpKind::plain);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::learned);
  EXPECT_TRUE(m.linear_bias);
  EXPECT_FALSE(m.qkv_bias);
}

TEST(ModelToml, BloomStyleAlibiAndEmbeddingNorm) {
  const ModelSpec m = parse_model_toml(
      small_toml("position_embedding = \"alibi\"\nembedding_norm = true\nqkv_bias = true\n"
                 "head_dim = 64\n"),
      "bloom.toml");
  EXPECT_EQ(m.position_embedding, PositionEmbedding::alibi);
  EXPECT_TRUE(m.embedding_norm);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_EQ(m.head_dim, 64);
}

TEST(ModelToml, EveryMoeAndMlaKeyIsStored) {
  const ModelSpec m = parse_model_toml(R"(name = "deepseek-v3"
hidden_size = 7168
intermediate_size = 18432
moe_intermediate_size = 2048
num_hidden_layers = 61
num_attention_heads = 128
num_key_value_heads = 128
vocab_size = 129280
max_position_embeddings = 163840
num_local_experts = 256
num_experts_per_tok = 8
n_shared_experts = 1
first_k_dense_replace = 3
moe_router_bias = true
q_lora_rank = 1536
kv_lora_rank = 512
qk_nope_head_dim = 128
qk_rope_head_dim = 64
v_head_dim = 128
)",
                                       "deepseek-v3.toml");
  EXPECT_EQ(m.name, "deepseek-v3");
  expect_deepseek_v3(m);
}

// ---- our TOML: errors

TEST(ModelTomlErrors, UnknownKeyNamesFileLineAndSuggestion) {
  const TempDir dir;
  const fs::path file = dir.write("model.toml", R"(name = "x"
hidden_size = 4096
num_hidden_layers = 32
hiden_size = 4096
)");
  const ConfigError e = config_error([&] { load_model_toml(file); });
  EXPECT_EQ(std::string(e.what()),
            file.string() + ":4: `hiden_size`: unknown key — did you mean `hidden_size`?");
  EXPECT_EQ(e.source(), file.string());
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.key(), "hiden_size");
}

TEST(ModelTomlErrors, UnknownKeyWithoutANearMatchHasNoSuggestion) {
  const ConfigError e = toml_error(small_toml("rope_theta = 500000.0\n"));
  EXPECT_STREQ(e.what(), "m.toml:7: `rope_theta`: unknown key");
}

TEST(ModelTomlErrors, FirstProblemInFileOrderIsReported) {
  // Alphabetically `aaa` comes first; in the file `zzz_extra` does.
  const ConfigError e = toml_error("zzz_extra = 1\n" + small_toml("aaa = 2\n"));
  EXPECT_EQ(e.key(), "zzz_extra");
  EXPECT_EQ(e.line(), 1);
}

TEST(ModelTomlErrors, TablesAreUnknownKeysWithAHint) {
  const ConfigError e = toml_error("[model]\nhidden_size = 4096\n");
  EXPECT_STREQ(e.what(),
               "m.toml:1: `model`: unknown key (model files are flat: write every key at the top "
               "level)");
}

TEST(ModelTomlErrors, WrongTypes) {
  EXPECT_STREQ(toml_error(small_toml("num_key_value_heads = \"8\"\n")).what(),
               "m.toml:7: `num_key_value_heads`: expected an integer, found a string");
  EXPECT_STREQ(toml_error(small_toml("max_position_embeddings = 8192.0\n")).what(),
               "m.toml:7: `max_position_embeddings`: expected an integer, found a float");
  EXPECT_STREQ(toml_error(small_toml("tie_word_embeddings = 1\n")).what(),
               "m.toml:7: `tie_word_embeddings`: expected a boolean, found an integer");
  EXPECT_STREQ(toml_error(small_toml("head_dim = [128]\n")).what(),
               "m.toml:7: `head_dim`: expected an integer, found an array");
  EXPECT_STREQ(toml_error(small_toml("head_dim = { value = 128 }\n")).what(),
               "m.toml:7: `head_dim`: expected an integer, found a table");
  EXPECT_STREQ(toml_error(small_toml("norm = true\n")).what(),
               "m.toml:7: `norm`: expected a string, found a boolean");
  EXPECT_STREQ(toml_error(small_toml("description = 3\n")).what(),
               "m.toml:7: `description`: expected a string, found an integer");
  EXPECT_STREQ(toml_error("name = 1979-05-27\n").what(),
               "m.toml:1: `name`: expected a string, found a date");
}

TEST(ModelTomlErrors, IntegerTooLargeForInt64IsReportedWithItsLine) {
  const ConfigError e = toml_error(small_toml("vocab_size = 99999999999999999999\n", "vocab_size"));
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(std::string(e.what()).find("m.toml:6: TOML syntax error: "), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("99999999999999999999"), std::string::npos);
}

TEST(ModelTomlErrors, BadEnumValueListsTheChoices) {
  EXPECT_STREQ(toml_error(small_toml("norm = \"rms_norm\"\n")).what(),
               "m.toml:7: `norm`: unknown value \"rms_norm\" — expected one of \"rmsnorm\", "
               "\"layernorm\", \"none\"");
  EXPECT_STREQ(toml_error(small_toml("mlp = \"swiglu\"\n")).what(),
               "m.toml:7: `mlp`: unknown value \"swiglu\" — expected one of \"gated\", \"plain\"");
  EXPECT_STREQ(toml_error(small_toml("position_embedding = \"RoPE\"\n")).what(),
               "m.toml:7: `position_embedding`: unknown value \"RoPE\" — expected one of "
               "\"rope\", \"learned\", \"alibi\"");
}

TEST(ModelTomlErrors, MissingRequiredKeyNamesKeyAndFileWithoutALine) {
  for (const std::string_view key :
       {"name", "hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}) {
    const ConfigError e = toml_error(small_toml("", key));
    EXPECT_EQ(std::string(e.what()), "m.toml: `" + std::string(key) + "`: required key is missing");
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.key(), key);
  }
}

TEST(ModelTomlErrors, EmptyName) {
  EXPECT_STREQ(toml_error("name = \"\"\n").what(), "m.toml:1: `name`: must not be empty");
}

TEST(ModelTomlErrors, SyntaxErrorCarriesTheParserLine) {
  const ConfigError e = toml_error("name = \"x\"\nhidden_size = 4096\nvocab_size = \n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.key(), "");
  EXPECT_EQ(std::string(e.what()).rfind("m.toml:3: TOML syntax error: ", 0), 0u) << e.what();
}

TEST(ModelTomlErrors, DuplicateKeyIsASyntaxError) {
  const ConfigError e = toml_error(small_toml("hidden_size = 2048\n"));
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(std::string(e.what()).rfind("m.toml:7: TOML syntax error: ", 0), 0u) << e.what();
}

TEST(ModelTomlErrors, NegativeSize) {
  EXPECT_STREQ(toml_error(small_toml("num_key_value_heads = -8\n")).what(),
               "m.toml:7: `num_key_value_heads`: expected a non-negative integer, found -8");
}

TEST(ModelTomlErrors, ZeroRequiredSizeFailsValidationAtItsLine) {
  EXPECT_STREQ(toml_error(small_toml("vocab_size = 0\n", "vocab_size")).what(),
               "m.toml:6: `vocab_size`: vocab_size must be a positive integer (got 0)");
}

TEST(ModelTomlErrors, HeadsNotAMultipleOfKvHeadsNamesKvHeadsAndItsLine) {
  const ConfigError e =
      toml_error(small_toml("max_position_embeddings = 8192\n"
                            "num_key_value_heads = 5\n"));
  EXPECT_STREQ(e.what(),
               "m.toml:8: `num_key_value_heads`: num_attention_heads (32) is not a multiple of "
               "num_key_value_heads (5)");
  EXPECT_EQ(e.line(), 8);
  EXPECT_EQ(e.key(), "num_key_value_heads");
}

TEST(ModelTomlErrors, ValidationKeyAbsentFromTheFileHasNoLine) {
  const ConfigError e = toml_error(small_toml("num_experts_per_tok = 2\n"));
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.key(), "num_local_experts");
  EXPECT_EQ(std::string(e.what()).rfind("m.toml: `num_local_experts`: MoE keys are set", 0), 0u)
      << e.what();
}

TEST(ModelTomlErrors, MissingFile) {
  const TempDir dir;
  const fs::path file = dir.path() / "absent.toml";
  EXPECT_EQ(std::string(config_error([&] { load_model_toml(file); }).what()),
            file.string() + ": file does not exist");
  EXPECT_EQ(std::string(config_error([&] { load_model_hf_json(file); }).what()),
            file.string() + ": file does not exist");
}

TEST(ModelTomlErrors, DirectoryIsNotAFile) {
  const TempDir dir;
  EXPECT_EQ(std::string(config_error([&] { load_model_toml(dir.path()); }).what()),
            dir.path().string() + ": cannot be read: it is a directory, not a file");
}

TEST(ModelTomlErrors, UnreadableFile) {
  const TempDir dir;
  const fs::path file = dir.write("locked.toml", kLlama3Toml);
  fs::permissions(file, fs::perms::none);
  if (std::ifstream(file).good()) GTEST_SKIP() << "running with permission to read mode-000 files";
  EXPECT_EQ(std::string(config_error([&] { load_model_toml(file); }).what()),
            file.string() + ": cannot be read: Permission denied");
}

// ---- Hugging Face config.json: accepted files

TEST(ModelHfJson, MetaLlama3_8bConfig) {
  const ModelSpec m = parse_model_hf_json(kLlama3Json, "models/Meta-Llama-3-8B/config.json");
  EXPECT_EQ(m.name, "Meta-Llama-3-8B");
  expect_llama3_8b_sizes(m);
}

TEST(ModelHfJson, LoadedConfigJsonIsNamedAfterItsDirectory) {
  const TempDir dir;
  ModelSpec from_json = load_model_hf_json(dir.write("Meta-Llama-3-8B/config.json", kLlama3Json));
  EXPECT_EQ(from_json.name, "Meta-Llama-3-8B");
  expect_llama3_8b_sizes(from_json);
}

TEST(ModelHfJson, NameIsTheStemForOtherFileNames) {
  EXPECT_EQ(parse_model_hf_json(kLlama3Json, "zoo/llama3-8b.json").name, "llama3-8b");
}

TEST(ModelHfJson, Mixtral8x7b) {
  const ModelSpec m = parse_model_hf_json(kMixtralJson, "Mixtral-8x7B-v0.1/config.json");
  EXPECT_EQ(m.name, "Mixtral-8x7B-v0.1");
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.intermediate_size, 14336);
  EXPECT_EQ(m.expert_intermediate_size(), 14336);
  EXPECT_EQ(m.num_hidden_layers, 32);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_key_value_heads, 8);
  EXPECT_EQ(m.vocab_size, 32000);
  EXPECT_EQ(m.max_position_embeddings, 32768);
  EXPECT_EQ(m.num_local_experts, 8);
  EXPECT_EQ(m.num_experts_per_tok, 2);
  EXPECT_EQ(m.moe_intermediate_size, 0);
  EXPECT_EQ(m.n_shared_experts, 0);
  EXPECT_EQ(m.first_k_dense_replace, 0);
  EXPECT_TRUE(m.layer_is_moe(0));
  EXPECT_FALSE(m.moe_router_bias);
  EXPECT_FALSE(m.uses_mla());
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.tie_word_embeddings);
}

TEST(ModelHfJson, Qwen2_7bHasQkvBias) {
  const ModelSpec m = parse_model_hf_json(kQwen2Json, "Qwen2-7B/config.json");
  EXPECT_EQ(m.name, "Qwen2-7B");
  EXPECT_EQ(m.hidden_size, 3584);
  EXPECT_EQ(m.intermediate_size, 18944);
  EXPECT_EQ(m.num_hidden_layers, 28);
  EXPECT_EQ(m.num_attention_heads, 28);
  EXPECT_EQ(m.num_key_value_heads, 4);
  EXPECT_EQ(m.resolved().head_dim, 128);
  EXPECT_EQ(m.vocab_size, 152064);
  EXPECT_EQ(m.max_position_embeddings, 131072);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.linear_bias);
}

TEST(ModelHfJson, MissingKvHeadsMeansMultiHeadAttention) {
  const ModelSpec m = parse_model_hf_json(small_json(), "cfg.json");
  EXPECT_EQ(m.resolved().num_key_value_heads, 16);
  EXPECT_EQ(m.resolved().head_dim, 64);
  EXPECT_EQ(m.max_position_embeddings, 0);
  EXPECT_FALSE(m.tie_word_embeddings);
}

TEST(ModelHfJson, ExplicitHeadDimAndNullsForOptionalKeys) {
  const ModelSpec m =
      parse_model_hf_json(small_json(",\n  \"head_dim\": 128,\n  \"num_key_value_heads\": null,\n"
                                     "  \"tie_word_embeddings\": true"),
                          "cfg.json");
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.num_key_value_heads, 16);
  EXPECT_TRUE(m.tie_word_embeddings);
}

TEST(ModelHfJson, DeepseekV3) {
  const ModelSpec m = parse_model_hf_json(kDeepseekV3Json, "DeepSeek-V3/config.json");
  EXPECT_EQ(m.name, "DeepSeek-V3");
  expect_deepseek_v3(m);
}

TEST(ModelHfJson, DeepseekNullQLoraRankAndGreedyRoutingKeepsTheRouterBias) {
  std::string text(kDeepseekV3Json);
  text.replace(text.find("\"q_lora_rank\": 1536"), 19, "\"q_lora_rank\": null");
  text.replace(text.find("\"noaux_tc\""), 10, "\"greedy\"");
  const ModelSpec m = parse_model_hf_json(text, "cfg.json");
  EXPECT_EQ(m.q_lora_rank, 0);
  EXPECT_TRUE(m.moe_router_bias);  // transformers' DeepseekV3 router always has it
  EXPECT_EQ(m.kv_lora_rank, 512);
}

TEST(ModelHfJson, DeepseekWithoutTopkMethodHasTheRouterBiasAndIgnoresHeadDim) {
  // transformers' DeepseekV3 has no topk_method and always carries e_score_correction_bias;
  // newer transformers also save head_dim (= qk_rope_head_dim), which MLA does not use.
  std::string text(kDeepseekV3Json);
  text.replace(text.find("\"topk_method\": \"noaux_tc\""), 25, "\"head_dim\": 64");
  const ModelSpec m = parse_model_hf_json(text, "cfg.json");
  EXPECT_TRUE(m.moe_router_bias);
  EXPECT_EQ(m.head_dim, 0);
}

TEST(ModelHfJson, ArchitectureFromClassNameWhenModelTypeIsAbsent) {
  std::string text(kQwen2Json);
  text.erase(text.find("\"model_type\":\"qwen2\","), 21);
  EXPECT_TRUE(parse_model_hf_json(text, "cfg.json").qkv_bias);
}

TEST(ModelHfJson, LlamaBiases) {
  const std::string both = small_json(",\n\"attention_bias\": true,\n\"mlp_bias\": true");
  const std::string attention = small_json(",\n\"attention_bias\": true");
  std::string llama_both = both;
  std::string llama_attention = attention;
  llama_both.replace(llama_both.find("mistral"), 7, "llama");
  llama_attention.replace(llama_attention.find("mistral"), 7, "llama");
  const ModelSpec m1 = parse_model_hf_json(llama_both, "cfg.json");
  EXPECT_TRUE(m1.qkv_bias && m1.o_bias && m1.mlp_bias);
  EXPECT_FALSE(m1.linear_bias);
  const ModelSpec m2 = parse_model_hf_json(llama_attention, "cfg.json");
  EXPECT_TRUE(m2.qkv_bias && m2.o_bias);  // attention_bias reaches o_proj too
  EXPECT_FALSE(m2.mlp_bias || m2.linear_bias);
}

TEST(ModelHfJson, RealButUnneededKeysAreAcceptedSilently) {
  const ModelSpec m =
      parse_model_hf_json(small_json(",\n  \"rope_theta\": 500000.0,\n  \"rms_norm_eps\": 1e-05,\n"
                                     "  \"some_future_setting\": {\"nested\": [1, 2]}"),
                          "cfg.json");
  EXPECT_EQ(m.hidden_size, 1024);
}

// ---- Hugging Face config.json: errors

TEST(ModelHfJsonErrors, UnsupportedArchitectureListsTheSupportedOnes) {
  const ConfigError e = json_error(R"({
  "architectures": ["RwkvForCausalLM"],
  "model_type": "rwkv",
  "hidden_size": 4096
})");
  const std::string what = e.what();
  EXPECT_EQ(
      what.rfind(
          "cfg.json:3: `model_type`: unsupported architecture \"rwkv\" (RwkvForCausalLM) — "
          "supported: llama (LlamaForCausalLM), mistral (MistralForCausalLM), ministral "
          "(MinistralForCausalLM), ministral3 (Ministral3ForCausalLM), qwen2 (Qwen2ForCausalLM), "
          "qwen3 (Qwen3ForCausalLM), ",
          0),
      0u)
      << what;
  for (const char* part :
       {"falcon (FalconForCausalLM)", "cohere (CohereForCausalLM)",
        "qwen3_moe (Qwen3MoeForCausalLM)", "deepseek_v3 (DeepseekV3ForCausalLM)",
        "gemma3_text (Gemma3ForCausalLM)", "write a TOML model file",
        "required keys: name, hidden_size, num_hidden_layers, num_attention_heads, vocab_size",
        "e.g. workloads/zoo/qwen2-7b.toml"}) {
    EXPECT_NE(what.find(part), std::string::npos) << part << " missing from: " << what;
  }
  // The example the message points at exists and loads.
  EXPECT_NO_THROW(
      load_model_toml(std::filesystem::path(CKPT_SOURCE_DIR) / "workloads/zoo/qwen2-7b.toml"));
}

TEST(ModelHfJsonErrors, UnsupportedClassNameWithoutModelType) {
  const ConfigError e = json_error("{\"architectures\": [\"RwkvForCausalLM\"]}");
  EXPECT_EQ(e.key(), "architectures");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(std::string(e.what()).rfind(
                "cfg.json:1: `architectures`: unsupported architecture (RwkvForCausalLM) — "
                "supported: llama",
                0),
            0u)
      << e.what();
}

TEST(ModelHfJsonErrors, NoArchitectureAtAll) {
  const ConfigError e = json_error("{\"hidden_size\": 4096}");
  EXPECT_EQ(e.key(), "model_type");
  EXPECT_EQ(e.line(), 0);
}

TEST(ModelHfJsonErrors, MisspelledKeyNearAKnownOneWithItsLine) {
  const ConfigError e = json_error(small_json(",\n  \"num_key_value_head\": 8"));
  EXPECT_STREQ(e.what(),
               "cfg.json:8: `num_key_value_head`: unknown key — did you mean "
               "`num_key_value_heads`?");
  EXPECT_EQ(e.line(), 8);
}

TEST(ModelHfJsonErrors, NearMeansWithinEditDistanceTwo) {
  EXPECT_STREQ(json_error(small_json(",\n  \"num_hiden_layer\": 4")).what(),
               "cfg.json:8: `num_hiden_layer`: unknown key — did you mean `num_hidden_layers`?");
  // Distance 3 from every key we read: taken for some other setting and ignored.
  EXPECT_EQ(
      parse_model_hf_json(small_json(",\n  \"num_hdn_layers\": 4"), "cfg.json").num_hidden_layers,
      4);
}

TEST(ModelHfJsonErrors, MisspelledRequiredKeyIsReportedAsAMisspelling) {
  std::string text = small_json();
  text.replace(text.find("\"hidden_size\""), 13, "\"hiden_size\"");
  EXPECT_STREQ(json_error(text).what(),
               "cfg.json:3: `hiden_size`: unknown key — did you mean `hidden_size`?");
}

TEST(ModelHfJsonErrors, WrongTypesNegativesAndFloats) {
  std::string text = small_json();
  text.replace(text.find("1024"), 4, "\"1024\"");
  EXPECT_STREQ(json_error(text).what(),
               "cfg.json:3: `hidden_size`: expected an integer, found a string");
  EXPECT_STREQ(json_error(small_json(",\n  \"num_key_value_heads\": -4")).what(),
               "cfg.json:8: `num_key_value_heads`: expected a non-negative integer, found -4");
  EXPECT_STREQ(json_error(small_json(",\n  \"num_key_value_heads\": 4.0")).what(),
               "cfg.json:8: `num_key_value_heads`: expected an integer, found a float");
  EXPECT_STREQ(json_error(small_json(",\n  \"tie_word_embeddings\": \"false\"")).what(),
               "cfg.json:8: `tie_word_embeddings`: expected a boolean, found a string");
  EXPECT_STREQ(json_error(small_json(",\n  \"head_dim\": 18446744073709551615")).what(),
               "cfg.json:8: `head_dim`: 18446744073709551615 does not fit in a 64-bit signed "
               "integer");
}

TEST(ModelHfJsonErrors, LineSearchSkipsLongerKeysAndStringValues) {
  // "original_max_position_embeddings" and a string value equal to the key come first.
  const ConfigError e =
      json_error(small_json(",\n  \"rope_scaling\": {\"original_max_position_embeddings\": 4096},\n"
                            "  \"torch_dtype\": \"max_position_embeddings\",\n"
                            "  \"max_position_embeddings\": -1"));
  EXPECT_EQ(e.line(), 10);
  EXPECT_EQ(e.key(), "max_position_embeddings");
}

TEST(ModelHfJsonErrors, MissingRequiredKey) {
  std::string text = small_json();
  text.erase(text.find("  \"num_hidden_layers\": 4,\n"), 26);
  EXPECT_STREQ(json_error(text).what(), "cfg.json: `num_hidden_layers`: required key is missing");
}

TEST(ModelHfJsonErrors, SyntaxErrorLine) {
  const ConfigError e = json_error("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": ,\n}\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(std::string(e.what()).rfind("cfg.json:3: JSON syntax error: syntax error while parsing "
                                        "value - unexpected ','",
                                        0),
            0u)
      << e.what();
}

TEST(ModelHfJsonErrors, TruncatedFilePointsAtItsLastLine) {
  const ConfigError e = json_error("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(std::string(e.what()).rfind("cfg.json:3: JSON syntax error: syntax error while parsing "
                                        "object - unexpected end of input",
                                        0),
            0u)
      << e.what();
}

TEST(ModelHfJsonErrors, TopLevelMustBeAnObject) {
  EXPECT_STREQ(json_error("[1, 2]").what(),
               "cfg.json: expected a JSON object at the top level, found an array");
}

TEST(ModelHfJsonErrors, HeadsNotAMultipleOfKvHeads) {
  const ConfigError e = json_error(small_json(",\n  \"num_key_value_heads\": 5"));
  EXPECT_STREQ(e.what(),
               "cfg.json:8: `num_key_value_heads`: num_attention_heads (16) is not a multiple of "
               "num_key_value_heads (5)");
}

TEST(ModelHfJsonErrors, DeepseekValidationPointsAtTheHfKey) {
  std::string text(kDeepseekV3Json);
  text.replace(text.find("\"n_routed_experts\": 256"), 23, "\"n_routed_experts\": 4");
  const ConfigError e = json_error(text);
  EXPECT_EQ(e.key(), "num_experts_per_tok");
  EXPECT_EQ(e.line(), 29);
  EXPECT_STREQ(e.what(),
               "cfg.json:29: `num_experts_per_tok`: num_experts_per_tok (8) exceeds "
               "num_local_experts (4)");

  // ModelSpec's num_local_experts is DeepSeek's n_routed_experts.
  text.replace(text.find("\"n_routed_experts\": 4"), 21, "\"n_routed_experts\": 0");
  const ConfigError routed = json_error(text);
  EXPECT_EQ(routed.key(), "n_routed_experts");
  EXPECT_EQ(routed.line(), 25);
}

TEST(ModelHfJson, MlpBiasAloneBiasesTheMlpOnly) {
  std::string text = small_json(",\n  \"mlp_bias\": true");
  text.replace(text.find("mistral"), 7, "llama");
  const ModelSpec m = parse_model_hf_json(text, "cfg.json");
  EXPECT_TRUE(m.mlp_bias);
  EXPECT_FALSE(m.qkv_bias || m.o_bias || m.linear_bias);
}

}  // namespace
}  // namespace ckpt::harness
