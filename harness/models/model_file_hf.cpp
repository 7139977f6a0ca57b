// Hugging Face config.json → ModelSpec. Missing keys take the defaults of the matching
// transformers config class, so that a config saved by transformers and one trimmed by hand
// describe the same model.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "harness/common/config_error.hpp"
#include "harness/common/suggest.hpp"
#include "harness/models/hf_config.hpp"
#include "harness/models/hf_families.hpp"
#include "harness/models/model_file.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

using hf::describe;
using hf::HfConfig;
using hf::Json;
using hf::line_at;
using hf::Locator;
using workloads::ModelSpec;

// How a config is mapped: `dense` is Llama's layout varied by the row's Traits (most
// families); the others have keys or blocks of their own.
// own_keys: the family names the common sizes its own way (map_own_keys_family maps it whole);
// fused_moe: experts stored as 3-D tensors.
enum class HfArch {
  dense,
  mixtral,
  deepseek,
  sparse_moe,
  falcon,
  gpt_neox,
  phi,
  starcoder2,
  own_keys,
  fused_moe
};

// The keys each architecture reads beyond kCommonKeys. A key outside these that is within edit
// distance 2 of one of them is taken for a misspelling.
constexpr std::string_view kCommonKeys[] = {"architectures",       "model_type",
                                            "hidden_size",         "intermediate_size",
                                            "num_hidden_layers",   "num_attention_heads",
                                            "num_key_value_heads", "vocab_size",
                                            "tie_word_embeddings", "max_position_embeddings"};
constexpr std::string_view kHeadDimKey = "head_dim";  // not read under MLA
constexpr std::string_view kMixtralKeys[] = {"num_local_experts", "num_experts_per_tok"};
constexpr std::string_view kPhimoeKeys[] = {"num_local_experts", "num_experts_per_tok",
                                            "lm_head_bias"};
// clang-format off
constexpr std::string_view kDeepseekKeys[] = {
    "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
    "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "qk_head_dim",
};
constexpr std::string_view kSarvamMoeKeys[] = {
    "n_routed_experts", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
    "num_shared_experts", "first_k_dense_replace", "use_qk_norm", "use_qkv_bias",
};
constexpr std::string_view kExaoneMoeKeys[] = {
    "num_experts", "num_experts_per_tok", "moe_intermediate_size", "num_shared_experts", "first_k_dense_replace",
    "mlp_layer_types",
};
constexpr std::string_view kSolarOpenKeys[] = {
    "n_routed_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
};
constexpr std::string_view kGlm4MoeLiteKeys[] = {
    "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "mlp_layer_types",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "qk_head_dim",
};
constexpr std::string_view kMiniCpm3Keys[] = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "qk_head_dim",
};
constexpr std::string_view kSparseMoeKeys[] = {
    "num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
    "shared_expert_intermediate_size", "decoder_sparse_step", "mlp_only_layers",
};
constexpr std::string_view kGlm4MoeKeys[] = {
    "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
    "first_k_dense_replace", "use_qk_norm",
};
constexpr std::string_view kFalconKeys[] = {
    "num_kv_heads", "multi_query", "parallel_attn", "new_decoder_architecture", "bias", "alibi",
    "num_ln_in_parallel_attn", "ffn_hidden_size",
};
// clang-format on
constexpr std::string_view kNeoxKeys[] = {"attention_bias"};
constexpr std::string_view kPhiKeys[] = {"qk_layernorm"};
constexpr std::string_view kStarcoder2Keys[] = {"use_bias"};
constexpr std::string_view kCohereKeys[] = {"use_qk_norm"};
// clang-format off
constexpr std::string_view kGpt2Keys[] = {"n_embd", "n_layer", "n_head", "n_positions", "n_inner", "add_cross_attention"};
constexpr std::string_view kGptBigCodeKeys[] = {"n_embd", "n_layer", "n_head", "n_positions", "n_inner", "add_cross_attention", "multi_query"};
constexpr std::string_view kGptNeoKeys[] = {"num_layers", "num_heads"};
constexpr std::string_view kXglmKeys[] = {"d_model", "num_layers", "attention_heads", "ffn_dim", "add_cross_attention"};
constexpr std::string_view kPersimmonKeys[] = {"qk_layernorm"};
constexpr std::string_view kBloomKeys[] = {"n_layer", "n_head", "n_embed"};
constexpr std::string_view kOptKeys[] = {
    "ffn_dim", "enable_bias", "layer_norm_elementwise_affine", "do_layer_norm_before", "word_embed_proj_dim",
    "_remove_final_layer_norm",
};
constexpr std::string_view kMambaKeys[] = {
    "state_size", "expand", "conv_kernel", "time_step_rank", "use_bias", "use_conv_bias", "num_heads", "n_groups",
};
constexpr std::string_view kJambaKeys[] = {
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias",
    "attn_layer_period", "attn_layer_offset", "expert_layer_period", "expert_layer_offset", "num_experts",
    "num_local_experts", "num_experts_per_tok",
};
constexpr std::string_view kBambaKeys[] = {
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_n_heads", "mamba_n_groups", "mamba_conv_bias",
    "mamba_proj_bias", "attn_layer_indices", "attention_bias", "mlp_bias", "head_dim",
};
constexpr std::string_view kFalconH1Keys[] = {
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_n_heads", "mamba_n_groups", "mamba_conv_bias",
    "mamba_proj_bias", "mamba_d_ssm", "mamba_rms_norm", "projectors_bias", "attention_bias", "mlp_bias", "head_dim",
};
constexpr std::string_view kGraniteMoeHybridKeys[] = {
    "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_n_heads", "mamba_n_groups", "mamba_conv_bias",
    "mamba_proj_bias", "attention_bias", "head_dim", "layer_types", "layers_block_type", "num_local_experts",
    "num_experts_per_tok", "shared_intermediate_size",
};
constexpr std::string_view kLfm2Keys[] = {
    "head_dim", "conv_bias", "conv_L_cache", "block_multiple_of", "block_ffn_dim_multiplier", "block_auto_adjust_ff_dim",
    "block_ff_dim", "full_attn_idxs", "layer_types", "tie_embedding",
};
constexpr std::string_view kNemotronHKeys[] = {
    "head_dim", "mlp_bias", "use_bias", "use_conv_bias", "mamba_conv_bias", "ssm_state_size", "mamba_num_heads",
    "mamba_head_dim", "n_groups", "mamba_n_groups", "conv_kernel", "mamba_d_conv", "layers_block_type", "layer_types",
    "hybrid_override_pattern", "n_routed_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
    "moe_shared_expert_intermediate_size", "moe_latent_size",
};
constexpr std::string_view kQwen3NextKeys[] = {
    "head_dim", "attention_bias", "linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel_dim", "layer_types", "full_attention_interval", "num_experts",
    "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
    "decoder_sparse_step", "mlp_only_layers",
};
constexpr std::string_view kDbrxKeys[] = {"d_model", "n_heads", "n_layers", "max_seq_len", "attn_config", "ffn_config"};
constexpr std::string_view kFusedMoeKeys[] = {
    "num_local_experts", "num_experts_per_tok", "intermediate_size_mlp", "interleave_moe_layer_step", "moe_layers",
    "use_qk_norm", "shared_intermediate_size",
};
// clang-format on

// Everything that sets one family apart from Llama: a row of data, not code.
struct Traits {
  // The boolean keys that put a bias on q/k/v, on the attention output and on the MLP
  // matrices; empty: the family has no such key. The bools are the values when a key is absent.
  std::string_view qkv_bias_key, o_bias_key, mlp_bias_key;
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool tie = false;  // tie_word_embeddings when the key is absent
  workloads::NormKind norm = workloads::NormKind::rmsnorm;
  workloads::NormPlacement placement = workloads::NormPlacement::pre;
  bool qk_norm = false;
  workloads::QkNormShape qk_norm_shape = workloads::QkNormShape::all_heads;
  workloads::MlpKind mlp = workloads::MlpKind::gated;
  bool fused_qkv = false;      // one qkv_proj matrix (Phi-3)
  bool fused_gate_up = false;  // one gate_up_proj matrix (Phi-3, GLM-4)
  workloads::HfNames names = workloads::HfNames::llama;
  // Sparse MoE defaults (HfArch::sparse_moe): experts, per token, expert width, shared width.
  std::int64_t experts = 0, per_token = 0, expert_width = 0, shared_width = 0;
  // A boolean key whose `true` adds tensors ckptbench does not model: refused, naming it.
  std::string_view unmodelled;
  bool sinks = false;      // a learned attention-sink logit per head (self_attn.sinks)
  bool sub_norms = false;  // BitNet's attn_sub_norm and ffn_sub_norm
  bool lambdas = false;    // DiffLlama's differential-attention vectors
};

struct ArchName {
  HfArch arch;
  std::string_view model_type;
  std::string_view class_name;
  std::span<const std::string_view> keys;  // read beyond kCommonKeys and the traits' keys
  bool reads_head_dim;
  Traits traits;
};

using workloads::HfNames;
using workloads::MlpKind;
using workloads::NormKind;
using workloads::NormPlacement;
using workloads::QkNormShape;
constexpr std::string_view kAttn = "attention_bias";
constexpr std::string_view kMlpBias = "mlp_bias";

// clang-format off
constexpr std::array kArchNames{
    ArchName{HfArch::dense, "llama", "LlamaForCausalLM", {}, true, {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::dense, "mistral", "MistralForCausalLM", {}, true, {}},
    ArchName{HfArch::dense, "ministral", "MinistralForCausalLM", {}, true, {}},
    ArchName{HfArch::dense, "ministral3", "Ministral3ForCausalLM", {}, true, {}},
    ArchName{HfArch::dense, "qwen2", "Qwen2ForCausalLM", {}, true, {.qkv_bias = true}},
    ArchName{HfArch::dense, "qwen3", "Qwen3ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim}},
    ArchName{HfArch::dense, "granite", "GraniteForCausalLM", {}, true, {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::dense, "granite_swa", "GraniteSWAForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .tie = true, .sinks = true}},
    ArchName{HfArch::dense, "smollm3", "SmolLM3ForCausalLM", {}, true, {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .tie = true}},
    ArchName{HfArch::dense, "helium", "HeliumForCausalLM", {}, true, {.qkv_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::dense, "arcee", "ArceeForCausalLM", {}, true, {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .mlp = MlpKind::plain}},
    ArchName{HfArch::dense, "ernie4_5", "Ernie4_5ForCausalLM", {}, true,
             {.qkv_bias_key = "use_bias", .o_bias_key = "use_bias", .mlp_bias_key = "use_bias", .tie = true}},
    ArchName{HfArch::dense, "gemma", "GemmaForCausalLM", {}, true, {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true}},
    ArchName{HfArch::dense, "gemma2", "Gemma2ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true, .placement = NormPlacement::sandwich}},
    ArchName{HfArch::dense, "gemma3_text", "Gemma3ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true, .placement = NormPlacement::sandwich, .qk_norm = true,
              .qk_norm_shape = QkNormShape::head_dim}},
    ArchName{HfArch::dense, "vaultgemma", "VaultGemmaForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true, .names = HfNames::vaultgemma}},
    ArchName{HfArch::dense, "phi3", "Phi3ForCausalLM", {}, true, {.fused_qkv = true, .fused_gate_up = true}},
    ArchName{HfArch::dense, "olmo", "OlmoForCausalLM", {}, true, {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .norm = NormKind::none}},
    ArchName{HfArch::dense, "olmo2", "Olmo2ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .placement = NormPlacement::post, .qk_norm = true}},
    ArchName{HfArch::dense, "olmo3", "Olmo3ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .placement = NormPlacement::post, .qk_norm = true}},
    ArchName{HfArch::dense, "exaone4", "Exaone4ForCausalLM", {}, true,
             {.placement = NormPlacement::post, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim}},
    // Cohere's LayerNorm has no bias: one weight vector, the same tensors as an RMSNorm.
    ArchName{HfArch::dense, "cohere", "CohereForCausalLM", kCohereKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true, .placement = NormPlacement::parallel,
              .qk_norm_shape = QkNormShape::per_head, .names = HfNames::cohere}},
    ArchName{HfArch::dense, "cohere2", "Cohere2ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true, .placement = NormPlacement::parallel}},
    ArchName{HfArch::dense, "glm4", "Glm4ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .placement = NormPlacement::sandwich, .fused_gate_up = true,
              .names = HfNames::glm4}},
    ArchName{HfArch::dense, "stablelm", "StableLmForCausalLM", {}, false,
             {.qkv_bias_key = "use_qkv_bias", .norm = NormKind::layernorm, .unmodelled = "qk_layernorm"}},
    // Nemotron's LayerNorm1P carries a bias like a LayerNorm.
    ArchName{HfArch::dense, "nemotron", "NemotronForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .norm = NormKind::layernorm, .mlp = MlpKind::plain}},
    ArchName{HfArch::dense, "internlm3", "LlamaForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::dense, "iquestcoder", "LlamaForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::dense, "hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .names = HfNames::hunyuan}},
    // NanoChat's norms (q/k norms included) have no weights.
    ArchName{HfArch::dense, "nanochat", "NanoChatForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .norm = NormKind::none, .mlp = MlpKind::plain,
              .names = HfNames::nanochat}},
    ArchName{HfArch::dense, "bitnet", "BitNetForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .sub_norms = true}},
    ArchName{HfArch::dense, "exaone", "ExaoneForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .names = HfNames::exaone}},
    ArchName{HfArch::dense, "diffllama", "DiffLlamaForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .lambdas = true}},
    ArchName{HfArch::dense, "cwm", "CwmForCausalLM", {}, true, {.mlp_bias_key = kMlpBias}},
    ArchName{HfArch::dense, "glm", "GlmForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .qkv_bias = true, .fused_gate_up = true}},
    ArchName{HfArch::dense, "seed_oss", "SeedOssForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = "attention_out_bias", .mlp_bias_key = kMlpBias, .qkv_bias = true}},
    ArchName{HfArch::dense, "jais2", "Jais2ForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .qkv_bias = true, .o_bias = true,
              .mlp_bias = true, .norm = NormKind::layernorm, .mlp = MlpKind::plain}},
    ArchName{HfArch::mixtral, "mixtral", "MixtralForCausalLM", kMixtralKeys, true, {}},
    ArchName{HfArch::mixtral, "phimoe", "PhimoeForCausalLM", kPhimoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .norm = NormKind::layernorm}},
    ArchName{HfArch::deepseek, "deepseek_v3", "DeepseekV3ForCausalLM", kDeepseekKeys, false, {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "deepseek_v2", "DeepseekV2ForCausalLM", kDeepseekKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::deepseek, "glm4_moe", "Glm4MoeForCausalLM", kGlm4MoeKeys, true,
             {.qkv_bias_key = kAttn, .qk_norm_shape = QkNormShape::head_dim}},
    ArchName{HfArch::deepseek, "sarvam_mla", "DeepseekV3ForCausalLM", kDeepseekKeys, false, {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "sarvam_moe", "SarvamMoEForCausalLM", kSarvamMoeKeys, true,
             {.qkv_bias_key = kAttn, .qk_norm_shape = QkNormShape::head_dim, .fused_qkv = true, .names = HfNames::sarvam_moe}},
    ArchName{HfArch::deepseek, "exaone_moe", "ExaoneMoeForCausalLM", kExaoneMoeKeys, true,
             {.qk_norm = true, .qk_norm_shape = QkNormShape::head_dim, .names = HfNames::exaone_moe}},
    ArchName{HfArch::deepseek, "solar_open", "SolarOpenForCausalLM", kSolarOpenKeys, true, {.qkv_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "glm4_moe_lite", "Glm4MoeLiteForCausalLM", kGlm4MoeLiteKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "youtu", "YoutuForCausalLM", kMiniCpm3Keys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true}},
    ArchName{HfArch::deepseek, "minicpm3", "MiniCPM3ForCausalLM", kMiniCpm3Keys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .tie = true}},
    ArchName{HfArch::sparse_moe, "qwen2_moe", "Qwen2MoeForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = "qkv_bias", .qkv_bias = true, .names = HfNames::qwen2_moe, .experts = 60, .per_token = 4,
              .expert_width = 1408, .shared_width = 5632}},
    ArchName{HfArch::sparse_moe, "qwen3_moe", "Qwen3MoeForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim, .names = HfNames::qwen2_moe,
              .experts = 128, .per_token = 8, .expert_width = 768}},
    ArchName{HfArch::sparse_moe, "mellum", "MellumForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .names = HfNames::qwen2_moe, .experts = 64, .per_token = 8, .expert_width = 896}},
    ArchName{HfArch::sparse_moe, "olmoe", "OlmoeForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .names = HfNames::qwen2_moe, .experts = 64, .per_token = 8}},
    ArchName{HfArch::sparse_moe, "flex_olmo", "FlexOlmoForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .placement = NormPlacement::post, .qk_norm = true,
              .names = HfNames::qwen2_moe, .experts = 7, .per_token = 5}},
    ArchName{HfArch::falcon, "falcon", "FalconForCausalLM", kFalconKeys, false, {}},
    ArchName{HfArch::gpt_neox, "gpt_neox", "GPTNeoXForCausalLM", kNeoxKeys, false, {}},
    ArchName{HfArch::phi, "phi", "PhiForCausalLM", kPhiKeys, false, {}},
    ArchName{HfArch::starcoder2, "starcoder2", "Starcoder2ForCausalLM", kStarcoder2Keys, false, {}},
    ArchName{HfArch::own_keys, "gpt2", "GPT2LMHeadModel", kGpt2Keys, false, {}},
    ArchName{HfArch::own_keys, "gptj", "GPTJForCausalLM", kGpt2Keys, false, {}},
    ArchName{HfArch::own_keys, "codegen", "CodeGenForCausalLM", kGpt2Keys, false, {}},
    ArchName{HfArch::own_keys, "openai-gpt", "OpenAIGPTLMHeadModel", kGpt2Keys, false, {}},
    ArchName{HfArch::own_keys, "gpt_bigcode", "GPTBigCodeForCausalLM", kGptBigCodeKeys, false, {}},
    ArchName{HfArch::own_keys, "bloom", "BloomForCausalLM", kBloomKeys, false, {}},
    ArchName{HfArch::own_keys, "gpt_neo", "GPTNeoForCausalLM", kGptNeoKeys, false, {}},
    ArchName{HfArch::own_keys, "xglm", "XGLMForCausalLM", kXglmKeys, false, {}},
    ArchName{HfArch::own_keys, "persimmon", "PersimmonForCausalLM", kPersimmonKeys, false, {}},
    ArchName{HfArch::own_keys, "opt", "OPTForCausalLM", kOptKeys, false, {}},
    ArchName{HfArch::own_keys, "mamba", "MambaForCausalLM", kMambaKeys, false, {}},
    ArchName{HfArch::own_keys, "dbrx", "DbrxForCausalLM", kDbrxKeys, false, {}},
    ArchName{HfArch::own_keys, "mamba2", "Mamba2ForCausalLM", kMambaKeys, false, {}},
    ArchName{HfArch::own_keys, "falcon_mamba", "FalconMambaForCausalLM", kMambaKeys, false, {}},
    ArchName{HfArch::own_keys, "falcon_h1", "FalconH1ForCausalLM", kFalconH1Keys, false, {}},
    ArchName{HfArch::own_keys, "bamba", "BambaForCausalLM", kBambaKeys, false, {}},
    ArchName{HfArch::own_keys, "jamba", "JambaForCausalLM", kJambaKeys, false, {}},
    ArchName{HfArch::own_keys, "granitemoehybrid", "GraniteMoeHybridForCausalLM", kGraniteMoeHybridKeys, false, {}},
    ArchName{HfArch::own_keys, "nemotron_h", "NemotronHForCausalLM", kNemotronHKeys, false, {}},
    ArchName{HfArch::own_keys, "qwen3_next", "Qwen3NextForCausalLM", kQwen3NextKeys, false, {}},
    ArchName{HfArch::own_keys, "lfm2", "Lfm2ForCausalLM", kLfm2Keys, false, {}},
    ArchName{HfArch::fused_moe, "gpt_oss", "GptOssForCausalLM", kFusedMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qkv_bias = true, .o_bias = true}},
    ArchName{HfArch::fused_moe, "llama4_text", "Llama4ForCausalLM", kFusedMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::fused_moe, "granitemoe", "GraniteMoeForCausalLM", kFusedMoeKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::fused_moe, "granitemoeshared", "GraniteMoeSharedForCausalLM", kFusedMoeKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .fused_gate_up = true}},
    ArchName{HfArch::fused_moe, "granitemoe_swa", "GraniteMoeSWAForCausalLM", kFusedMoeKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .fused_gate_up = true, .sinks = true}},
};
// clang-format on

// The keys a row's traits read.
std::vector<std::string_view> trait_keys(const Traits& t) {
  std::vector<std::string_view> keys;
  for (const std::string_view key : {t.qkv_bias_key, t.o_bias_key, t.mlp_bias_key, t.unmodelled}) {
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

// Keys real configs carry that do not change which tensors a checkpoint holds or their
// shapes (token ids, dropout, epsilons, RoPE settings, routing hyper-parameters, dtypes,
// soft-capping, residual wiring such as use_parallel_residual).
// Except num_nextn_predict_layers: DeepSeek-V3's multi-token-prediction layer ships in the
// checkpoint but is not part of the model we lay out, so such checkpoints are undercounted.
// clang-format off
constexpr std::string_view kIgnoredKeys[] = {
    "_name_or_path", "attention_dropout", "auto_map", "bos_token_id", "eos_token_id",
    "pad_token_id", "hidden_act", "hidden_dropout", "initializer_range", "rms_norm_eps",
    "layer_norm_eps", "rope_theta", "rope_scaling", "rope_interleave", "partial_rotary_factor",
    "sliding_window", "use_sliding_window", "max_window_layers", "layer_types", "torch_dtype",
    "dtype", "transformers_version", "use_cache", "pretraining_tp", "output_router_logits",
    "router_aux_loss_coef", "router_jitter_noise", "aux_loss_alpha", "ep_size",
    "moe_layer_freq", "n_group", "topk_group", "norm_topk_prob", "routed_scaling_factor",
    "scoring_func", "seq_aux", "num_nextn_predict_layers", "quantization_config",
    "hidden_activation", "query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping",
    "cache_implementation", "original_max_position_embeddings", "embd_pdrop", "resid_pdrop", "clip_qkv",
    "rotary_pct", "rotary_emb_base", "use_parallel_residual", "classifier_dropout", "norm_epsilon",
    "residual_dropout", "embedding_dropout", "logit_scale", "layer_norm_epsilon", "rope_type",
    "activation_function", "attn_pdrop", "rotary_dim", "apply_residual_connection_post_layernorm",
    "slow_but_exact", "dropout", "init_std", "layerdrop", "swiglu_alpha", "swiglu_limit",
    "attention_chunk_size", "attn_scale", "attn_temperature_tuning", "floor_scale", "no_rope_layer_interval",
    "no_rope_layers", "attention_multiplier", "embedding_multiplier", "logits_scaling", "residual_multiplier",
    "rescale_prenorm_residual", "residual_in_fp32", "time_step_floor", "time_step_init_scheme",
    "time_step_max", "time_step_min", "time_step_scale", "time_step_limit", "use_associative_scan",
    "use_mambapy", "chunk_size", "rms_norm", "norm_before_gate", "scale_attn_weights",
    "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_activation", "summary_first_dropout",
    "summary_proj_to_labels", "summary_type", "summary_use_proj", "emb_pdrop",
    "rope_parameters", "attention_in_multiplier", "attention_out_multiplier", "key_multiplier",
    "lm_head_multiplier", "mlp_multipliers", "ssm_multipliers", "ssm_in_multiplier", "ssm_out_multiplier",
    "mamba_chunk_size", "mamba_norm_before_gate", "mamba_d_head", "num_logits_to_keep", "use_mamba_kernels",
    "z_loss_coefficient", "mixer_rms_eps", "layer_rope_theta", "position_embedding_type",
};
// clang-format on

bool contains(std::span<const std::string_view> keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::vector<std::string_view> consumed_keys(const ArchName& info) {
  std::vector<std::string_view> keys(std::begin(kCommonKeys), std::end(kCommonKeys));
  if (info.reads_head_dim) keys.push_back(kHeadDimKey);
  keys.insert(keys.end(), info.keys.begin(), info.keys.end());
  const std::vector<std::string_view> traits = trait_keys(info.traits);
  keys.insert(keys.end(), traits.begin(), traits.end());
  return keys;
}

bool read_by_any_arch(std::string_view key) {
  if (contains(kCommonKeys, key) || key == kHeadDimKey) return true;
  return std::any_of(kArchNames.begin(), kArchNames.end(), [key](const ArchName& name) {
    return contains(name.keys, key) || contains(trait_keys(name.traits), key);
  });
}

std::string supported_list() {
  std::string list;
  for (const ArchName& name : kArchNames) {
    if (!list.empty()) list += ", ";
    list += std::string(name.model_type) + " (" + std::string(name.class_name) + ")";
  }
  return list;
}

std::vector<std::string> class_names(const Json& root, const Locator& at) {
  std::vector<std::string> names;
  const auto it = root.find("architectures");
  if (it == root.end() || it->is_null()) return names;
  if (!it->is_array()) at.fail("architectures", "expected an array, found " + describe(*it));
  for (const Json& entry : *it) {
    if (!entry.is_string()) {
      at.fail("architectures", "expected an array of strings, found " + describe(entry) + " in it");
    }
    names.push_back(entry.get<std::string>());
  }
  return names;
}

// model_type decides, as it does for transformers' AutoConfig; architectures is the fallback.
const ArchName& detect_arch(const Json& root, const Locator& at) {
  const std::vector<std::string> classes = class_names(root, at);
  const auto type_it = root.find("model_type");
  const bool has_type = type_it != root.end() && !type_it->is_null();
  if (has_type && !type_it->is_string()) {
    at.fail("model_type", "expected a string, found " + describe(*type_it));
  }
  const std::string model_type = has_type ? type_it->get<std::string>() : std::string();
  for (const ArchName& name : kArchNames) {
    if (has_type && model_type == name.model_type) return name;
    if (!has_type && std::find(classes.begin(), classes.end(), name.class_name) != classes.end()) {
      return name;
    }
  }
  // The other way in: a TOML model file with the architecture spelled out.
  const std::string supported =
      " — supported: " + supported_list() +
      ". For another architecture write a TOML model file instead (required keys: name, "
      "hidden_size, "
      "num_hidden_layers, num_attention_heads, vocab_size, and intermediate_size unless every "
      "layer is MoE; "
      "optional: num_key_value_heads, head_dim, tie_word_embeddings, norm, norm_placement, mlp, "
      "position_embedding, qkv_bias, o_bias, mlp_bias, linear_bias, qk_norm, MoE and MLA keys; see "
      "README "
      "\"Model files\") and pass its path as the model, e.g. workloads/zoo/qwen2-7b.toml";
  if (!has_type && classes.empty()) {
    const std::string problem =
        "required key is missing (neither `model_type` nor `architectures` is given, so the "
        "architecture is unknown)";
    throw ConfigError(at.source(), 0, "model_type", problem + supported);
  }
  std::string found = has_type ? "\"" + model_type + "\"" : std::string();
  for (const std::string& cls : classes) found += (found.empty() ? "(" : " (") + cls + ")";
  at.fail(has_type ? "model_type" : "architectures",
          "unsupported architecture " + found + supported);
}

void check_unknown_keys(const Json& root, const Locator& at, const ArchName& arch) {
  const std::vector<std::string_view> consumed = consumed_keys(arch);
  for (const auto& [key, value] : root.items()) {
    if (read_by_any_arch(key) || contains(kIgnoredKeys, key)) continue;
    std::size_t nearest = std::numeric_limits<std::size_t>::max();
    for (const std::string_view known : consumed) {
      nearest = std::min(nearest, edit_distance(key, known));
    }
    if (nearest <= 2) at.fail(key, "unknown key" + did_you_mean(key, consumed));
  }
}

// The row's traits: norms, names, q/k norms and which bias keys reach which matrices.
void apply_traits(ModelSpec& spec, const HfConfig& config, const Traits& t) {
  const auto flag = [&](std::string_view key, bool fallback) {
    return key.empty() ? fallback : config.flag_or(key, fallback);
  };
  if (flag(t.unmodelled, false)) {
    config.at().fail(t.unmodelled,
                     std::string(t.unmodelled) +
                         " = true adds tensors ckptbench does not lay out for this "
                         "architecture; describe the model in a TOML model file instead");
  }
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", t.tie);
  spec.norm = t.norm;
  spec.norm_placement = t.placement;
  spec.qk_norm = t.qk_norm;
  spec.qk_norm_shape = t.qk_norm_shape;
  spec.mlp = t.mlp;
  spec.fused_qkv = t.fused_qkv;
  spec.fused_gate_up = t.fused_gate_up;
  spec.attention_sinks = t.sinks;
  spec.sub_norms = t.sub_norms;
  spec.attention_lambdas = t.lambdas;
  spec.hf_names = t.names;
  spec.qkv_bias = flag(t.qkv_bias_key, t.qkv_bias);
  spec.o_bias = flag(t.o_bias_key, t.o_bias);
  spec.mlp_bias = flag(t.mlp_bias_key, t.mlp_bias);
}

// Qwen2MoeConfig and its followers: every layer sparse unless decoder_sparse_step or
// mlp_only_layers say otherwise; ModelSpec's dense layers are the leading ones
// (first_k_dense_replace).
void map_sparse_moe(ModelSpec& spec, const HfConfig& config, const Traits& t) {
  // transformers 5 saves num_experts under its attribute-map name, num_local_experts.
  spec.num_local_experts =
      config.size("num_local_experts").value_or(config.size_or("num_experts", t.experts));
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", t.per_token);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", t.expert_width);
  spec.shared_expert_intermediate_size =
      config.size_or("shared_expert_intermediate_size", t.shared_width);
  spec.shared_expert_gate = spec.shared_expert_intermediate_size > 0;
  if (config.size_or("decoder_sparse_step", 1) != 1) {
    config.at().fail("decoder_sparse_step",
                     "only decoder_sparse_step = 1 (every layer MoE) can be laid out; "
                     "describe the model in a TOML model file instead");
  }
  const std::vector<std::int64_t> dense = config.sizes("mlp_only_layers");
  for (std::size_t i = 0; i < dense.size(); ++i) {
    if (dense[i] != static_cast<std::int64_t>(i)) {
      config.at().fail("mlp_only_layers",
                       "only leading dense layers ([0, 1, ..., k-1]) can be laid out");
    }
  }
  spec.first_k_dense_replace = static_cast<std::int64_t>(dense.size());
}

// FalconConfig: MQA (multi_query) or, with new_decoder_architecture, GQA over num_kv_heads and
// one LayerNorm each for the parallel attention and MLP; the MLP is ffn_hidden_size (4h) wide.
void map_falcon(ModelSpec& spec, const HfConfig& config) {
  spec.hf_names = workloads::HfNames::falcon;
  spec.norm = workloads::NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.fused_qkv = true;
  spec.linear_bias = config.flag_or("bias", false);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  spec.intermediate_size = config.size_or("ffn_hidden_size", 4 * spec.hidden_size);
  if (config.flag_or("alibi", false)) spec.position_embedding = workloads::PositionEmbedding::alibi;
  // FalconDecoderLayer: without parallel_attn, input + post-attention norms; with it, ln_attn
  // and ln_mlp when num_ln_in_parallel_attn is 2 (its default under new_decoder_architecture),
  // else one input norm.
  const bool new_architecture = config.flag_or("new_decoder_architecture", false);
  if (new_architecture) {
    spec.num_key_value_heads = config.size_or("num_kv_heads", spec.num_attention_heads);
  } else {
    spec.num_key_value_heads = config.flag_or("multi_query", true) ? 1 : spec.num_attention_heads;
  }
  const std::int64_t norms = config.size_or("num_ln_in_parallel_attn", new_architecture ? 2 : 1);
  if (!config.flag_or("parallel_attn", true)) {
    spec.norm_placement = NormPlacement::pre;
  } else {
    spec.norm_placement = norms == 2 ? NormPlacement::parallel_pair : NormPlacement::parallel;
  }
}

// The GPT-style families: LayerNorm with bias, a plain two-matrix MLP, biases on the linears.
void map_gpt_variant(HfArch arch, ModelSpec& spec, const HfConfig& config) {
  spec.norm = workloads::NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.linear_bias = true;
  switch (arch) {
    case HfArch::gpt_neox:
      // attention_bias = false drops the biases of q/k/v and dense; the MLP keeps its own.
      spec.hf_names = workloads::HfNames::gpt_neox;
      spec.fused_qkv = true;
      spec.linear_bias = false;
      spec.mlp_bias = true;
      spec.qkv_bias = spec.o_bias = config.flag_or("attention_bias", true);
      break;
    case HfArch::phi:
      // LayerNorms [head_dim] with biases on q and k.
      spec.qk_norm = config.flag_or("qk_layernorm", false);
      spec.qk_norm_shape = QkNormShape::head_dim;
      spec.hf_names = workloads::HfNames::phi;
      spec.norm_placement = NormPlacement::parallel;
      spec.lm_head_bias = true;
      break;
    case HfArch::starcoder2:
      spec.hf_names = workloads::HfNames::starcoder2;
      spec.linear_bias = config.flag_or("use_bias", true);
      spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
      break;
    default:
      break;
  }
}

ModelSpec map_spec(const ArchName& arch, const HfConfig& config) {
  if (arch.arch == HfArch::own_keys) return hf::map_own_keys_family(arch.model_type, config);
  ModelSpec spec;
  spec.hidden_size = config.required_size("hidden_size");
  // The DeepSeek-style families need it for their dense layers only (validate() checks).
  if (arch.arch == HfArch::deepseek)
    spec.intermediate_size = config.size_or("intermediate_size", 0);
  else if (arch.arch != HfArch::falcon)
    spec.intermediate_size = config.required_size("intermediate_size");
  spec.num_hidden_layers = config.required_size("num_hidden_layers");
  spec.num_attention_heads = config.required_size("num_attention_heads");
  spec.num_key_value_heads = config.size_or("num_key_value_heads", spec.num_attention_heads);
  spec.vocab_size = config.required_size("vocab_size");
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 0);
  spec.position_embedding = workloads::PositionEmbedding::rope;
  spec.embedding_norm = false;
  apply_traits(spec, config, arch.traits);
  switch (arch.arch) {
    case HfArch::dense:
      if (arch.model_type == "cohere") spec.qk_norm = config.flag_or("use_qk_norm", false);
      break;
    case HfArch::mixtral:
      spec.num_local_experts = config.size_or("num_local_experts", 8);
      spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 2);
      if (arch.model_type == "phimoe") {
        spec.num_local_experts = config.size_or("num_local_experts", 16);
        spec.lm_head_bias = config.flag_or("lm_head_bias", false);
      }
      break;
    case HfArch::deepseek:
      hf::map_deepseek(spec, config, arch.model_type);
      break;
    case HfArch::sparse_moe:
      map_sparse_moe(spec, config, arch.traits);
      break;
    case HfArch::falcon:
      map_falcon(spec, config);
      break;
    case HfArch::fused_moe:
      hf::map_fused_moe(spec, config, arch.model_type);
      break;
    case HfArch::own_keys:
      break;
    case HfArch::gpt_neox:
    case HfArch::phi:
    case HfArch::starcoder2:
      map_gpt_variant(arch.arch, spec, config);
      break;
  }
  if (arch.reads_head_dim) spec.head_dim = config.size_or("head_dim", 0);
  return spec;
}

// The HF key a ModelSpec key came from, for pointing a validation error at its line.
std::string hf_key(const ArchName& arch, const std::string& spec_key) {
  const bool deepseek = arch.arch == HfArch::deepseek;
  if (deepseek && spec_key == "num_local_experts") return "n_routed_experts";
  if (arch.arch == HfArch::sparse_moe && spec_key == "num_local_experts") return "num_experts";
  if (arch.arch == HfArch::falcon && spec_key == "num_key_value_heads") return "num_kv_heads";
  if (arch.arch == HfArch::falcon && spec_key == "intermediate_size") return "ffn_hidden_size";
  if (arch.arch == HfArch::own_keys) return hf::own_keys_family_key(arch.model_type, spec_key);
  return spec_key;
}

// config.json is named after its directory (models/Meta-Llama-3-8B/config.json); any other
// file after its stem.
std::string name_from_source(const std::string& source) {
  const std::filesystem::path path(source);
  if (path.filename() == "config.json") {
    std::error_code ec;
    const std::filesystem::path full = std::filesystem::absolute(path, ec).lexically_normal();
    const std::string directory = (ec ? path : full).parent_path().filename().string();
    if (!directory.empty() && directory != "." && directory != "..") return directory;
  }
  return path.stem().string();
}

Json parse_json(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1 and points at the offending character, or one past the end when
    // the input stops early; then the last line with content is the one to look at.
    std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    if (offset == text.size()) {
      const std::size_t last = text.find_last_not_of(" \t\r\n");
      offset = last == std::string_view::npos ? 0 : last;
    }
    const std::int64_t line = line_at(text, offset);
    std::string what = e.what();  // "[json.exception...] parse error at line L, column C: why"
    if (const std::size_t colon = what.find(": "); colon != std::string::npos) {
      what = what.substr(colon + 2);
    }
    throw ConfigError(source, line, "", "JSON syntax error: " + what);
  } catch (const Json::out_of_range& e) {  // a number beyond double, e.g. 1e5555 (found by fuzzing)
    std::string what =
        e.what();  // "[json.exception.out_of_range.406] number overflow parsing '1e5555'"
    if (const std::size_t bracket = what.find("] "); bracket != std::string::npos)
      what = what.substr(bracket + 2);
    throw ConfigError(source, 0, "", "JSON number out of range: " + what);
  }
}

}  // namespace

workloads::ModelSpec parse_model_hf_json(std::string_view text, const std::string& source_name) {
  const Json root = parse_json(text, source_name);
  const Locator at(text, source_name);
  if (!root.is_object()) {
    throw ConfigError(source_name, 0, "",
                      "expected a JSON object at the top level, found " + describe(root));
  }
  const ArchName& arch = detect_arch(root, at);
  check_unknown_keys(root, at, arch);
  ModelSpec spec = map_spec(arch, HfConfig(root, at, consumed_keys(arch)));
  spec.name = name_from_source(source_name);
  try {
    spec.validate();
  } catch (const workloads::SpecError& e) {
    at.fail(hf_key(arch, e.key()), e.what());
  }
  return spec;
}

}  // namespace ckpt::harness
