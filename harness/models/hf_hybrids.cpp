// Mappers of the Hugging Face hybrids: layers that mix attention with Mamba or Mamba-2 mixers
// or with the gated delta rule, each family with its own config keys and layer order.
#include "harness/models/hf_hybrids.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::harness::hf {
namespace {

using workloads::HfNames;
using workloads::LayerKind;
using workloads::Mixer;
using workloads::ModelSpec;

// a × b for a size read from `key`: refused, naming the key, where it overflows.
std::int64_t times(const HfConfig& config, std::string_view key, std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    config.at().fail(key, std::to_string(a) + " is too large: a size derived from it overflows");
  return product;
}

// The block of one layer, as transformers' layer type names say (the old spellings "mamba" and
// "attention" included, as its legacy remap reads them).
enum class Block { attention, linear, mlp, moe };

std::optional<Block> block_named(std::string_view name) {
  if (name == "full_attention" || name == "attention") return Block::attention;
  if (name == "linear_attention" || name == "mamba") return Block::linear;
  if (name == "mlp") return Block::mlp;
  if (name == "moe") return Block::moe;
  return std::nullopt;
}

// The layer types listed under `key`, each one the family lays out.
std::vector<Block> read_blocks(const HfConfig& config, std::string_view key,
                               std::initializer_list<Block> allowed) {
  std::vector<Block> out;
  for (const std::string& name : config.texts(key)) {
    const std::optional<Block> block = block_named(name);
    if (!block || std::find(allowed.begin(), allowed.end(), *block) == allowed.end()) {
      config.at().fail(key, "layer type \"" + name +
                                "\" is not one this architecture has; describe the model in a "
                                "TOML model file instead");
    }
    out.push_back(*block);
  }
  return out;
}

// A per-layer list must name every layer, as transformers indexes it by layer.
void require_every_layer(const HfConfig& config, std::string_view key,
                         const std::vector<Block>& blocks, std::int64_t layers) {
  if (static_cast<std::int64_t>(blocks.size()) == layers) return;
  config.at().fail(key, "lists " + std::to_string(blocks.size()) +
                            " layer types for num_hidden_layers = " + std::to_string(layers));
}

std::vector<std::int64_t> layers_of(const std::vector<Block>& blocks, Block which) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i] == which) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

// The layers `period` apart from `offset` on (Jamba's attention and expert layers).
std::vector<std::int64_t> every_nth(std::int64_t layers, std::int64_t period, std::int64_t offset) {
  std::vector<std::int64_t> out;
  for (std::int64_t layer = offset; period > 0 && layer < layers; layer += period)
    out.push_back(layer);
  return out;
}

// Llama's sizes under Llama's keys, in a hybrid stack; untied unless the config says otherwise.
// A stack of MoE layers only may have no intermediate_size.
ModelSpec llama_sizes(const HfConfig& config, bool dense_width = true) {
  ModelSpec spec;
  spec.hybrid = true;
  spec.hidden_size = config.required_size("hidden_size");
  spec.intermediate_size = dense_width ? config.required_size("intermediate_size")
                                       : config.size_or("intermediate_size", 0);
  spec.num_hidden_layers = config.required_size("num_hidden_layers");
  spec.num_attention_heads = config.required_size("num_attention_heads");
  spec.num_key_value_heads = config.size_or("num_key_value_heads", spec.num_attention_heads);
  spec.vocab_size = config.required_size("vocab_size");
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 0);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", false);
  return spec;
}

// The mamba_* keys of Jamba, Bamba, Falcon-H1 and GraniteMoeHybrid.
void mamba_keys(ModelSpec& spec, const HfConfig& config) {
  spec.ssm_conv_kernel = config.size_or("mamba_d_conv", 4);
  spec.ssm_conv_bias = config.flag_or("mamba_conv_bias", true);
  spec.ssm_proj_bias = config.flag_or("mamba_proj_bias", false);
  spec.ssm_out_bias = spec.ssm_proj_bias;
  spec.ssm_inner_size =
      times(config, "mamba_expand", config.size_or("mamba_expand", 2), spec.hidden_size);
}

// Jamba: Mamba mixers with RMSNorms over dt, B and C, attention every attn_layer_period-th layer
// from attn_layer_offset, MoE every expert_layer_period-th from expert_layer_offset (a layer of
// one expert is a plain MLP), bias-free attention.
void map_jamba(ModelSpec& spec, const HfConfig& config) {
  spec.mixer = Mixer::mamba;
  spec.ssm_inner_norms = true;
  spec.ssm_state_size = config.size_or("mamba_d_state", 16);
  const bool auto_rank = config.text_if_string("mamba_dt_rank") == "auto";
  spec.ssm_dt_rank = auto_rank ? (spec.hidden_size + 15) / 16
                               : config.size_or("mamba_dt_rank", (spec.hidden_size + 15) / 16);
  const std::int64_t layers = spec.num_hidden_layers;
  spec.attention_layers = every_nth(layers, config.size_or("attn_layer_period", 8),
                                    config.size_or("attn_layer_offset", 4));
  const std::int64_t experts =
      config.size("num_local_experts").value_or(config.size_or("num_experts", 16));
  if (experts > 1) {
    spec.num_local_experts = experts;
    spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 2);
    spec.moe_layers = every_nth(layers, config.size_or("expert_layer_period", 2),
                                config.size_or("expert_layer_offset", 1));
  }
}

// Mamba-2 mixers under the mamba_* keys, d_inner = mamba_expand × h, the gated norm always.
void mamba2_keys(ModelSpec& spec, const HfConfig& config) {
  spec.mixer = Mixer::mamba2;
  spec.ssm_state_size = config.size_or("mamba_d_state", 256);
  spec.ssm_heads = config.size_or("mamba_n_heads", 128);
  spec.ssm_groups = config.size_or("mamba_n_groups", 1);
}

// Bamba: the Mamba-2 mixer in every layer but the attn_layer_indices ones. Falcon-H1: both side
// by side in every layer, d_inner = mamba_d_ssm (null: expand × h), the norm under
// mamba_rms_norm and out_proj's bias under projectors_bias.
void map_bamba_or_falcon_h1(ModelSpec& spec, const HfConfig& config, bool falcon_h1) {
  mamba2_keys(spec, config);
  spec.head_dim = config.size_or("head_dim", 0);
  spec.qkv_bias = spec.o_bias = config.flag_or("attention_bias", false);
  spec.mlp_bias = config.flag_or("mlp_bias", false);
  if (!falcon_h1) {
    spec.attention_layers = config.sizes("attn_layer_indices");
    return;
  }
  spec.ssm_beside_attention = true;
  if (!config.is_null("mamba_d_ssm")) spec.ssm_inner_size = config.size_or("mamba_d_ssm", 1024);
  spec.ssm_gated_norm = config.flag_or("mamba_rms_norm", false);
  spec.ssm_out_bias = config.flag_or("projectors_bias", false);
}

// GraniteMoeHybridConfig: Bamba's Mamba-2 mixer in the "mamba" layers and attention in the
// "attention" ones (layer_types; every layer Mamba without it). Every layer's MLP is the shared
// MLP (shared_mlp.input_linear / output_linear of shared_intermediate_size), beside GraniteMoE's
// fused experts unless num_local_experts is 0.
void map_granitemoehybrid(ModelSpec& spec, const HfConfig& config) {
  spec.hf_names = HfNames::granitemoe;
  spec.fused_gate_up = true;
  spec.head_dim = config.size_or("head_dim", 0);
  spec.qkv_bias = spec.o_bias = config.flag_or("attention_bias", false);
  mamba2_keys(spec, config);
  const std::string_view key = config.has("layer_types") ? "layer_types" : "layers_block_type";
  std::vector<Block> blocks = read_blocks(config, key, {Block::attention, Block::linear});
  if (blocks.empty())
    blocks.assign(static_cast<std::size_t>(spec.num_hidden_layers), Block::linear);
  require_every_layer(config, key, blocks, spec.num_hidden_layers);
  spec.attention_layers = layers_of(blocks, Block::attention);
  const std::int64_t shared = config.size_or("shared_intermediate_size", 1024);
  if (shared == 0) {
    config.at().fail("shared_intermediate_size",
                     "0 gives every layer an empty shared MLP, which ckptbench does not lay out");
  }
  spec.num_local_experts = config.size_or("num_local_experts", 8);
  if (spec.num_local_experts == 0) {
    spec.intermediate_size = shared;
    return;
  }
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 2);
  spec.expert_storage = workloads::ExpertStorage::fused_in_out;
  spec.shared_expert_intermediate_size = shared;
}

// Qwen3-Next's attention layers: layer_types, else every full_attention_interval-th layer.
void qwen3_next_attention_layers(ModelSpec& spec, const HfConfig& config) {
  const std::int64_t layers = spec.num_hidden_layers;
  std::vector<Block> blocks = read_blocks(config, "layer_types", {Block::attention, Block::linear});
  if (blocks.empty()) {
    const std::int64_t interval = config.size_or("full_attention_interval", 4);
    if (interval == 0) config.at().fail("full_attention_interval", "must be positive");
    for (std::int64_t layer = 0; layer < layers; ++layer)
      blocks.push_back((layer + 1) % interval == 0 ? Block::attention : Block::linear);
  }
  require_every_layer(config, "layer_types", blocks, layers);
  spec.attention_layers = layers_of(blocks, Block::attention);
}

// Qwen3-Next's MoE layers: all but those in mlp_only_layers or where
// (layer + 1) % decoder_sparse_step != 0.
void qwen3_next_moe_layers(ModelSpec& spec, const HfConfig& config) {
  const std::int64_t layers = spec.num_hidden_layers;
  if (spec.num_local_experts == 0) return;
  const std::int64_t step = config.size_or("decoder_sparse_step", 1);
  if (step == 0) config.at().fail("decoder_sparse_step", "must be positive");
  const std::vector<std::int64_t> dense = config.sizes("mlp_only_layers");
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    if (std::find(dense.begin(), dense.end(), layer) == dense.end() && (layer + 1) % step == 0)
      spec.moe_layers.push_back(layer);
  }
  if (spec.moe_layers.empty()) spec.num_local_experts = 0;
}

// Qwen3NextConfig: attention with an output gate in q_proj and head_dim q/k norms in the
// full-attention layers, the gated delta rule (linear_attn.*) in the others; Qwen2-MoE's
// experts, shared expert and its gate in the MoE layers, Qwen3's MLP in the dense ones.
// Qwen3.5 (qwen3_5_text: no experts; qwen3_5_moe_text: every layer MoE) splits the delta
// rule's input projections.
void map_qwen3_next(ModelSpec& spec, const HfConfig& config, std::string_view model_type) {
  const bool qwen3_5 = model_type != "qwen3_next";
  spec.hf_names = qwen3_5 ? HfNames::qwen3_5 : HfNames::qwen2_moe;
  spec.ssm_split_projections = qwen3_5;
  spec.head_dim = config.size_or("head_dim", 256);
  spec.qkv_bias = spec.o_bias = config.flag_or("attention_bias", false);
  spec.qk_norm = spec.attention_gate = true;
  spec.qk_norm_shape = workloads::QkNormShape::head_dim;
  spec.mixer = Mixer::gated_delta_net;
  spec.ssm_heads = config.size_or("linear_num_value_heads", 32);
  spec.ssm_groups = config.size_or("linear_num_key_heads", 16);
  spec.ssm_state_size = config.size_or("linear_key_head_dim", 128);
  spec.ssm_inner_size = times(config, "linear_value_head_dim",
                              config.size_or("linear_value_head_dim", 128), spec.ssm_heads);
  spec.ssm_conv_kernel = config.size_or("linear_conv_kernel_dim", 4);
  spec.ssm_conv_bias = false;
  qwen3_next_attention_layers(spec, config);
  if (model_type == "qwen3_5_text") return;
  spec.num_local_experts =
      config.size("num_local_experts").value_or(config.size_or("num_experts", qwen3_5 ? 256 : 512));
  if (!qwen3_5) qwen3_next_moe_layers(spec, config);
  if (spec.num_local_experts == 0) return;
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", qwen3_5 ? 8 : 10);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", 512);
  spec.shared_expert_intermediate_size = config.size_or("shared_expert_intermediate_size", 512);
  if (spec.shared_expert_intermediate_size == 0) {
    config.at().fail("shared_expert_intermediate_size",
                     "0 gives every MoE layer an empty shared expert, which ckptbench does not "
                     "lay out");
  }
  spec.shared_expert_gate = true;
}

// Lfm2Config's MLP width: with block_auto_adjust_ff_dim two thirds of intermediate_size (older
// configs: block_ff_dim), then block_ffn_dim_multiplier times that rounded up to
// block_multiple_of.
std::int64_t lfm2_ffn(const HfConfig& config) {
  std::int64_t ffn =
      config.size("block_ff_dim").value_or(config.required_size("intermediate_size"));
  if (!config.flag_or("block_auto_adjust_ff_dim", true)) return ffn;
  ffn = times(config, "intermediate_size", 2, ffn) / 3;
  if (config.is_null("block_ffn_dim_multiplier")) return ffn;
  const std::string_view key = "block_ffn_dim_multiplier";
  const double multiplier = config.number_or(key, 1.0);
  if (!(multiplier >= 0.0 && multiplier * static_cast<double>(ffn) < 9e15))
    config.at().fail(key, "must be a non-negative number that keeps the MLP width in range");
  ffn = static_cast<std::int64_t>(multiplier * static_cast<double>(ffn));
  const std::int64_t multiple = config.size_or("block_multiple_of", 256);
  if (multiple == 0) config.at().fail("block_multiple_of", "must be positive");
  return times(config, "block_multiple_of", multiple, (ffn + multiple - 1) / multiple);
}

// Lfm2Config: a short convolution (conv.*) in the "conv" layers and attention (q/k/v, out_proj,
// q_layernorm / k_layernorm [head_dim]) in the "full_attention" ones (layer_types, else
// full_attn_idxs, else every layer), operator_norm and ffn_norm, the gated MLP w1 / w3 / w2,
// the final norm called embedding_norm; tied (older configs: tie_embedding).
// LFM2-MoE: the same layers with intermediate_size MLPs in the first num_dense_layers and MoE
// (feed_forward.gate, experts w1 / w3 / w2, the routing bias expert_bias under use_expert_bias)
// in the others; layer_types is required.
void map_lfm2(ModelSpec& spec, const HfConfig& config, bool moe) {
  spec.hf_names = HfNames::lfm2;
  spec.head_dim = config.size_or("head_dim", 0);
  spec.intermediate_size = moe ? config.required_size("intermediate_size") : lfm2_ffn(config);
  if (moe) {
    spec.num_local_experts = config.size_or("num_experts", 32);
    spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 4);
    spec.moe_intermediate_size = config.size_or("moe_intermediate_size", 1792);
    spec.first_k_dense_replace = config.size_or("num_dense_layers", 2);
    spec.moe_router_bias = config.flag_or("use_expert_bias", true);
    if (!config.has("layer_types") || config.is_null("layer_types"))
      config.at().fail("layer_types", "required: transformers reads each layer's type from it");
  }
  spec.qk_norm = true;
  spec.qk_norm_shape = workloads::QkNormShape::head_dim;
  spec.tie_word_embeddings = config.has("tie_embedding")
                                 ? config.flag_or("tie_embedding", true)
                                 : config.flag_or("tie_word_embeddings", true);
  spec.mixer = Mixer::short_conv;
  spec.ssm_inner_size = spec.hidden_size;
  spec.ssm_conv_kernel = config.size_or("conv_L_cache", 3);
  spec.ssm_conv_bias = config.flag_or("conv_bias", false);
  std::vector<Block> blocks;
  for (const std::string& name : config.texts("layer_types")) {
    if (name != "conv" && name != "full_attention")
      config.at().fail("layer_types",
                       "layer type \"" + name + "\" is neither \"conv\" nor \"full_attention\"");
    blocks.push_back(name == "conv" ? Block::linear : Block::attention);
  }
  if (blocks.empty()) {
    const std::vector<std::int64_t> attention = config.sizes("full_attn_idxs");
    for (std::int64_t layer = 0; layer < spec.num_hidden_layers; ++layer) {
      const bool listed = std::find(attention.begin(), attention.end(), layer) != attention.end();
      blocks.push_back(listed || !config.has("full_attn_idxs") || config.is_null("full_attn_idxs")
                           ? Block::attention
                           : Block::linear);
    }
  }
  require_every_layer(config, "layer_types", blocks, spec.num_hidden_layers);
  spec.attention_layers = layers_of(blocks, Block::attention);
}

// NemotronH's layer order: layers_block_type (or layer_types), else the older
// hybrid_override_pattern string (M Mamba, * attention, - MLP, E MoE), else its default four.
std::vector<Block> nemotron_h_blocks(const HfConfig& config) {
  const std::initializer_list<Block> all{Block::attention, Block::linear, Block::mlp, Block::moe};
  for (const std::string_view key : {"layers_block_type", "layer_types"}) {
    if (config.has(key) && !config.is_null(key)) return read_blocks(config, key, all);
  }
  const std::optional<std::string> pattern = config.text("hybrid_override_pattern");
  if (!pattern) return {Block::linear, Block::moe, Block::attention, Block::mlp};
  std::vector<Block> out;
  for (const char c : *pattern) {
    const std::string_view kinds = "*M-E";
    const std::size_t at = kinds.find(c);
    if (at == std::string_view::npos) {
      config.at().fail("hybrid_override_pattern", std::string("unknown layer '") + c +
                                                      "' (M: Mamba, *: attention, -: MLP, E: MoE)");
    }
    out.push_back(static_cast<Block>(at));
  }
  return out;
}

// The MoE block of NemotronH's "E" layers: a DeepSeek-style router with its correction bias,
// plain (up / down) experts and one shared expert of moe_shared_expert_intermediate_size.
void nemotron_h_moe(ModelSpec& spec, const HfConfig& config) {
  spec.num_local_experts =
      config.size("num_local_experts").value_or(config.size_or("n_routed_experts", 8));
  if (spec.num_local_experts == 0) {
    config.at().fail(config.has("num_local_experts") ? "num_local_experts" : "n_routed_experts",
                     "0 experts in an MoE layer (\"moe\" / E) cannot be laid out");
  }
  if (config.has("moe_latent_size") && !config.is_null("moe_latent_size")) {
    config.at().fail("moe_latent_size",
                     "a latent MoE adds fc1_latent_proj / fc2_latent_proj and narrows the experts, "
                     "which ckptbench does not lay out; describe the model in a TOML model file "
                     "instead");
  }
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 2);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", 7688);
  spec.shared_expert_intermediate_size =
      config.size_or("moe_shared_expert_intermediate_size", 7688);
  if (spec.shared_expert_intermediate_size == 0) {
    config.at().fail("moe_shared_expert_intermediate_size",
                     "0 gives every MoE layer an empty shared expert, which ckptbench does not "
                     "lay out");
  }
  spec.moe_router_bias = true;
}

// NemotronHConfig: every layer one norm and one block, all called the mixer: Mamba-2 (d_inner =
// mamba_num_heads × mamba_head_dim, whatever expand says), bias-free attention (attention_bias
// is not read), a plain MLP or the MoE block; the layer count is the pattern's. The older
// mamba_* spellings of the Mamba keys win, as NemotronHConfig reads them.
ModelSpec map_nemotron_h(const HfConfig& config) {
  ModelSpec spec;
  spec.hf_names = HfNames::nemotron_h;
  spec.mlp = workloads::MlpKind::plain;
  spec.hidden_size = config.size_or("hidden_size", 4096);
  spec.vocab_size = config.size_or("vocab_size", 131072);
  spec.num_attention_heads = config.size_or("num_attention_heads", 32);
  spec.num_key_value_heads = config.size_or("num_key_value_heads", 8);
  spec.head_dim = config.size_or("head_dim", 128);
  spec.intermediate_size = config.size_or("intermediate_size", 21504);
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 4096);
  // NemotronHForCausalLM ties nothing, whatever tie_word_embeddings says.
  spec.tie_word_embeddings = false;
  spec.mlp_bias = config.flag_or("mlp_bias", false);
  spec.mixer = Mixer::mamba2;
  spec.ssm_heads = config.size_or("mamba_num_heads", 128);
  spec.ssm_inner_size =
      times(config, "mamba_head_dim", config.size_or("mamba_head_dim", 64), spec.ssm_heads);
  spec.ssm_state_size = config.size_or("ssm_state_size", 128);
  spec.ssm_groups = config.size("mamba_n_groups").value_or(config.size_or("n_groups", 8));
  spec.ssm_conv_kernel = config.size("mamba_d_conv").value_or(config.size_or("conv_kernel", 4));
  spec.ssm_conv_bias = config.has("mamba_conv_bias") ? config.flag_or("mamba_conv_bias", true)
                                                     : config.flag_or("use_conv_bias", true);
  spec.ssm_proj_bias = spec.ssm_out_bias = config.flag_or("use_bias", false);
  const std::vector<Block> blocks = nemotron_h_blocks(config);
  spec.num_hidden_layers = static_cast<std::int64_t>(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block b = blocks[i];
    spec.layer_kinds.push_back(LayerKind{.attention = b == Block::attention,
                                         .ssm = b == Block::linear,
                                         .mlp = b == Block::mlp || b == Block::moe,
                                         .moe = b == Block::moe});
    if (b == Block::moe) spec.moe_layers.push_back(static_cast<std::int64_t>(i));
  }
  if (!spec.moe_layers.empty()) nemotron_h_moe(spec, config);
  return spec;
}

// ZambaConfig: Mamba layers whose x_proj, dt_proj, A and D are per head (n_mamba_heads), and
// "hybrid" layers (layers_block_type; by default the third and then every attn_layer_period-th
// from attn_layer_offset) that first run one attention + MLP block shared by all of them. That
// block reads the hidden state and the embeddings side by side (attention_hidden_size, 2h), its
// heads attention_head_dim (2h / heads) wide; tied.
ModelSpec map_zamba(const HfConfig& config) {
  ModelSpec spec = llama_sizes(config);
  spec.hybrid = false;
  spec.hf_names = HfNames::zamba;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  spec.attention_input_size =
      config.size_or("attention_hidden_size", times(config, "hidden_size", 2, spec.hidden_size));
  // head_dim is ZambaConfig's other name of attention_head_dim.
  const std::int64_t head_dim =
      spec.num_attention_heads == 0
          ? 0
          : times(config, "hidden_size", 2, spec.hidden_size) / spec.num_attention_heads;
  spec.head_dim = config.size("attention_head_dim").value_or(config.size_or("head_dim", head_dim));
  mamba_keys(spec, config);
  spec.mixer = Mixer::mamba;
  spec.ssm_state_size = config.size_or("mamba_d_state", 16);
  spec.ssm_heads = config.size_or("n_mamba_heads", 2);
  const bool auto_rank = config.text_if_string("mamba_dt_rank") == "auto";
  spec.ssm_dt_rank = auto_rank ? (spec.hidden_size + 15) / 16
                               : config.size_or("mamba_dt_rank", (spec.hidden_size + 15) / 16);
  // transformers saves the list as layers_block_type; layer_types is its other name.
  std::vector<std::string> types = config.texts("layers_block_type");
  if (types.empty()) types = config.texts("layer_types");
  if (types.empty()) {
    const std::int64_t period = config.size_or("attn_layer_period", 6);
    const std::int64_t offset = config.size_or("attn_layer_offset", 4);
    types = {"linear_attention", "linear_attention", "hybrid"};
    for (std::int64_t i = 0; i + 3 < spec.num_hidden_layers; ++i)
      types.emplace_back(period > 0 && i % period == offset ? "hybrid" : "linear_attention");
  }
  // transformers ties the hybrid layers' blocks together only under tie_word_embeddings; untied,
  // each keeps and saves its own.
  bool first = true;
  for (const std::string& type : types) {
    const bool hybrid = type == "hybrid";
    first = first || !spec.tie_word_embeddings;
    if (!hybrid && type != "linear_attention" && type != "mamba") {
      config.at().fail("layers_block_type", "layer type \"" + type +
                                                "\" is not one Zamba has (\"hybrid\" or "
                                                "\"linear_attention\")");
    }
    spec.layer_kinds.push_back(LayerKind{
        .attention = hybrid && first, .ssm = true, .mlp = hybrid && first, .shared_block = hybrid});
    first = first && !hybrid;
  }
  if (static_cast<std::int64_t>(types.size()) != spec.num_hidden_layers) {
    config.at().fail("layers_block_type", "lists " + std::to_string(types.size()) +
                                              " layer types for num_hidden_layers = " +
                                              std::to_string(spec.num_hidden_layers));
  }
  return spec;
}

// Zamba2Config: Mamba-2 layers and "hybrid" layers (layers_block_type; by default Zamba2-2.7B's
// 54 layers) that first run one of num_mem_blocks shared attention + MLP blocks, in turn. The
// block's attention reads 2h as Zamba's does, its MLP is one fused gate_up; each block holds a
// low-rank adapter (adapter_rank) on gate_up, and with use_shared_attention_adapter on q, k and
// v, for every hybrid layer that runs it. add_bias_linear biases the mixer's projections and the
// MLP. transformers derives attention_hidden_size, attention_head_dim, mamba_headdim,
// kv_channels, num_query_groups and hybrid_layer_ids from the other keys whatever the file says,
// and always gives the conv a bias (use_conv_bias is not read).
ModelSpec map_zamba2(const HfConfig& config) {
  ModelSpec spec = llama_sizes(config, false);
  spec.hybrid = false;
  spec.hf_names = HfNames::zamba2;
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  const std::int64_t twice = times(config, "hidden_size", 2, spec.hidden_size);
  spec.intermediate_size = config.size_or("intermediate_size", 2 * twice);
  spec.attention_input_size = twice;
  spec.head_dim = spec.num_attention_heads == 0 ? 0 : twice / spec.num_attention_heads;
  spec.fused_gate_up = true;
  spec.mlp_bias = config.flag_or("add_bias_linear", false);
  spec.mixer = Mixer::mamba2;
  spec.ssm_conv_kernel = config.size_or("mamba_d_conv", 4);
  spec.ssm_conv_bias = true;
  spec.ssm_proj_bias = spec.ssm_out_bias = spec.mlp_bias;
  spec.ssm_inner_size =
      times(config, "mamba_expand", config.size_or("mamba_expand", 2), spec.hidden_size);
  spec.ssm_state_size = config.size_or("mamba_d_state", 64);
  spec.ssm_heads = config.size_or("n_mamba_heads", 8);
  spec.ssm_groups = config.size_or("mamba_ngroups", 1);
  spec.shared_blocks = config.size_or("num_mem_blocks", 1);
  if (spec.shared_blocks == 0) config.at().fail("num_mem_blocks", "must be at least 1");
  spec.shared_block_adapter_rank = config.size_or("adapter_rank", 128);
  spec.shared_attention_adapters = config.flag_or("use_shared_attention_adapter", false);
  std::vector<std::string> types = config.texts("layers_block_type");
  if (types.empty()) types = config.texts("layer_types");
  if (types.empty()) {
    types = {"mamba"};
    for (int i = 0; i < 7; ++i)
      types.insert(types.end(), {"mamba", "mamba", "mamba", "mamba", "mamba", "hybrid"});
    for (const char* type : {"mamba", "mamba", "mamba", "mamba", "hybrid", "mamba", "mamba",
                             "mamba", "hybrid", "mamba", "mamba"})
      types.emplace_back(type);
  }
  // Tied, the first num_mem_blocks hybrid layers hold the blocks and the others run them;
  // untied, every hybrid layer saves its own copy.
  std::int64_t hybrids = 0;
  for (const std::string& type : types) {
    const bool hybrid = type == "hybrid";
    if (!hybrid && type != "linear_attention" && type != "mamba") {
      config.at().fail("layers_block_type", "layer type \"" + type +
                                                "\" is not one Zamba 2 has (\"hybrid\" or "
                                                "\"mamba\")");
    }
    const bool holds = hybrid && (hybrids < spec.shared_blocks || !spec.tie_word_embeddings);
    spec.layer_kinds.push_back(
        LayerKind{.attention = holds,
                  .ssm = true,
                  .mlp = holds,
                  .shared_block = hybrid,
                  .shared_block_id = holds ? hybrids % spec.shared_blocks : 0});
    hybrids += hybrid ? 1 : 0;
  }
  if (static_cast<std::int64_t>(types.size()) != spec.num_hidden_layers) {
    config.at().fail("layers_block_type", "lists " + std::to_string(types.size()) +
                                              " layer types for num_hidden_layers = " +
                                              std::to_string(spec.num_hidden_layers));
  }
  return spec;
}

}  // namespace

bool is_hybrid_family(std::string_view model_type) {
  for (const std::string_view type :
       {"jamba", "bamba", "falcon_h1", "granitemoehybrid", "nemotron_h", "qwen3_next",
        "qwen3_5_text", "qwen3_5_moe_text", "lfm2", "lfm2_moe", "zamba", "zamba2"}) {
    if (model_type == type) return true;
  }
  return false;
}

// The Llama-sized hybrids put a norm, the mixer, a norm and the MLP in every layer (names:
// model.layers.{i}.input_layernorm, mamba / self_attn, pre_ff_layernorm, feed_forward unless the
// family keeps its own).
ModelSpec map_hybrid_family(std::string_view model_type, const HfConfig& config) {
  if (model_type == "nemotron_h") return map_nemotron_h(config);
  if (model_type == "zamba") return map_zamba(config);
  if (model_type == "zamba2") return map_zamba2(config);
  ModelSpec spec = llama_sizes(config, model_type != "qwen3_5_moe_text");
  if (model_type == "lfm2" || model_type == "lfm2_moe") {
    map_lfm2(spec, config, model_type == "lfm2_moe");
    return spec;
  }
  if (model_type.starts_with("qwen3_")) {
    map_qwen3_next(spec, config, model_type);
    return spec;
  }
  spec.hf_names = HfNames::hybrid;
  mamba_keys(spec, config);
  if (model_type == "jamba") {
    map_jamba(spec, config);
  } else if (model_type == "granitemoehybrid") {
    map_granitemoehybrid(spec, config);
  } else {
    map_bamba_or_falcon_h1(spec, config, model_type == "falcon_h1");
  }
  return spec;
}

}  // namespace ckpt::harness::hf
