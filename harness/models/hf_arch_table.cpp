#include "harness/models/hf_arch_table.hpp"

#include <array>

namespace ckpt::harness::hf {
namespace {

constexpr std::string_view kCommonKeys[] = {"architectures",       "model_type",
                                            "hidden_size",         "intermediate_size",
                                            "num_hidden_layers",   "num_attention_heads",
                                            "num_key_value_heads", "vocab_size",
                                            "tie_word_embeddings", "max_position_embeddings"};
constexpr std::string_view kMixtralKeys[] = {"num_local_experts", "num_experts_per_tok"};
constexpr std::string_view kHunyuanMoeKeys[] = {"num_experts", "moe_topk"};
constexpr std::string_view kMiniMaxKeys[] = {"num_local_experts", "num_experts_per_tok",
                                             "num_experts",       "layer_types",
                                             "attn_type_list",    "block_size"};
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
constexpr std::string_view kCohere2MoeKeys[] = {
    "num_experts", "num_experts_per_tok", "num_shared_experts", "mlp_layer_types", "first_k_dense_replace",
    "prefix_dense_intermediate_size",
};
constexpr std::string_view kErnieMoeKeys[] = {
    "moe_num_experts", "num_experts", "moe_k", "num_experts_per_tok", "moe_intermediate_size", "moe_num_shared_experts",
    "moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval",
};
constexpr std::string_view kAfmoeKeys[] = {
    "num_experts", "num_experts_per_tok", "moe_intermediate_size", "num_shared_experts", "num_dense_layers",
};
constexpr std::string_view kHyV3Keys[] = {
    "num_experts", "num_experts_per_tok", "moe_intermediate_size", "num_shared_experts", "mlp_layer_types",
};
constexpr std::string_view kSolarOpenKeys[] = {
    "n_routed_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
};
constexpr std::string_view kGlm4MoeLiteKeys[] = {
    "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "mlp_layer_types",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "qk_head_dim",
};
constexpr std::string_view kDeepseekV32Keys[] = {
    "n_routed_experts", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "mlp_layer_types",
    "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    "qk_head_dim", "index_n_heads", "index_head_dim",
};
constexpr std::string_view kGlmMoeDsaKeys[] = {
    "n_routed_experts", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "mlp_layer_types",
    "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    "qk_head_dim", "index_n_heads", "index_head_dim", "indexer_types", "index_topk_pattern", "index_topk_freq",
    "index_skip_topk_offset",
};
constexpr std::string_view kMiniCpm3Keys[] = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "qk_head_dim",
};
constexpr std::string_view kQwen3MoeKeys[] = {
    "num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step",
    "mlp_only_layers",
};
constexpr std::string_view kMellumKeys[] = {"num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size"};
constexpr std::string_view kOlmoeKeys[] = {"num_experts", "num_local_experts", "num_experts_per_tok"};
constexpr std::string_view kKolibriKeys[] = {
    "num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
};
constexpr std::string_view kSparseMoeKeys[] = {
    "num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
    "shared_expert_intermediate_size", "decoder_sparse_step", "mlp_only_layers",
};
constexpr std::string_view kDots1Keys[] = {
    "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "first_k_dense_replace",
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
constexpr std::string_view kLfm2MoeKeys[] = {
    "head_dim", "conv_bias", "conv_L_cache", "layer_types", "tie_embedding", "num_dense_layers", "num_experts",
    "num_experts_per_tok", "moe_intermediate_size", "use_expert_bias",
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
constexpr std::string_view kQwen35Keys[] = {
    "head_dim", "attention_bias", "linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel_dim", "layer_types", "full_attention_interval",
};
constexpr std::string_view kQwen35MoeKeys[] = {
    "head_dim", "attention_bias", "linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel_dim", "layer_types", "full_attention_interval", "num_experts",
    "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
};
constexpr std::string_view kZambaKeys[] = {
    "attention_hidden_size", "attention_head_dim", "n_mamba_heads", "mamba_d_state", "mamba_d_conv", "mamba_expand",
    "mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias", "attn_layer_period", "attn_layer_offset", "layers_block_type",
    "layer_types", "head_dim",
};
constexpr std::string_view kZamba2Keys[] = {
    "attention_hidden_size", "attention_head_dim", "head_dim", "mamba_headdim", "kv_channels", "num_query_groups",
    "hybrid_layer_ids", "n_mamba_heads", "mamba_ngroups", "mamba_d_state", "mamba_d_conv", "mamba_expand",
    "use_conv_bias", "add_bias_linear", "num_mem_blocks", "adapter_rank", "use_shared_attention_adapter",
    "use_mem_rope", "use_long_context", "use_mem_eff_path", "layers_block_type", "layer_types",
};
constexpr std::string_view kAriaKeys[] = {"moe_num_experts", "moe_topk", "moe_num_shared_experts"};
constexpr std::string_view kGemma3nKeys[] = {
    "attention_bias", "num_kv_shared_layers", "altup_num_inputs", "altup_active_idx", "altup_coef_clip",
    "altup_correct_scale", "laurel_rank", "hidden_size_per_layer_input", "vocab_size_per_layer_input",
    "activation_sparsity_pattern",
};
constexpr std::string_view kDogeKeys[] = {
    "attention_bias", "mlp_bias", "keep_window_size", "is_moe", "num_experts", "num_experts_per_tok",
};
constexpr std::string_view kRoFormerKeys[] = {"type_vocab_size", "add_cross_attention", "embedding_size", "rotary_value"};
constexpr std::string_view kRoCBertKeys[] = {
    "type_vocab_size", "add_cross_attention", "enable_pronunciation", "enable_shape", "pronunciation_embed_dim",
    "pronunciation_vocab_size", "shape_embed_dim", "shape_vocab_size", "concat_input",
};
constexpr std::string_view kXmodKeys[] = {
    "type_vocab_size", "add_cross_attention", "pre_norm", "adapter_reduction_factor", "adapter_layer_norm",
    "adapter_reuse_layer_norm", "ln_before_adapter", "languages", "default_language",
};
constexpr std::string_view kTrOcrKeys[] = {
    "d_model", "decoder_layers", "decoder_attention_heads", "decoder_ffn_dim", "use_learned_position_embeddings",
    "layernorm_embedding", "cross_attention_hidden_size", "scale_embedding", "decoder_start_token_id",
    "decoder_layerdrop", "activation_dropout",
};
constexpr std::string_view kJetMoeKeys[] = {"kv_channels", "num_local_experts", "num_experts_per_tok", "aux_loss_coef"};
constexpr std::string_view kCtrlKeys[] = {"n_embd", "n_layer", "n_head", "dff"};
constexpr std::string_view kXlmKeys[] = {"emb_dim", "n_layers", "n_heads", "n_langs", "use_lang_emb", "is_encoder", "asm"};
constexpr std::string_view kBertKeys[] = {"type_vocab_size", "add_cross_attention"};
constexpr std::string_view kErnieKeys[] = {"type_vocab_size", "add_cross_attention", "use_task_id"};
constexpr std::string_view kBigBirdKeys[] = {"type_vocab_size", "add_cross_attention", "use_bias"};
constexpr std::string_view kDbrxKeys[] = {"d_model", "n_heads", "n_layers", "max_seq_len", "attn_config", "ffn_config"};
constexpr std::string_view kFusedMoeKeys[] = {
    "num_local_experts", "num_experts_per_tok", "intermediate_size_mlp", "interleave_moe_layer_step", "moe_layers",
    "use_qk_norm", "shared_intermediate_size",
};
// clang-format on
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
    ArchName{HfArch::dense, "hyperclovax", "HyperCLOVAXForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .placement = NormPlacement::sandwich,
              .names = HfNames::hyperclovax, .post_norm_key = "use_post_norm"}},
    // Apertus: bias-free up / down projections whatever mlp_bias says.
    ArchName{HfArch::dense, "apertus", "ApertusForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .mlp = MlpKind::plain, .names = HfNames::apertus, .activation = "xielu"}},
    // Apertus 1.5's text model: Apertus with a larger vocabulary and an output layer that may be pruned.
    ArchName{HfArch::dense, "apertus1p5_text", "Apertus1p5TextForCausalLM", {}, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .mlp = MlpKind::plain, .names = HfNames::apertus, .activation = "xielu", .output_rows_key = "output_vocab_size"}},
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
    // MiniMax-Text-01: Mixtral's MoE under attention and lightning attention, layer by layer.
    ArchName{HfArch::mixtral, "minimax", "MiniMaxForCausalLM", kMiniMaxKeys, true, {}},
    ArchName{HfArch::mixtral, "minimax_m2", "MiniMaxM2ForCausalLM", kMixtralKeys, true,
             {.qk_norm = true, .names = HfNames::minimax_m2}},
    ArchName{HfArch::mixtral, "hunyuan_v1_moe", "HunYuanMoEV1ForCausalLM", kHunyuanMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .names = HfNames::hunyuan_moe}},
    ArchName{HfArch::mixtral, "phimoe", "PhimoeForCausalLM", kPhimoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .norm = NormKind::layernorm}},
    ArchName{HfArch::deepseek, "deepseek_v3", "DeepseekV3ForCausalLM", kDeepseekKeys, false, {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "deepseek_v2", "DeepseekV2ForCausalLM", kDeepseekKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
    ArchName{HfArch::deepseek, "glm4_moe", "Glm4MoeForCausalLM", kGlm4MoeKeys, true,
             {.qkv_bias_key = kAttn, .qk_norm_shape = QkNormShape::head_dim}},
    // dots.llm1: Qwen3's attention, DeepSeek-V3's MoE.
    ArchName{HfArch::deepseek, "dots1", "Dots1ForCausalLM", kDots1Keys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim}},
    ArchName{HfArch::deepseek, "sarvam_mla", "DeepseekV3ForCausalLM", kDeepseekKeys, false, {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "sarvam_moe", "SarvamMoEForCausalLM", kSarvamMoeKeys, true,
             {.qkv_bias_key = kAttn, .qk_norm_shape = QkNormShape::head_dim, .fused_qkv = true, .names = HfNames::sarvam_moe}},
    ArchName{HfArch::deepseek, "exaone_moe", "ExaoneMoeForCausalLM", kExaoneMoeKeys, true,
             {.qk_norm = true, .qk_norm_shape = QkNormShape::head_dim, .names = HfNames::exaone_moe}},
    ArchName{HfArch::deepseek, "cohere2_moe", "Cohere2MoeForCausalLM", kCohere2MoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true, .placement = NormPlacement::parallel}},
    ArchName{HfArch::deepseek, "ernie4_5_moe", "Ernie4_5_MoeForCausalLM", kErnieMoeKeys, true,
             {.qkv_bias_key = "use_bias", .o_bias_key = "use_bias", .mlp_bias_key = "use_bias", .tie = true,
              .names = HfNames::ernie4_5_moe}},
    ArchName{HfArch::deepseek, "hy_v3", "HYV3ForCausalLM", kHyV3Keys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .qk_norm = true,
              .qk_norm_shape = QkNormShape::head_dim, .names = HfNames::hy_v3}},
    ArchName{HfArch::deepseek, "afmoe", "AfmoeForCausalLM", kAfmoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .placement = NormPlacement::sandwich, .qk_norm = true,
              .qk_norm_shape = QkNormShape::head_dim, .names = HfNames::afmoe, .gate_proj = true}},
    ArchName{HfArch::deepseek, "solar_open", "SolarOpenForCausalLM", kSolarOpenKeys, true, {.qkv_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "glm4_moe_lite", "Glm4MoeLiteForCausalLM", kGlm4MoeLiteKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "axk1", "AXK1ForCausalLM", kGlm4MoeLiteKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    // DeepSeek-V3.2 and GLM-5: A.X-K1's latent attention with a sparse-attention indexer.
    ArchName{HfArch::deepseek, "deepseek_v32", "DeepseekV32ForCausalLM", kDeepseekV32Keys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "glm_moe_dsa", "GlmMoeDsaForCausalLM", kGlmMoeDsaKeys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn}},
    ArchName{HfArch::deepseek, "youtu", "YoutuForCausalLM", kMiniCpm3Keys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .tie = true}},
    ArchName{HfArch::deepseek, "minicpm3", "MiniCPM3ForCausalLM", kMiniCpm3Keys, false,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias, .tie = true}},
    ArchName{HfArch::sparse_moe, "qwen2_moe", "Qwen2MoeForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = "qkv_bias", .qkv_bias = true, .names = HfNames::qwen2_moe, .experts = 60, .per_token = 4,
              .expert_width = 1408, .shared_width = 5632}},
    // Kolibri-1: every layer MoE with DeepSeek's router bias and an ungated shared MLP, EXAONE 4's
    // attention, GLM-4's four norms. Flint: Qwen3-MoE's layers with attention sinks and an
    // ungated shared expert.
    ArchName{HfArch::sparse_moe, "kolibri1", "Kolibri1ForCausalLM", kKolibriKeys, true,
             {.placement = NormPlacement::sandwich, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .names = HfNames::kolibri1, .experts = 384, .per_token = 6, .expert_width = 512, .shared_width = 512,
              .ungated_shared = true, .router_bias = true}},
    ArchName{HfArch::sparse_moe, "flint", "FlintForCausalLM", kSparseMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .names = HfNames::flint, .experts = 256, .per_token = 6, .expert_width = 512, .shared_width = 1024,
              .sinks = true, .ungated_shared = true}},
    ArchName{HfArch::sparse_moe, "qwen3_moe", "Qwen3MoeForCausalLM", kQwen3MoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim, .names = HfNames::qwen2_moe,
              .experts = 128, .per_token = 8, .expert_width = 768}},
    ArchName{HfArch::sparse_moe, "mellum", "MellumForCausalLM", kMellumKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .qk_norm_shape = QkNormShape::head_dim,
              .names = HfNames::qwen2_moe, .experts = 64, .per_token = 8, .expert_width = 896}},
    ArchName{HfArch::sparse_moe, "olmoe", "OlmoeForCausalLM", kOlmoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qk_norm = true, .names = HfNames::qwen2_moe, .experts = 64, .per_token = 8}},
    ArchName{HfArch::sparse_moe, "flex_olmo", "FlexOlmoForCausalLM", kOlmoeKeys, true,
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
    ArchName{HfArch::own_keys, "biogpt", "BioGptForCausalLM", {}, false, {}},
    ArchName{HfArch::own_keys, "ctrl", "CTRLLMHeadModel", kCtrlKeys, false, {}},
    ArchName{HfArch::own_keys, "xlm", "XLMWithLMHeadModel", kXlmKeys, false, {}},
    ArchName{HfArch::own_keys, "bert", "BertLMHeadModel", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "bert-generation", "BertGenerationDecoder", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "megatron-bert", "MegatronBertForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "ernie", "ErnieForCausalLM", kErnieKeys, false, {}},
    ArchName{HfArch::own_keys, "roberta", "RobertaForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "data2vec-text", "Data2VecTextForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "roberta-prelayernorm", "RobertaPreLayerNormForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "xlm-roberta-xl", "XLMRobertaXLForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "xlm-roberta", "XLMRobertaForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "camembert", "CamembertForCausalLM", kBertKeys, false, {}},
    ArchName{HfArch::own_keys, "big_bird", "BigBirdForCausalLM", kBigBirdKeys, false, {}},
    ArchName{HfArch::own_keys, "roformer", "RoFormerForCausalLM", kRoFormerKeys, false, {}},
    ArchName{HfArch::own_keys, "roc_bert", "RoCBertForCausalLM", kRoCBertKeys, false, {}},
    ArchName{HfArch::own_keys, "xmod", "XmodForCausalLM", kXmodKeys, false, {}},
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
    ArchName{HfArch::own_keys, "qwen3_5_text", "Qwen3_5ForCausalLM", kQwen35Keys, false, {}},
    ArchName{HfArch::own_keys, "qwen3_5_moe_text", "Qwen3_5MoeForCausalLM", kQwen35MoeKeys, false, {}},
    ArchName{HfArch::own_keys, "lfm2", "Lfm2ForCausalLM", kLfm2Keys, false, {}},
    ArchName{HfArch::own_keys, "lfm2_moe", "Lfm2MoeForCausalLM", kLfm2MoeKeys, false, {}},
    ArchName{HfArch::own_keys, "zamba", "ZambaForCausalLM", kZambaKeys, false, {}},
    ArchName{HfArch::own_keys, "zamba2", "Zamba2ForCausalLM", kZamba2Keys, false, {}},
    ArchName{HfArch::own_keys, "gemma3n_text", "Gemma3nForCausalLM", kGemma3nKeys, true, {}},
    ArchName{HfArch::own_keys, "doge", "DogeForCausalLM", kDogeKeys, true, {}},
    ArchName{HfArch::own_keys, "trocr", "TrOCRForCausalLM", kTrOcrKeys, false, {}},
    ArchName{HfArch::own_keys, "jetmoe", "JetMoeForCausalLM", kJetMoeKeys, false, {}},
    ArchName{HfArch::fused_moe, "gpt_oss", "GptOssForCausalLM", kFusedMoeKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .qkv_bias = true, .o_bias = true}},
    ArchName{HfArch::fused_moe, "aria_text", "AriaTextForCausalLM", kAriaKeys, true,
             {.qkv_bias_key = kAttn, .o_bias_key = kAttn, .mlp_bias_key = kMlpBias}},
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
    "z_loss_coefficient", "mixer_rms_eps", "layer_rope_theta", "position_embedding_type", "index_topk",
    "attention_type", "block_size", "num_random_blocks", "rescale_embeddings",
};
// clang-format on

}  // namespace

std::span<const ArchName> arch_table() {
  return kArchNames;
}

std::span<const std::string_view> common_keys() {
  return kCommonKeys;
}

std::span<const std::string_view> ignored_keys() {
  return kIgnoredKeys;
}

}  // namespace ckpt::harness::hf
