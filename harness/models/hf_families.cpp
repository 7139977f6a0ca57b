// Mappers of the Hugging Face families that share little with Llama: the older GPT-style
// layouts, the state-space models and the MoE families with fused expert tensors.
#include "harness/models/hf_families.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "harness/models/hf_extra_tensors.hpp"
#include "harness/models/hf_hybrids.hpp"

namespace ckpt::harness::hf {
namespace {

using workloads::ModelSpec;
using workloads::NormKind;

// LayerNorm with bias, a plain two-matrix MLP and, unless the family says otherwise, biases on
// every linear layer: what GPT-2, GPT-J, BLOOM and OPT share.
ModelSpec gpt_style(const HfConfig& config, std::string_view hidden, std::string_view layers,
                    std::string_view heads) {
  ModelSpec spec;
  spec.hidden_size = config.required_size(hidden);
  spec.num_hidden_layers = config.required_size(layers);
  spec.num_attention_heads = config.required_size(heads);
  spec.vocab_size = config.required_size("vocab_size");
  spec.norm = NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.linear_bias = true;
  return spec;
}

// GPT2Config / GPTJConfig / CodeGenConfig / GPTBigCodeConfig / OpenAIGPTConfig: n_inner null
// means 4 × n_embd.
// GPT-2 stores its linears as Conv1D ([in, out]) with one fused c_attn and learned positions;
// GPT-BigCode the same as plain linears ([out, in]), its c_attn of one shared KV head under
// multi_query. GPT-J has a parallel block, bias-free attention, rotary positions and an untied
// lm_head with a bias; CodeGen the same with q/k/v fused into qkv_proj.
ModelSpec map_gpt2(const HfConfig& config, std::string_view model_type) {
  ModelSpec spec = gpt_style(config, "n_embd", "n_layer", "n_head");
  spec.intermediate_size = config.size_or("n_inner", 4 * spec.hidden_size);
  if (model_type == "gptj" || model_type == "codegen") {
    spec.hf_names = workloads::HfNames::gptj;
    spec.norm_placement = workloads::NormPlacement::parallel;
    spec.fused_qkv = model_type == "codegen";
    spec.linear_bias = false;
    spec.mlp_bias = true;
    spec.lm_head_bias = true;
    spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", false);
    return spec;
  }
  if (config.flag_or("add_cross_attention", false)) {
    config.at().fail(
        "add_cross_attention",
        "add_cross_attention = true adds cross-attention tensors ckptbench does not lay out; "
        "describe the model in a TOML model file instead");
  }
  spec.hf_names = workloads::HfNames::gpt2;
  spec.conv1d_weights = model_type != "gpt_bigcode";
  if (model_type == "openai-gpt") {  // GPT-1: post-norm layers of a 4h MLP, no final norm
    spec.hf_names = workloads::HfNames::openai_gpt;
    spec.intermediate_size = 4 * spec.hidden_size;
    spec.final_norm = false;
  }
  if (model_type == "gpt_bigcode" && config.flag_or("multi_query", true))
    spec.num_key_value_heads = 1;
  spec.fused_qkv = true;
  spec.position_embedding = workloads::PositionEmbedding::learned;
  spec.max_position_embeddings =
      config.size_or("n_positions", model_type == "openai-gpt" ? 512 : 1024);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  return spec;
}

// GPTNeoConfig: GPT-2's block as plain linears, bias-free q/k/v under attn.attention with a
// biased out_proj, learned positions, tied; intermediate_size null means 4h.
ModelSpec map_gpt_neo(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "hidden_size", "num_layers", "num_heads");
  spec.hf_names = workloads::HfNames::gpt_neo;
  spec.intermediate_size = config.size_or("intermediate_size", 4 * spec.hidden_size);
  spec.linear_bias = false;
  spec.o_bias = spec.mlp_bias = true;
  spec.position_embedding = workloads::PositionEmbedding::learned;
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 2048);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  return spec;
}

// XGLMConfig: OPT's layer (biases everywhere, fc1 / fc2 of ffn_dim) under model.layers, the
// sinusoidal positions not stored, tied.
ModelSpec map_xglm(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "d_model", "num_layers", "attention_heads");
  spec.hf_names = workloads::HfNames::xglm;
  spec.intermediate_size = config.size_or("ffn_dim", 4096);
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 2048);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  if (config.flag_or("add_cross_attention", false)) {
    config.at().fail("add_cross_attention",
                     "add_cross_attention = true adds cross-attention tensors ckptbench does not "
                     "lay out; describe the model in a TOML model file instead");
  }
  return spec;
}

// PersimmonConfig: biased LayerNorms and linears, fused query_key_value, a plain MLP
// (dense_h_to_4h / dense_4h_to_h) and, under qk_layernorm, LayerNorms [head_dim] on q and k.
ModelSpec map_persimmon(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "hidden_size", "num_hidden_layers", "num_attention_heads");
  spec.hf_names = workloads::HfNames::persimmon;
  spec.intermediate_size = config.size_or("intermediate_size", 16384);
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 16384);
  spec.fused_qkv = true;
  spec.qk_norm = config.flag_or("qk_layernorm", true);
  spec.qk_norm_shape = workloads::QkNormShape::head_dim;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", false);
  return spec;
}

// BioGptConfig: OPT's pre-norm layer (biases everywhere, fc1 / fc2) under biogpt., learned
// positions with OPT's two extra rows, a final LayerNorm, tied.
ModelSpec map_biogpt(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "hidden_size", "num_hidden_layers", "num_attention_heads");
  spec.hf_names = workloads::HfNames::biogpt;
  spec.intermediate_size = config.size_or("intermediate_size", 4096);
  spec.position_embedding = workloads::PositionEmbedding::learned;
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 1024);
  spec.position_offset = 2;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  return spec;
}

// CTRLConfig: pre-norm layers with biases everywhere, a ReLU MLP of dff, sinusoidal positions
// (not stored), tied with a bias on the output layer.
ModelSpec map_ctrl(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "n_embd", "n_layer", "n_head");
  spec.hf_names = workloads::HfNames::ctrl;
  spec.intermediate_size = config.size_or("dff", 8192);
  spec.lm_head_bias = true;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  return spec;
}

// XLMConfig: post-norm layers with biases everywhere and a 4h MLP, learned positions, one
// embedding row per language when there are several (n_langs, use_lang_emb), a LayerNorm after
// the embeddings, no final norm, tied with a bias on the output layer.
ModelSpec map_xlm(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "emb_dim", "n_layers", "n_heads");
  spec.hf_names = workloads::HfNames::xlm;
  spec.intermediate_size = 4 * spec.hidden_size;
  spec.position_embedding = workloads::PositionEmbedding::learned;
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 512);
  const std::int64_t languages = config.size_or("n_langs", 1);
  if (languages > 1 && config.flag_or("use_lang_emb", true)) spec.type_vocab_size = languages;
  spec.embedding_norm = true;
  spec.norm_placement = workloads::NormPlacement::post;
  spec.final_norm = false;
  spec.lm_head_bias = true;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  if (!config.flag_or("is_encoder", true)) {
    config.at().fail("is_encoder", "false adds cross-attention tensors ckptbench does not lay out");
  }
  if (config.flag_or("asm", false)) {
    config.at().fail("asm",
                     "true replaces the output layer by an adaptive softmax, which "
                     "ckptbench does not lay out");
  }
  return spec;
}

// BloomConfig: fused query_key_value, ALiBi, a LayerNorm after the word embedding, 4h MLP, tied.
// BLOOM-176B's config.json spells the width n_embed; BloomConfig also takes the common names.
ModelSpec map_bloom(const HfConfig& config) {
  const auto either = [&](std::string_view key, std::string_view other) {
    return config.has(key) || !config.has(other) ? key : other;
  };
  ModelSpec spec =
      gpt_style(config, either("hidden_size", "n_embed"), either("n_layer", "num_hidden_layers"),
                either("n_head", "num_attention_heads"));
  spec.hf_names = workloads::HfNames::bloom;
  spec.intermediate_size = 4 * spec.hidden_size;
  spec.fused_qkv = true;
  spec.position_embedding = workloads::PositionEmbedding::alibi;
  spec.embedding_norm = true;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  return spec;
}

// OPTConfig: learned positions with two extra rows (OPT's offset), fc1/fc2 of ffn_dim, tied.
// The keys that add or drop tensors beyond these are refused by name.
ModelSpec map_opt(const HfConfig& config) {
  ModelSpec spec = gpt_style(config, "hidden_size", "num_hidden_layers", "num_attention_heads");
  spec.hf_names = workloads::HfNames::opt;
  spec.intermediate_size = config.size_or("ffn_dim", 3072);
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 2048);
  spec.position_embedding = workloads::PositionEmbedding::learned;
  spec.position_offset = 2;
  spec.linear_bias = config.flag_or("enable_bias", true);
  if (!config.flag_or("layer_norm_elementwise_affine", true)) spec.norm = NormKind::none;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  const auto refuse = [&](std::string_view key, const std::string& what) {
    config.at().fail(
        key, what + " ckptbench does not lay out; describe the model in a TOML model file instead");
  };
  // OPT-350m's post-norm layers have no final norm, nor has a config that removes it.
  spec.final_norm = config.flag_or("do_layer_norm_before", true) &&
                    !config.flag_or("_remove_final_layer_norm", false);
  if (config.size_or("word_embed_proj_dim", spec.hidden_size) != spec.hidden_size) {
    refuse("word_embed_proj_dim",
           "a width other than hidden_size adds project_in / project_out, which");
  }
  return spec;
}

// MambaConfig (d_inner = intermediate_size, time_step_rank "auto" = ceil(h / 16), tied) and
// Mamba2Config (d_inner = expand × h, heads and groups, untied). There are no attention heads:
// num_attention_heads is 1 for Mamba (laid out at TP 1 only) and the SSM heads for Mamba-2.
ModelSpec map_mamba(const HfConfig& config, bool v2) {
  ModelSpec spec;
  spec.hf_names = workloads::HfNames::mamba;
  spec.mixer = v2 ? workloads::Mixer::mamba2 : workloads::Mixer::mamba;
  spec.hidden_size = config.required_size("hidden_size");
  spec.num_hidden_layers = config.required_size("num_hidden_layers");
  spec.vocab_size = config.required_size("vocab_size");
  const std::int64_t expand = config.size_or("expand", 2);
  spec.ssm_inner_size = v2 ? expand * spec.hidden_size
                           : config.size_or("intermediate_size", expand * spec.hidden_size);
  spec.intermediate_size = spec.ssm_inner_size;
  spec.ssm_state_size = config.size_or("state_size", v2 ? 128 : 16);
  spec.ssm_conv_kernel = config.size_or("conv_kernel", 4);
  spec.ssm_proj_bias = spec.ssm_out_bias = config.flag_or("use_bias", false);
  spec.ssm_conv_bias = config.flag_or("use_conv_bias", true);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", !v2);
  if (v2) {
    spec.ssm_heads = config.size_or("num_heads", 128);
    spec.ssm_groups = config.size_or("n_groups", 8);
    spec.num_attention_heads = spec.ssm_heads;
  } else {
    const bool auto_rank = config.text_if_string("time_step_rank") == "auto";
    spec.ssm_dt_rank = auto_rank ? (spec.hidden_size + 15) / 16
                                 : config.size_or("time_step_rank", (spec.hidden_size + 15) / 16);
    spec.num_attention_heads = 1;
  }
  spec.num_key_value_heads = spec.num_attention_heads;
  return spec;
}

// BertConfig and the RoBERTa family: BERT's post-norm encoder layer used as a decoder (biases
// everywhere, learned positions, token-type embeddings, a LayerNorm after the embeddings, no
// final norm) and a prediction head of a dense, a LayerNorm and the tied output with its bias.
// BertGeneration has no token types and no head transform; XLM-R and CamemBERT are RoBERTa under
// its names; BigBird is BERT with its base model's pooler. The base model's attribute name is
// the class's (bert, roberta, ...).
ModelSpec map_bert(const HfConfig& config, std::string_view model_type) {
  ModelSpec spec = gpt_style(config, "hidden_size", "num_hidden_layers", "num_attention_heads");
  using workloads::HfNames;
  const bool generation = model_type == "bert-generation";
  // BertGeneration's head is RoBERTa's lm_head without the transform.
  spec.hf_names = model_type == "bert" ? HfNames::bert : HfNames::roberta;
  spec.hf_prefix = model_type == "bert" || generation ? "bert" : "roberta";
  // The variants with prefixes and norms of their own.
  struct Variant {
    std::string_view type, prefix;
    HfNames names;
  };
  static constexpr Variant kVariants[] = {
      {"megatron-bert", "bert", HfNames::megatron_bert},
      {"ernie", "ernie", HfNames::bert},
      {"data2vec-text", "data2vec_text", HfNames::roberta},
      {"roberta-prelayernorm", "roberta_prelayernorm", HfNames::roberta_prelayernorm},
      {"xlm-roberta-xl", "roberta", HfNames::xlm_roberta_xl},
      {"big_bird", "bert", HfNames::bert},
      {"roformer", "roformer", HfNames::bert},
      {"roc_bert", "roc_bert", HfNames::bert},
      {"xmod", "roberta", HfNames::roberta},
  };
  for (const Variant& v : kVariants) {
    if (v.type != model_type) continue;
    spec.hf_names = v.names;
    spec.hf_prefix = std::string(v.prefix);
  }
  // Pre-norm variants have a final norm; Megatron-BERT and XLM-R XL no norm after the embeddings.
  const bool pre_norm = spec.hf_names == HfNames::megatron_bert ||
                        spec.hf_names == HfNames::roberta_prelayernorm ||
                        spec.hf_names == HfNames::xlm_roberta_xl;
  spec.intermediate_size = config.size_or("intermediate_size", generation ? 4096 : 3072);
  spec.position_embedding = workloads::PositionEmbedding::learned;
  spec.max_position_embeddings =
      config.size_or("max_position_embeddings", model_type == "big_bird" ? 4096 : 512);
  spec.type_vocab_size = generation ? 0 : config.size_or("type_vocab_size", 2);
  spec.embedding_norm = !pre_norm || spec.hf_names == HfNames::roberta_prelayernorm;
  spec.norm_placement = pre_norm ? workloads::NormPlacement::pre : workloads::NormPlacement::post;
  spec.final_norm = pre_norm;
  spec.lm_head_transform = !generation;
  spec.lm_head_bias = true;
  // BigBird keeps its base model's pooler, and use_bias reaches q/k/v alone.
  if (model_type == "big_bird") {
    spec.pooler = true;
    spec.linear_bias = false;
    spec.qkv_bias = config.flag_or("use_bias", true);
    spec.o_bias = spec.mlp_bias = true;
  }
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  if (config.flag_or("add_cross_attention", false)) {
    config.at().fail("add_cross_attention",
                     "add_cross_attention = true adds cross-attention tensors ckptbench does not "
                     "lay out; describe the model in a TOML model file instead");
  }
  if (model_type == "ernie" && config.flag_or("use_task_id", false)) {
    config.at().fail("use_task_id",
                     "use_task_id = true adds task-type embeddings ckptbench does not lay out");
  }
  add_bert_extras(spec, config, model_type);
  return spec;
}

}  // namespace

// DbrxConfig: sizes in d_model / n_heads / n_layers and two nested objects: attn_config
// (kv_n_heads) and ffn_config (ffn_hidden_size, moe_num_experts, moe_top_k). Fused Wqkv, bias-free
// LayerNorms (one weight each), every layer MoE with w1 / v1 / w2 of [E·f, h], untied.
ModelSpec map_dbrx(const HfConfig& config) {
  ModelSpec spec;
  spec.hf_names = workloads::HfNames::dbrx;
  spec.hidden_size = config.size_or("d_model", 2048);
  spec.num_hidden_layers = config.size_or("n_layers", 24);
  spec.num_attention_heads = config.size_or("n_heads", 16);
  spec.vocab_size = config.size_or("vocab_size", 32000);
  spec.max_position_embeddings = config.size_or("max_seq_len", 2048);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", false);
  const HfConfig attn = config.sub("attn_config", {"kv_n_heads"});
  spec.num_key_value_heads = attn.size_or("kv_n_heads", 1);
  spec.fused_qkv = true;
  const HfConfig ffn =
      config.sub("ffn_config", {"ffn_hidden_size", "moe_num_experts", "moe_top_k"});
  spec.intermediate_size = ffn.size_or("ffn_hidden_size", 3584);
  spec.num_local_experts = ffn.size_or("moe_num_experts", 4);
  spec.num_experts_per_tok = ffn.size_or("moe_top_k", 1);
  spec.expert_storage = workloads::ExpertStorage::fused_rows;
  return spec;
}

bool is_bert_family(std::string_view model_type) {
  for (const std::string_view type :
       {"bert", "bert-generation", "megatron-bert", "ernie", "roberta", "data2vec-text",
        "roberta-prelayernorm", "xlm-roberta-xl", "xlm-roberta", "camembert", "big_bird",
        "roformer", "roc_bert", "xmod"}) {
    if (model_type == type) return true;
  }
  return false;
}

ModelSpec map_own_keys_family(std::string_view model_type, const HfConfig& config) {
  if (is_hybrid_family(model_type)) return map_hybrid_family(model_type, config);
  if (model_type == "dbrx") return map_dbrx(config);
  if (model_type == "gpt2" || model_type == "gptj" || model_type == "codegen" ||
      model_type == "gpt_bigcode" || model_type == "openai-gpt")
    return map_gpt2(config, model_type);
  if (model_type == "bloom") return map_bloom(config);
  if (model_type == "gpt_neo") return map_gpt_neo(config);
  if (model_type == "xglm") return map_xglm(config);
  if (model_type == "persimmon") return map_persimmon(config);
  if (model_type == "opt") return map_opt(config);
  if (model_type == "biogpt") return map_biogpt(config);
  if (model_type == "ctrl") return map_ctrl(config);
  if (model_type == "xlm") return map_xlm(config);
  if (model_type == "gemma3n_text") return map_gemma3n(config);
  if (model_type == "doge") return map_doge(config);
  if (model_type == "trocr") return map_trocr(config);
  if (model_type == "jetmoe") return map_jetmoe(config);
  if (is_bert_family(model_type)) return map_bert(config, model_type);
  return map_mamba(config, model_type == "mamba2");
}

std::string own_keys_family_key(std::string_view model_type, const std::string& spec_key) {
  struct Alias {
    std::string_view types, spec_key, hf_key;
  };
  // clang-format off
  static constexpr Alias kAliases[] = {
      {"gpt2 gptj codegen gpt_bigcode openai-gpt ctrl", "hidden_size", "n_embd"},
      {"gpt2 gptj codegen gpt_bigcode openai-gpt bloom ctrl", "num_hidden_layers", "n_layer"},
      {"gpt2 gptj codegen gpt_bigcode openai-gpt bloom ctrl", "num_attention_heads", "n_head"},
      {"ctrl", "intermediate_size", "dff"}, {"xlm", "hidden_size", "emb_dim"},
      {"xlm", "num_hidden_layers", "n_layers"}, {"xlm", "num_attention_heads", "n_heads"},
      {"gpt2 gptj codegen gpt_bigcode", "intermediate_size", "n_inner"},
      {"gpt2 gptj codegen gpt_bigcode openai-gpt", "max_position_embeddings", "n_positions"}, {"opt xglm", "intermediate_size", "ffn_dim"},
      {"gpt_neo xglm", "num_hidden_layers", "num_layers"}, {"gpt_neo", "num_attention_heads", "num_heads"},
      {"xglm", "num_attention_heads", "attention_heads"}, {"xglm", "hidden_size", "d_model"},
      {"mamba2", "num_attention_heads", "num_heads"}, {"dbrx", "hidden_size", "d_model"},
      {"dbrx", "num_hidden_layers", "n_layers"}, {"dbrx", "num_attention_heads", "n_heads"},
      {"dbrx", "num_key_value_heads", "attn_config"}, {"dbrx", "intermediate_size", "ffn_config"},
      {"dbrx", "num_local_experts", "ffn_config"}, {"dbrx", "num_experts_per_tok", "ffn_config"},
      {"jamba bamba falcon_h1 granitemoehybrid zamba zamba2", "state_size", "mamba_d_state"},
      {"jamba bamba falcon_h1 granitemoehybrid zamba zamba2", "conv_kernel", "mamba_d_conv"},
      {"zamba2", "num_heads", "n_mamba_heads"}, {"gemma3n_text", "kv_shared_layers", "num_kv_shared_layers"},
      {"jetmoe", "head_dim", "kv_channels"}, {"zamba2", "n_groups", "mamba_ngroups"},
      {"bamba falcon_h1 granitemoehybrid", "num_heads", "mamba_n_heads"},
      {"bamba falcon_h1 granitemoehybrid", "n_groups", "mamba_n_groups"},
      {"granitemoehybrid qwen3_next qwen3_5_text qwen3_5_moe_text", "attention_layers", "layer_types"},
      {"nemotron_h", "num_heads", "mamba_num_heads"}, {"nemotron_h", "state_size", "ssm_state_size"},
      {"nemotron_h", "num_hidden_layers", "layers_block_type"}, {"nemotron_h", "num_local_experts", "n_routed_experts"},
      {"qwen3_next qwen3_5_text qwen3_5_moe_text", "num_heads", "linear_num_value_heads"}, {"qwen3_next qwen3_5_text qwen3_5_moe_text", "n_groups", "linear_num_key_heads"},
      {"qwen3_next", "state_size", "linear_key_head_dim"}, {"qwen3_next", "conv_kernel", "linear_conv_kernel_dim"},
      {"qwen3_next", "num_local_experts", "num_experts"}, {"qwen3_next", "moe_layers", "mlp_only_layers"},
      {"jamba zamba", "time_step_rank", "mamba_dt_rank"}, {"zamba", "num_heads", "n_mamba_heads"},
      {"zamba", "head_dim", "attention_head_dim"},
      {"jamba", "attention_layers", "attn_layer_offset"},
      {"jamba", "moe_layers", "expert_layer_offset"}, {"jamba", "num_local_experts", "num_experts"},
      {"bamba", "attention_layers", "attn_layer_indices"}, {"falcon_h1", "intermediate_size", "mamba_d_ssm"},
  };
  // clang-format on
  for (const Alias& alias : kAliases) {
    const std::string types = " " + std::string(alias.types) + " ";
    if (alias.spec_key == spec_key &&
        types.find(" " + std::string(model_type) + " ") != std::string::npos) {
      return std::string(alias.hf_key);
    }
  }
  return spec_key;
}

namespace {

// AriaTextConfig: every layer MoE, experts of intermediate_size stored as gpt-oss's are (under
// the names fc1 and fc2), a router and moe_num_shared_experts shared experts fused into one MLP;
// mlp_bias reaches that MLP only.
void map_aria(ModelSpec& spec, const HfConfig& config) {
  spec.hf_names = workloads::HfNames::aria;
  spec.expert_storage = workloads::ExpertStorage::fused_gate_up;
  spec.num_local_experts = config.size_or("moe_num_experts", 8);
  spec.num_experts_per_tok = config.size_or("moe_topk", 2);
  spec.moe_intermediate_size = spec.intermediate_size;
  spec.n_shared_experts = config.size_or("moe_num_shared_experts", 2);
}

}  // namespace

// GptOssConfig: every layer MoE, q/k/v/o biases by default, attention sinks, a router bias,
// biases on the fused experts. Llama4TextConfig: MoE layers from moe_layers (or every
// interleave_moe_layer_step-th), experts and the shared expert of intermediate_size, dense layers
// of intermediate_size_mlp; its q/k norm has no weights. GraniteMoeConfig: every layer MoE.
void map_fused_moe(ModelSpec& spec, const HfConfig& config, std::string_view model_type) {
  const bool oss = model_type == "gpt_oss";
  const bool llama4 = model_type == "llama4_text";
  if (model_type == "aria_text") {
    map_aria(spec, config);
    return;
  }
  spec.num_local_experts = config.size_or("num_local_experts", oss ? 128 : llama4 ? 16 : 8);
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", oss ? 4 : llama4 ? 1 : 2);
  if (oss) {
    spec.hf_names = workloads::HfNames::gpt_oss;
    spec.expert_storage = workloads::ExpertStorage::fused_gate_up;
    spec.attention_sinks = spec.moe_router_bias = spec.expert_bias = true;
    return;
  }
  if (!llama4) {
    spec.hf_names = model_type == "granitemoe_swa" ? workloads::HfNames::granitemoe_swa
                                                   : workloads::HfNames::granitemoe;
    spec.expert_storage = workloads::ExpertStorage::fused_in_out;
    // GraniteMoeShared and GraniteMoeSWA: a shared MLP of this width (0: none) beside the experts.
    if (model_type == "granitemoeshared" || model_type == "granitemoe_swa")
      spec.shared_expert_intermediate_size = config.size_or("shared_intermediate_size", 0);
    return;
  }
  spec.hf_names = workloads::HfNames::llama4;
  spec.expert_storage = workloads::ExpertStorage::fused_gate_up;
  spec.moe_intermediate_size = spec.intermediate_size;
  spec.shared_expert_intermediate_size = spec.intermediate_size;
  spec.intermediate_size = config.size_or("intermediate_size_mlp", 16384);
  std::vector<std::int64_t> moe = config.sizes("moe_layers");
  if (moe.empty()) {
    const std::int64_t step = config.size_or("interleave_moe_layer_step", 1);
    for (std::int64_t layer = step - 1; step > 0 && layer < spec.num_hidden_layers; layer += step)
      moe.push_back(layer);
  }
  // ModelSpec's dense layers lead: the MoE layers must be the last ones, consecutive.
  const std::int64_t first = spec.num_hidden_layers - static_cast<std::int64_t>(moe.size());
  for (std::size_t i = 0; i < moe.size(); ++i) {
    if (moe[i] != first + static_cast<std::int64_t>(i)) {
      config.at().fail(
          config.has("moe_layers") ? "moe_layers" : "interleave_moe_layer_step",
          "only MoE layers that follow all dense layers ([k, ..., num_hidden_layers - 1]) can be "
          "laid out; describe the model in a TOML model file instead");
    }
  }
  spec.first_k_dense_replace = first;
}

}  // namespace ckpt::harness::hf
