// Mappers of the Hugging Face families that hold tensors beyond the blocks ModelSpec models,
// declared by name and shape (ModelSpec's layer and stage extras).
#include "harness/models/hf_extra_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ckpt::harness::hf {
namespace {

// The sizes a family names as Llama does, each with its config class's default (kv_heads 0:
// one per attention head). An intermediate_size list (one width per layer) is the family's to
// read.
struct SizeDefaults {
  std::int64_t hidden, layers, heads, kv_heads, intermediate, vocab, positions;
  bool tie;
};

workloads::ModelSpec sizes_or_defaults(const HfConfig& config, const SizeDefaults& d) {
  workloads::ModelSpec spec;
  spec.hidden_size = config.size_or("hidden_size", d.hidden);
  spec.num_hidden_layers = config.size_or("num_hidden_layers", d.layers);
  spec.num_attention_heads = config.size_or("num_attention_heads", d.heads);
  spec.num_key_value_heads =
      config.size_or("num_key_value_heads", d.kv_heads > 0 ? d.kv_heads : spec.num_attention_heads);
  if (!config.is_array("intermediate_size"))
    spec.intermediate_size = config.size_or("intermediate_size", d.intermediate);
  spec.vocab_size = config.size_or("vocab_size", d.vocab);
  spec.max_position_embeddings = config.size_or("max_position_embeddings", d.positions);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", d.tie);
  return spec;
}

}  // namespace

// Gemma3nTextConfig: Gemma 3's layer (four norms, q/k norms [head_dim]) plus, in every layer, the
// AltUp router and coefficients over altup_num_inputs streams, a LAuReL block of laurel_rank and
// the gate and projection of a per-layer input of hidden_size_per_layer_input; beside the
// embedding a second one of vocab_size_per_layer_input rows for those inputs, its projection and
// norm, and AltUp's projections in and out of the extra streams. The last num_kv_shared_layers
// layers reuse earlier layers' keys and values. intermediate_size is one width or one per layer.
workloads::ModelSpec map_gemma3n(const HfConfig& config) {
  workloads::ModelSpec spec = sizes_or_defaults(config, {.hidden = 2048,
                                                         .layers = 35,
                                                         .heads = 8,
                                                         .kv_heads = 2,
                                                         .intermediate = 16384,
                                                         .vocab = 262400,
                                                         .positions = 32768,
                                                         .tie = true});
  spec.head_dim = config.size_or("head_dim", 256);
  spec.qkv_bias = spec.o_bias = config.flag_or("attention_bias", false);
  spec.norm_placement = workloads::NormPlacement::sandwich;
  spec.qk_norm = true;
  spec.qk_norm_shape = workloads::QkNormShape::head_dim;
  spec.kv_shared_layers = config.size_or("num_kv_shared_layers", 15);
  if (config.is_array("intermediate_size")) {
    const std::vector<std::int64_t> widths = config.sizes("intermediate_size");
    if (widths.empty() || std::count(widths.begin(), widths.end(), widths[0]) !=
                              static_cast<std::int64_t>(widths.size())) {
      config.at().fail("intermediate_size",
                       "layers of different MLP widths cannot be laid out; describe the model in "
                       "a TOML model file instead");
    }
    spec.intermediate_size = widths[0];
  }
  const auto product = [&](std::string_view key, std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
      config.at().fail(key, std::to_string(a) + " is too large: a size derived from it overflows");
    return out;
  };
  const std::int64_t h = spec.hidden_size;
  const std::int64_t n = config.size_or("altup_num_inputs", 4);
  const std::int64_t rank = config.size_or("laurel_rank", 64);
  const std::int64_t p = config.size_or("hidden_size_per_layer_input", 256);
  const std::int64_t inputs =
      product("hidden_size_per_layer_input", spec.num_hidden_layers, p);  // all layers' inputs
  spec.layer_extras = {{"altup.correct_output_scale", {h}},
                       {"altup.correction_coefs.weight", {n, n}},
                       {"altup.prediction_coefs.weight", {product("altup_num_inputs", n, n), n}},
                       {"altup.modality_router.weight", {n, h}},
                       {"altup.router_norm.weight", {h}},
                       {"laurel.linear_left.weight", {rank, h}},
                       {"laurel.linear_right.weight", {h, rank}},
                       {"laurel.post_laurel_norm.weight", {h}},
                       {"per_layer_input_gate.weight", {p, h}},
                       {"per_layer_projection.weight", {h, p}},
                       {"post_per_layer_input_norm.weight", {h}}};
  spec.first_stage_extras = {{"model.embed_tokens_per_layer.weight",
                              {config.size_or("vocab_size_per_layer_input", 262144), inputs}},
                             {"model.per_layer_model_projection.weight", {inputs, h}},
                             {"model.per_layer_projection_norm.weight", {p}}};
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    const std::string index = std::to_string(i);
    spec.first_stage_extras.push_back({"model.altup_projections." + index + ".weight", {h, h}});
    spec.last_stage_extras.push_back(
        {"model.altup_unembed_projections." + index + ".weight", {h, h}});
  }
  return spec;
}

// DogeConfig: Llama's layer with q/k norms [head_dim], a learned scale on each residual
// (input_residual, post_attention_residual [h]) and the dynamic mask's A [kv heads] and dt_proj
// [kv heads, kv heads × head_dim] (biased with attention_bias). is_moe adds to the MLP (which
// stays, as the shared expert) a product-key router [2·⌊√E⌋, h] and one down and one up
// embedding row per expert.
workloads::ModelSpec map_doge(const HfConfig& config) {
  workloads::ModelSpec spec = sizes_or_defaults(config, {.hidden = 1024,
                                                         .layers = 32,
                                                         .heads = 8,
                                                         .kv_heads = 0,
                                                         .intermediate = 2048,
                                                         .vocab = 32768,
                                                         .positions = 2048,
                                                         .tie = false});
  spec.head_dim = config.size_or("head_dim", 0);
  const bool attention_bias = config.flag_or("attention_bias", false);
  spec.qkv_bias = spec.o_bias = attention_bias;
  spec.mlp_bias = config.flag_or("mlp_bias", false);
  spec.qk_norm = true;
  spec.qk_norm_shape = workloads::QkNormShape::head_dim;
  const std::int64_t h = spec.hidden_size;
  const std::int64_t kv = spec.num_key_value_heads;
  const std::int64_t head_dim = spec.head_dim > 0              ? spec.head_dim
                                : spec.num_attention_heads > 0 ? h / spec.num_attention_heads
                                                               : 0;
  spec.layer_extras = {{"input_residual", {h}},
                       {"post_attention_residual", {h}},
                       {"self_attn.A", {kv}},
                       {"self_attn.dt_proj.weight", {kv, kv * head_dim}}};
  if (attention_bias) spec.layer_extras.push_back({"self_attn.dt_proj.bias", {kv}});
  if (config.flag_or("is_moe", false)) {
    const std::int64_t experts = config.size_or("num_experts", 16384);
    const auto keys = static_cast<std::int64_t>(std::sqrt(static_cast<double>(experts)));
    spec.layer_extras.push_back({"mlp.router_gate.weight", {2 * keys, h}});
    spec.layer_extras.push_back({"mlp.down_embed.weight", {experts, h}});
    spec.layer_extras.push_back({"mlp.up_embed.weight", {experts, h}});
  }
  return spec;
}

// TrOCRConfig (its causal LM is always a decoder): OPT's post-norm layer under
// model.decoder.layers with a cross-attention over the encoder's cross_attention_hidden_size
// (encoder_attn.q/k/v/out_proj, biased, and its LayerNorm) after the self-attention; learned
// positions with OPT's two extra rows, or sinusoidal ones (not stored); a LayerNorm after the
// embedding (layernorm_embedding); no final norm; the output tied (an untied output_projection
// is refused).
workloads::ModelSpec map_trocr(const HfConfig& config) {
  const auto either = [&](std::string_view key, std::string_view other, std::int64_t fallback) {
    return config.size(key).value_or(config.size_or(other, fallback));
  };
  workloads::ModelSpec spec;
  spec.hf_names = workloads::HfNames::opt;
  spec.hidden_size = either("d_model", "hidden_size", 1024);
  spec.num_hidden_layers = either("decoder_layers", "num_hidden_layers", 12);
  spec.num_attention_heads = either("decoder_attention_heads", "num_attention_heads", 16);
  spec.intermediate_size = config.size_or("decoder_ffn_dim", 4096);
  spec.vocab_size = config.size_or("vocab_size", 50265);
  spec.norm = workloads::NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.linear_bias = true;
  spec.norm_placement = workloads::NormPlacement::post;
  spec.final_norm = false;
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 512);
  if (config.flag_or("use_learned_position_embeddings", true)) {
    spec.position_embedding = workloads::PositionEmbedding::learned;
    spec.position_offset = 2;
  }
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  if (!spec.tie_word_embeddings) {
    config.at().fail("tie_word_embeddings",
                     "false adds TrOCR's own output_projection, which ckptbench does not lay out");
  }
  const std::int64_t h = spec.hidden_size;
  const std::int64_t cross = config.size_or("cross_attention_hidden_size", h);
  for (const auto& [name, in] : {std::pair{"q_proj", h}, std::pair{"k_proj", cross},
                                 std::pair{"v_proj", cross}, std::pair{"out_proj", h}}) {
    spec.layer_extras.push_back({"encoder_attn." + std::string(name) + ".weight", {h, in}});
    spec.layer_extras.push_back({"encoder_attn." + std::string(name) + ".bias", {h}});
  }
  spec.layer_extras.push_back({"encoder_attn_layer_norm.weight", {h}});
  spec.layer_extras.push_back({"encoder_attn_layer_norm.bias", {h}});
  if (config.flag_or("layernorm_embedding", true)) {
    spec.first_stage_extras.push_back({"model.decoder.layernorm_embedding.weight", {h}});
    spec.first_stage_extras.push_back({"model.decoder.layernorm_embedding.bias", {h}});
  }
  return spec;
}

// JetMoeConfig: every layer a mixture of attention experts (the queries and outputs of
// num_key_value_heads × kv_channels per expert, fused [E, ·, ·] as JetMoE's parallel experts,
// a router, an output bias and one kv_proj the experts share) and a mixture of MLP experts
// stored as GraniteMoE's (input_linear [E, 2f, h], output_linear [E, h, f]) under mlp., with a
// router and an output bias; num_attention_heads is kv heads × num_experts_per_tok.
workloads::ModelSpec map_jetmoe(const HfConfig& config) {
  workloads::ModelSpec spec = sizes_or_defaults(config, {.hidden = 2048,
                                                         .layers = 12,
                                                         .heads = 0,
                                                         .kv_heads = 16,
                                                         .intermediate = 5632,
                                                         .vocab = 32000,
                                                         .positions = 4096,
                                                         .tie = true});
  spec.hf_names = workloads::HfNames::jetmoe;
  spec.num_local_experts = config.size_or("num_local_experts", 8);
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 2);
  spec.num_attention_heads = spec.num_key_value_heads * spec.num_experts_per_tok;
  spec.head_dim = config.size_or("kv_channels", 128);
  spec.expert_storage = workloads::ExpertStorage::fused_in_out;
  spec.attention_in_extras = true;
  const std::int64_t h = spec.hidden_size;
  const std::int64_t e = spec.num_local_experts;
  const std::int64_t width = spec.num_key_value_heads * spec.head_dim;
  spec.layer_extras = {{"mlp.bias", {h}},
                       {"self_attention.experts.bias", {h}},
                       {"self_attention.experts.input_linear.weight", {e, width, h}},
                       {"self_attention.experts.output_linear.weight", {e, h, width}},
                       {"self_attention.experts.router.layer.weight", {e, h}},
                       {"self_attention.kv_proj.weight", {2 * width, h}}};
  return spec;
}

namespace {

// XmodConfig: RoBERTa with, after each layer's output, one bottleneck adapter per language
// (dense1 [h / adapter_reduction_factor, h], dense2 back, both biased), with adapter_layer_norm a
// LayerNorm of its own before them, and with pre_norm a final LayerNorm after the encoder.
void add_xmod_adapters(workloads::ModelSpec& spec, const HfConfig& config) {
  const std::int64_t h = spec.hidden_size;
  const std::int64_t factor = config.size_or("adapter_reduction_factor", 2);
  if (factor == 0) config.at().fail("adapter_reduction_factor", "must be at least 1");
  const std::int64_t bottleneck = h / factor;
  std::vector<std::string> languages = config.texts("languages");
  if (languages.empty()) languages = {"en_XX"};
  const std::string output = "output.";
  if (config.flag_or("adapter_layer_norm", false)) {
    spec.layer_extras.push_back({output + "adapter_layer_norm.weight", {h}});
    spec.layer_extras.push_back({output + "adapter_layer_norm.bias", {h}});
  }
  for (const std::string& language : languages) {
    const std::string adapter = output + "adapter_modules." + language + ".";
    spec.layer_extras.push_back({adapter + "dense1.weight", {bottleneck, h}});
    spec.layer_extras.push_back({adapter + "dense1.bias", {bottleneck}});
    spec.layer_extras.push_back({adapter + "dense2.weight", {h, bottleneck}});
    spec.layer_extras.push_back({adapter + "dense2.bias", {h}});
  }
  if (config.flag_or("pre_norm", false)) {
    spec.last_stage_extras.push_back({spec.hf_prefix + ".encoder.LayerNorm.weight", {h}});
    spec.last_stage_extras.push_back({spec.hf_prefix + ".encoder.LayerNorm.bias", {h}});
  }
}

}  // namespace

// RoFormerConfig: rotary positions, whose sinusoidal table [max_position_embeddings, head_dim]
// the encoder saves as embed_positions; an embedding_size other than hidden_size adds a
// projection (refused). RoCBertConfig: a pronunciation and a shape embedding beside the word
// embedding, and with concat_input a linear [h, h + the enabled ones' widths] over them.
void add_bert_extras(workloads::ModelSpec& spec, const HfConfig& config,
                     std::string_view model_type) {
  const std::string base = spec.hf_prefix + ".";
  if (model_type == "roformer") {
    const std::optional<std::int64_t> width = config.size("embedding_size");
    if (width && *width != spec.hidden_size) {
      config.at().fail("embedding_size",
                       "an embedding narrower or wider than hidden_size adds projections "
                       "ckptbench does not lay out; describe the model in a TOML model file "
                       "instead");
    }
    spec.position_embedding = workloads::PositionEmbedding::rope;
    spec.max_position_embeddings = config.size_or("max_position_embeddings", 1536);
    const std::int64_t head_dim =
        spec.num_attention_heads > 0 ? spec.hidden_size / spec.num_attention_heads : 0;
    spec.first_stage_extras.push_back(
        {base + "encoder.embed_positions.weight", {spec.max_position_embeddings, head_dim}});
  }
  if (model_type == "xmod") add_xmod_adapters(spec, config);
  if (model_type == "roc_bert") {
    const std::int64_t pronunciation = config.size_or("pronunciation_embed_dim", 768);
    const std::int64_t shape = config.size_or("shape_embed_dim", 512);
    const std::string embeddings = base + "embeddings.";
    spec.first_stage_extras.push_back(
        {embeddings + "pronunciation_embed.weight",
         {config.size_or("pronunciation_vocab_size", 910), pronunciation}});
    spec.first_stage_extras.push_back(
        {embeddings + "shape_embed.weight", {config.size_or("shape_vocab_size", 24858), shape}});
    if (config.flag_or("concat_input", true)) {
      std::int64_t inputs = spec.hidden_size;
      if (config.flag_or("enable_pronunciation", true)) inputs += pronunciation;
      if (config.flag_or("enable_shape", true)) inputs += shape;
      spec.first_stage_extras.push_back(
          {embeddings + "map_inputs_layer.weight", {spec.hidden_size, inputs}});
      spec.first_stage_extras.push_back({embeddings + "map_inputs_layer.bias", {spec.hidden_size}});
    }
  }
}

}  // namespace ckpt::harness::hf
