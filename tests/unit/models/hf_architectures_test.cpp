// The Hugging Face architectures read from config.json (tests/data/hf/*.json hold the values
// of the published configs). Each count is derived by hand from the config's fields in the
// test and compared with the published figure where one is known; tensor names are checked
// against the checkpoints' own.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "harness/common/config_error.hpp"
#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"

namespace ckpt::workloads {
namespace {

ModelSpec fixture(const std::string& name) {
  return harness::load_model_hf_json(std::filesystem::path(CKPT_SOURCE_DIR) / "tests/data/hf" /
                                     (name + ".json"));
}

Layout weights(const std::string& name, Naming naming = Naming::hf, std::int64_t tp = 1) {
  StateSpec state;
  state.scope = StateScope::weights;
  state.naming = naming;
  return Layout(fixture(name), ParallelSpec{.tp = tp, .vocab_divisor = 1}, state);
}

std::int64_t params(const std::string& name) {
  return weights(name).parameters();
}

std::set<std::string> names(const Layout& layout) {
  std::set<std::string> out;
  for (const Shard& s : layout.shards(0)) out.insert(s.name);
  return out;
}

void expect_tensors(const std::string& model, std::initializer_list<const char*> expected) {
  const std::set<std::string> all = names(weights(model));
  for (const char* name : expected) EXPECT_TRUE(all.count(name)) << model << " lacks " << name;
}

void expect_no_tensor(const std::string& model, const std::string& part) {
  for (const std::string& name : names(weights(model))) {
    EXPECT_EQ(name.find(part), std::string::npos) << model << " has " << name;
  }
}

TEST(HfArchitectures, Gemma7b) {
  // q, k, v, o: 16 heads × 256 × 3072 each; gated MLP 3 × 3072 × 24576; two norms; tied.
  const std::int64_t h = 3072, layer = 4 * 16 * 256 * h + 3 * h * 24576 + 2 * h;
  EXPECT_EQ(params("gemma-7b"), 28 * layer + 256000 * h + h);
  EXPECT_EQ(params("gemma-7b"), 8'537'680'896);  // google/gemma-7b
  expect_no_tensor("gemma-7b", "lm_head");
}

TEST(HfArchitectures, Gemma2_9bFourNormsPerLayer) {
  const std::int64_t h = 3584, attention = (16 + 8 + 8) * 256 * h + h * 16 * 256;
  const std::int64_t layer = attention + 3 * h * 14336 + 4 * h;
  EXPECT_EQ(params("gemma-2-9b"), 42 * layer + 256000 * h + h);
  EXPECT_EQ(params("gemma-2-9b"), 9'241'705'984);  // google/gemma-2-9b
  expect_tensors(
      "gemma-2-9b",
      {"model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight",
       "model.layers.0.pre_feedforward_layernorm.weight",
       "model.layers.0.post_feedforward_layernorm.weight", "model.norm.weight"});
  EXPECT_EQ(weights("gemma-2-9b").totals(0).tensors, 42 * 11 + 2);
}

TEST(HfArchitectures, Phi3MiniFusedQkvAndGateUp) {
  const std::int64_t h = 3072, layer = 3 * h * h + h * h + 2 * 8192 * h + 8192 * h + 2 * h;
  EXPECT_EQ(params("phi-3-mini-4k"), 32 * layer + 2 * 32064 * h + h);
  EXPECT_EQ(params("phi-3-mini-4k"), 3'821'079'552);  // microsoft/Phi-3-mini-4k-instruct
  expect_tensors("phi-3-mini-4k", {"model.layers.0.self_attn.qkv_proj.weight",
                                   "model.layers.0.mlp.gate_up_proj.weight",
                                   "model.layers.31.mlp.down_proj.weight", "lm_head.weight"});
  expect_no_tensor("phi-3-mini-4k", "q_proj");
  // Under TP 2 the fused matrices are split along their rows, as Megatron's linear_qkv/fc1.
  const Layout tp2 = weights("phi-3-mini-4k", Naming::hf, 2);
  for (const Shard& s : tp2.shards(1)) {
    if (s.name == "model.layers.0.self_attn.qkv_proj.weight") {
      EXPECT_EQ(s.extent, (std::vector<std::int64_t>{3 * h / 2, h}));
      EXPECT_EQ(s.offset, (std::vector<std::int64_t>{3 * h / 2, 0}));
    }
  }
}

TEST(HfArchitectures, Qwen15MoeA27bSharedExpertAndItsGate) {
  const std::int64_t h = 2048;
  const std::int64_t attention = 4 * h * h + 3 * h;  // q/k/v biases
  const std::int64_t moe =
      60 * h + 60 * 3 * h * 1408 + 3 * h * 5632 + h;  // router, experts, shared, gate
  EXPECT_EQ(params("qwen1.5-moe-a2.7b"), 24 * (attention + moe + 2 * h) + 2 * 151936 * h + h);
  EXPECT_EQ(params("qwen1.5-moe-a2.7b"), 14'315'784'192);  // Qwen/Qwen1.5-MoE-A2.7B
  expect_tensors(
      "qwen1.5-moe-a2.7b",
      {"model.layers.0.mlp.gate.weight", "model.layers.0.mlp.experts.59.down_proj.weight",
       "model.layers.0.mlp.shared_expert.gate_proj.weight",
       "model.layers.0.mlp.shared_expert_gate.weight", "model.layers.0.self_attn.q_proj.bias"});
}

TEST(HfArchitectures, DeepSeekV2LiteMlaWithoutQLora) {
  const std::int64_t h = 2048;
  const std::int64_t attention = 16 * 192 * h + 576 * h + 512 + 16 * 256 * 512 + h * 16 * 128;
  const std::int64_t dense = attention + 2 * h + 3 * h * 10944;
  const std::int64_t moe = attention + 2 * h + 64 * h + 64 * 3 * h * 1408 + 3 * h * 2 * 1408;
  EXPECT_EQ(params("deepseek-v2-lite"), dense + 26 * moe + 2 * 102400 * h + h);
  EXPECT_EQ(params("deepseek-v2-lite"), 15'706'484'224);            // deepseek-ai/DeepSeek-V2-Lite
  expect_no_tensor("deepseek-v2-lite", "e_score_correction_bias");  // topk_method "greedy"
  expect_no_tensor("deepseek-v2-lite", "q_a_proj");
}

TEST(HfArchitectures, DeepSeekV2WithQLora) {
  const std::int64_t h = 5120;
  const std::int64_t attention =
      1536 * h + 1536 + 128 * 192 * 1536 + 576 * h + 512 + 128 * 256 * 512 + h * 128 * 128;
  const std::int64_t dense = attention + 2 * h + 3 * h * 12288;
  const std::int64_t moe = attention + 2 * h + 160 * h + 160 * 3 * h * 1536 + 3 * h * 2 * 1536;
  const std::int64_t expected = dense + 59 * moe + 2 * 102400 * h + h;
  EXPECT_EQ(params("deepseek-v2"), expected);
  EXPECT_EQ(expected, 235'741'434'880);  // published as "236B" (deepseek-ai/DeepSeek-V2)
  expect_tensors("deepseek-v2", {"model.layers.1.self_attn.q_a_proj.weight",
                                 "model.layers.1.self_attn.q_a_layernorm.weight"});
}

TEST(HfArchitectures, OlmoHasNoNormTensors) {
  const std::int64_t h = 4096, layer = 4 * h * h + 3 * h * 11008;
  EXPECT_EQ(params("olmo-7b"), 32 * layer + 2 * 50304 * h);
  EXPECT_EQ(params("olmo-7b"), 6'888'095'744);  // allenai/OLMo-7B-hf
  expect_no_tensor("olmo-7b", "norm");
  EXPECT_EQ(weights("olmo-7b").totals(0).tensors, 32 * 7 + 2);
}

TEST(HfArchitectures, Olmo2QkNormsAndPostNorms) {
  // No published exact count found here; the derivation: OLMo's layer plus q_norm, k_norm
  // (4096 each) and two post-norms, a final norm; untied.
  const std::int64_t h = 4096, layer = 4 * h * h + 3 * h * 11008 + 4 * h;
  EXPECT_EQ(params("olmo-2-1124-7b"), 32 * layer + 2 * 100352 * h + h);
  EXPECT_EQ(params("olmo-2-1124-7b"), 7'298'617'344);  // "7B" (allenai/OLMo-2-1124-7B: 7.30B)
  expect_tensors("olmo-2-1124-7b", {"model.layers.0.self_attn.q_norm.weight",
                                    "model.layers.0.self_attn.k_norm.weight",
                                    "model.layers.0.post_attention_layernorm.weight",
                                    "model.layers.0.post_feedforward_layernorm.weight"});
  expect_no_tensor("olmo-2-1124-7b", "input_layernorm");
}

TEST(HfArchitectures, Falcon7bMultiQueryParallelAttention) {
  // Fused query_key_value of (71 + 2 × 1) heads × 64, dense, 4h MLP, one LayerNorm; tied.
  const std::int64_t h = 4544, layer = 73 * 64 * h + h * h + 2 * 4 * h * h + 2 * h;
  EXPECT_EQ(params("falcon-7b"), 32 * layer + 65024 * h + 2 * h);
  EXPECT_EQ(params("falcon-7b"), 6'921'720'704);  // tiiuae/falcon-7b
  expect_tensors("falcon-7b", {"transformer.word_embeddings.weight",
                               "transformer.h.0.self_attention.query_key_value.weight",
                               "transformer.h.0.self_attention.dense.weight",
                               "transformer.h.0.mlp.dense_h_to_4h.weight",
                               "transformer.h.0.input_layernorm.bias", "transformer.ln_f.weight"});
  expect_no_tensor("falcon-7b", "lm_head");
}

TEST(HfArchitectures, Falcon40bNewDecoderArchitecture) {
  // Not verified against a published exact figure (published: "40B"); derived: GQA with 8 KV
  // heads, ln_attn and ln_mlp per layer.
  const std::int64_t h = 8192, layer = (128 + 16) * 64 * h + h * h + 8 * h * h + 4 * h;
  EXPECT_EQ(params("falcon-40b"), 60 * layer + 65024 * h + 2 * h);
  EXPECT_EQ(params("falcon-40b"), 41'303'293'952);
  expect_tensors("falcon-40b", {"transformer.h.0.ln_attn.weight", "transformer.h.0.ln_mlp.bias"});
}

TEST(HfArchitectures, FalconNormsFollowParallelAttnAndNumLn) {
  const auto layer_tensors = [](const std::string& extra) {
    const ModelSpec m = harness::parse_model_hf_json(
        R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
            "vocab_size": 100, )" +
            extra + "}",
        "cfg.json");
    StateSpec state;
    state.scope = StateScope::weights;
    std::set<std::string> out;
    for (const Shard& s : Layout(m, ParallelSpec{.vocab_divisor = 1}, state).shards(0))
      out.insert(s.name);
    return out;
  };
  // Falcon-RW: sequential block, MHA (qkv 3h), input and post-attention LayerNorms.
  const auto rw = layer_tensors(R"("parallel_attn": false, "multi_query": false)");
  EXPECT_TRUE(rw.count("transformer.h.0.post_attention_layernorm.weight"));
  EXPECT_TRUE(rw.count("transformer.h.0.input_layernorm.bias"));
  // Falcon-11B style: new architecture with one norm in the parallel block.
  const auto one = layer_tensors(
      R"("new_decoder_architecture": true, "num_kv_heads": 2, "num_ln_in_parallel_attn": 1)");
  EXPECT_TRUE(one.count("transformer.h.0.input_layernorm.weight"));
  EXPECT_FALSE(one.count("transformer.h.0.ln_attn.weight"));
  const auto two = layer_tensors(R"("new_decoder_architecture": true, "num_kv_heads": 2)");
  EXPECT_TRUE(two.count("transformer.h.0.ln_mlp.weight"));
}

TEST(HfArchitectures, GptNeoxBiasesAndUntiedEmbedOut) {
  const auto neox = [](std::int64_t h, std::int64_t f, std::int64_t layers, std::int64_t vocab) {
    const std::int64_t layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h;
    return layers * layer + 2 * vocab * h + 2 * h;
  };
  EXPECT_EQ(params("pythia-1b"), neox(2048, 8192, 16, 50304));
  EXPECT_EQ(params("pythia-1b"), 1'011'781'632);  // EleutherAI/pythia-1b (Pythia paper, Table 1)
  EXPECT_EQ(params("gpt-neox-20b"), neox(6144, 24576, 44, 50432));
  EXPECT_EQ(params("gpt-neox-20b"), 20'554'567'680);  // EleutherAI/gpt-neox-20b (paper, Table 1)
  expect_tensors(
      "pythia-1b",
      {"gpt_neox.embed_in.weight", "gpt_neox.layers.0.attention.query_key_value.bias",
       "gpt_neox.layers.0.attention.dense.bias", "gpt_neox.layers.0.mlp.dense_4h_to_h.bias",
       "gpt_neox.layers.0.post_attention_layernorm.bias", "gpt_neox.final_layer_norm.weight",
       "embed_out.weight"});
}

TEST(HfArchitectures, Phi2DenseBiasesAndLmHeadBias) {
  const std::int64_t h = 2560, layer = 4 * h * h + 4 * h + 2 * h * 10240 + 10240 + h + 2 * h;
  EXPECT_EQ(params("phi-2"), 32 * layer + 2 * 51200 * h + 51200 + 2 * h);
  EXPECT_EQ(params("phi-2"), 2'779'683'840);  // microsoft/phi-2
  expect_tensors("phi-2", {"model.layers.0.self_attn.dense.bias", "model.layers.0.mlp.fc1.bias",
                           "model.layers.0.input_layernorm.bias", "model.final_layernorm.bias",
                           "lm_head.bias"});
  expect_no_tensor("phi-2", "post_attention_layernorm");
}

TEST(HfArchitectures, Starcoder2_7bBiasesAndLayerNorm) {
  // Not verified against a published exact figure ("7B"); config.json has no
  // tie_word_embeddings, so transformers' default (tied) applies. Derived: GQA 36/4 × 128
  // with biases, c_fc/c_proj with biases, two LayerNorms with bias.
  const std::int64_t h = 4608, f = 18432;
  const std::int64_t layer = 2 * h * h + 2 * 512 * h + 2 * h + 2 * 512 + 2 * h * f + f + h + 4 * h;
  EXPECT_EQ(params("starcoder2-7b"), 32 * layer + 49152 * h + 2 * h);
  EXPECT_EQ(params("starcoder2-7b"), 7'173'923'840);
  expect_tensors("starcoder2-7b",
                 {"model.layers.0.mlp.c_fc.bias", "model.layers.0.mlp.c_proj.weight",
                  "model.layers.0.self_attn.o_proj.bias", "model.norm.bias"});
}

TEST(HfArchitectures, CommandRv01ParallelBlockTied) {
  // Published "35B"; derived: one LayerNorm without bias per layer, gated MLP, tied.
  const std::int64_t h = 8192, layer = 4 * h * h + 3 * h * 22528 + h;
  EXPECT_EQ(params("c4ai-command-r-v01"), 40 * layer + 256000 * h + h);
  EXPECT_EQ(params("c4ai-command-r-v01"), 34'980'831'232);
  EXPECT_EQ(weights("c4ai-command-r-v01").totals(0).tensors, 40 * 8 + 2);
}

TEST(HfArchitectures, MegatronAndHfNamesCountTheSameBytes) {
  for (const char* model : {"gemma-2-9b", "phi-3-mini-4k", "qwen1.5-moe-a2.7b", "deepseek-v2-lite",
                            "olmo-7b", "olmo-2-1124-7b", "falcon-7b", "falcon-40b", "pythia-1b",
                            "phi-2", "starcoder2-7b", "c4ai-command-r-v01"}) {
    EXPECT_EQ(weights(model, Naming::megatron).checkpoint_bytes(),
              weights(model).checkpoint_bytes())
        << model;
    EXPECT_EQ(weights(model).checkpoint_bytes(), 2 * params(model)) << model;
  }
}

// The key a config is refused for, or "accepted".
std::string error_key(const std::string& json) {
  try {
    harness::parse_model_hf_json(json, "cfg.json");
  } catch (const harness::ConfigError& e) {
    return e.key();
  }
  return "accepted";
}

TEST(HfArchitectures, RefusesWhatCannotBeLaidOut) {
  const std::string base = R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                              "num_attention_heads": 4, "vocab_size": 100)";
  // Qwen2-MoE's dense layers may be anywhere (fixture small-qwen2-moe-sparse-step).
  EXPECT_EQ(error_key("{\"model_type\": \"qwen2_moe\", \"mlp_only_layers\": [1], " + base + "}"),
            "accepted");
  EXPECT_EQ(error_key("{\"model_type\": \"qwen2_moe\", \"decoder_sparse_step\": 0, " + base + "}"),
            "decoder_sparse_step");
  EXPECT_EQ(error_key("{\"model_type\": \"phi\", \"qk_layernorm\": true, " + base + "}"),
            "accepted");
  EXPECT_EQ(error_key("{\"model_type\": \"stablelm\", \"qk_layernorm\": true, " + base + "}"),
            "qk_layernorm");
  EXPECT_EQ(error_key("{\"model_type\": \"deepseek_v3\", \"qk_head_dim\": 100, " + base + "}"),
            "qk_head_dim");
  EXPECT_EQ(error_key("{\"model_type\": \"gpt_neox\", \"attention_bias\": false, " + base + "}"),
            "accepted");
  EXPECT_EQ(error_key("{\"model_type\": \"falcon\", \"num_kv_heds\": 2, " + base + "}"),
            "num_kv_heds");
  EXPECT_EQ(error_key("{\"model_type\": \"qwen2_moe\", \"mlp_only_layers\": [0], " + base + "}"),
            "accepted");
  const std::string gpt2 =
      R"("model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100)";
  EXPECT_EQ(error_key("{" + gpt2 + ", \"add_cross_attention\": true}"), "add_cross_attention");
  EXPECT_EQ(error_key("{\"model_type\": \"opt\", \"do_layer_norm_before\": false, " + base + "}"),
            "accepted");
  EXPECT_EQ(error_key("{\"model_type\": \"opt\", \"word_embed_proj_dim\": 32, " + base + "}"),
            "word_embed_proj_dim");
  // Aria's sizes are named as its config names them.
  EXPECT_EQ(error_key("{\"model_type\": \"aria_text\", " + base + "}"), "accepted");
  EXPECT_EQ(error_key("{\"model_type\": \"aria_text\", \"moe_topk\": 0, " + base + "}"),
            "moe_topk");
  EXPECT_EQ(error_key("{\"model_type\": \"aria_text\", \"moe_topk\": 9, " + base + "}"),
            "moe_topk");
  // Doge's MoE reads its sizes under its own names.
  EXPECT_EQ(error_key(R"({"model_type": "doge", "is_moe": true, "num_experts": 16})"), "accepted");
  EXPECT_EQ(error_key(R"({"model_type": "doge", "is_moe": "yes"})"), "is_moe");
  // RoFormer's embedding projection is not laid out.
  const std::string roformer =
      R"({"model_type": "roformer", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100, )";
  EXPECT_EQ(error_key(roformer + R"("embedding_size": 64})"), "accepted");
  EXPECT_EQ(error_key(roformer + R"("embedding_size": 32})"), "embedding_size");
  // TrOCR's untied output layer has a name of its own.
  EXPECT_EQ(error_key(R"({"model_type": "trocr"})"), "accepted");
  EXPECT_EQ(error_key(R"({"model_type": "trocr", "tie_word_embeddings": false})"),
            "tie_word_embeddings");
  // JetMoE routes tokens to experts in attention and in the MLP alike.
  EXPECT_EQ(error_key(R"({"model_type": "jetmoe"})"), "accepted");
  EXPECT_EQ(error_key(R"({"model_type": "jetmoe", "num_experts_per_tok": 9})"),
            "num_experts_per_tok");
  // Gemma 3n: one MLP width for every layer, and some layer must compute keys and values.
  const std::string gemma3n = R"({"model_type": "gemma3n_text", "num_hidden_layers": 2, )";
  EXPECT_EQ(error_key(gemma3n + R"("num_kv_shared_layers": 1})"), "accepted");
  EXPECT_EQ(error_key(gemma3n + R"("num_kv_shared_layers": 2})"), "num_kv_shared_layers");
  EXPECT_EQ(error_key(gemma3n + R"("num_kv_shared_layers": 0, "intermediate_size": [64, 64]})"),
            "accepted");
  EXPECT_EQ(error_key(gemma3n + R"("num_kv_shared_layers": 0, "intermediate_size": [64, 128]})"),
            "intermediate_size");
  // Llama 4's MoE layers must follow its dense layers (Maverick interleaves them).
  EXPECT_EQ(error_key("{\"model_type\": \"llama4_text\", \"moe_layers\": [0], " + base + "}"),
            "moe_layers");
  EXPECT_EQ(error_key("{\"model_type\": \"llama4_text\", \"interleave_moe_layer_step\": 2, " +
                      base + "}"),
            "accepted");
  EXPECT_EQ(
      error_key(R"({"model_type": "llama4_text", "interleave_moe_layer_step": 2, "hidden_size": 64,
                         "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
                         "vocab_size": 100})"),
      "interleave_moe_layer_step");
  EXPECT_EQ(
      error_key("{\"model_type\": \"mamba2\", \"num_heads\": 6, \"n_groups\": 4, " + base + "}"),
      "n_groups");
  // The hybrids' layer patterns: every entry a block the family has, one per layer.
  const std::string granite = R"("model_type": "granitemoehybrid", "mamba_n_heads": 8, )" + base;
  EXPECT_EQ(error_key("{" + granite + R"(, "layer_types": ["mamba", "mlp"]})"), "layer_types");
  EXPECT_EQ(error_key("{" + granite + R"(, "layer_types": ["mamba"]})"), "layer_types");
  EXPECT_EQ(error_key("{" + granite + R"(, "layer_types": ["mamba", "attention"]})"), "accepted");
  EXPECT_EQ(error_key("{" + granite + R"(, "shared_intermediate_size": 0})"),
            "shared_intermediate_size");
  const std::string nemotron = R"("model_type": "nemotron_h", "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
      "mamba_num_heads": 4, "mamba_head_dim": 32, "n_groups": 2)";
  EXPECT_EQ(error_key("{" + nemotron + R"(, "hybrid_override_pattern": "M-E*"})"), "accepted");
  EXPECT_EQ(error_key("{" + nemotron + R"(, "hybrid_override_pattern": "M-X"})"),
            "hybrid_override_pattern");
  EXPECT_EQ(error_key("{" + nemotron + R"(, "moe_latent_size": 32})"), "moe_latent_size");
  EXPECT_EQ(error_key("{" + nemotron + R"(, "moe_latent_size": 32, "layers_block_type": ["mlp"]})"),
            "accepted");
  EXPECT_EQ(error_key("{" + nemotron + R"(, "n_routed_experts": 0})"), "n_routed_experts");
  const std::string next =
      R"("model_type": "qwen3_next", "head_dim": 16, "num_experts": 4, "num_experts_per_tok": 2,
      "linear_num_value_heads": 4, "linear_num_key_heads": 2, )" +
      base;
  EXPECT_EQ(error_key("{" + next + R"(, "full_attention_interval": 0})"),
            "full_attention_interval");
  EXPECT_EQ(error_key("{" + next + R"(, "layer_types": ["sliding_attention", "full_attention"]})"),
            "layer_types");
  EXPECT_EQ(error_key("{" + next + R"(, "decoder_sparse_step": 0})"), "decoder_sparse_step");
  EXPECT_EQ(error_key("{" + next + R"(, "linear_num_value_heads": 3, "linear_value_head_dim": 1})"),
            "accepted");
  // ERNIE 4.5's MoE layers come every moe_layer_interval-th layer; AFMoE's shared MLP is never
  // absent; the BERT and XLM layouts have no cross-attention, task embeddings or adaptive softmax.
  const std::string ernie =
      R"("model_type": "ernie4_5_moe", "moe_num_experts": 4, "moe_k": 2, )" + base;
  EXPECT_EQ(error_key("{" + ernie + R"(, "moe_layer_interval": 0})"), "moe_layer_interval");
  EXPECT_EQ(error_key("{" + ernie + R"(, "moe_layer_end_index": -1})"), "accepted");
  EXPECT_EQ(error_key(R"({"model_type": "afmoe", "num_experts": 4, "num_shared_experts": 0, )" +
                      base + "}"),
            "num_shared_experts");
  EXPECT_EQ(error_key(R"({"model_type": "bert", "add_cross_attention": true, )" + base + "}"),
            "add_cross_attention");
  EXPECT_EQ(error_key(R"({"model_type": "ernie", "use_task_id": true, )" + base + "}"),
            "use_task_id");
  const std::string xlm =
      R"("model_type": "xlm", "emb_dim": 64, "n_layers": 2, "n_heads": 4, "vocab_size": 100)";
  EXPECT_EQ(error_key("{" + xlm + R"(, "asm": true})"), "asm");
  EXPECT_EQ(error_key("{" + xlm + R"(, "is_encoder": false})"), "is_encoder");
  EXPECT_EQ(error_key("{" + xlm + R"(, "n_langs": 2})"), "accepted");
  // BLOOM-176B's spelling of the width.
  EXPECT_EQ(
      error_key(R"({"model_type": "bloom", "n_embed": 64, "n_layer": 2, "num_attention_heads": 4,
                         "vocab_size": 100})"),
      "accepted");
}

// The per-layer lists of the sparse-attention indexer (GLM-5), of Zamba's and Zamba 2's hybrid
// layers and of MiniMax's attention name every layer with a kind the family has; the indexer needs
// a compressed query; MiniMax's remote-code layer list, which transformers ignores, is refused.
TEST(HfArchitectures, RefusesLayerListsThatDoNotFit) {
  const std::string dsa =
      R"("model_type": "glm_moe_dsa", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100, "n_routed_experts": 4, "num_experts_per_tok": 2,
      "first_k_dense_replace": 1)";
  EXPECT_EQ(error_key("{" + dsa + R"(, "indexer_types": ["full", "shared"]})"), "accepted");
  EXPECT_EQ(error_key("{" + dsa + R"(, "indexer_types": ["full"]})"), "indexer_types");
  EXPECT_EQ(error_key("{" + dsa + R"(, "indexer_types": ["full", "sparse"]})"), "indexer_types");
  EXPECT_EQ(error_key("{" + dsa + R"(, "index_topk_pattern": "FS"})"), "accepted");
  EXPECT_EQ(error_key("{" + dsa + R"(, "index_topk_pattern": "FX"})"), "index_topk_pattern");
  EXPECT_EQ(
      error_key(
          R"({"model_type": "deepseek_v32", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100, "first_k_dense_replace": 1, "q_lora_rank": null})"),
      "q_lora_rank");
  const std::string zamba = R"("model_type": "zamba", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 3, "num_attention_heads": 4, "vocab_size": 100)";
  EXPECT_EQ(error_key("{" + zamba + "}"), "accepted");
  EXPECT_EQ(error_key("{" + zamba + R"(, "layers_block_type": ["hybrid", "attention", "hybrid"]})"),
            "layers_block_type");
  EXPECT_EQ(error_key("{" + zamba + R"(, "layers_block_type": ["hybrid"]})"), "layers_block_type");
  EXPECT_EQ(error_key("{" + zamba + R"(, "n_mamba_heads": 3})"), "n_mamba_heads");
  const std::string zamba2 = R"("model_type": "zamba2", "hidden_size": 64, "num_hidden_layers": 3,
      "num_attention_heads": 4, "vocab_size": 100)";
  const std::string layers = R"(, "layers_block_type": ["mamba", "hybrid", "mamba"])";
  EXPECT_EQ(error_key("{" + zamba2 + layers + "}"), "accepted");
  EXPECT_EQ(error_key("{" + zamba2 + "}"), "layers_block_type");  // its default lists 54 layers
  EXPECT_EQ(error_key("{" + zamba2 + R"(, "layers_block_type": ["mamba", "attention", "mamba"]})"),
            "layers_block_type");
  EXPECT_EQ(error_key("{" + zamba2 + layers + R"(, "num_mem_blocks": 0})"), "num_mem_blocks");
  EXPECT_EQ(error_key("{" + zamba2 + layers + R"(, "mamba_ngroups": 3})"), "mamba_ngroups");
  const std::string minimax =
      R"("model_type": "minimax", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100)";
  EXPECT_EQ(
      error_key("{" + minimax + R"(, "layer_types": ["linear_attention", "full_attention"]})"),
      "accepted");
  EXPECT_EQ(error_key("{" + minimax + R"(, "layer_types": ["mamba", "full_attention"]})"),
            "layer_types");
  EXPECT_EQ(error_key("{" + minimax + R"(, "attn_type_list": [0, 1]})"), "attn_type_list");
}

}  // namespace
}  // namespace ckpt::workloads
