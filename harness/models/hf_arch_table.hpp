#pragma once

// The Hugging Face architectures laid out from a config.json: one row of data per model_type
// (the keys it reads and what sets it apart from Llama), and the keys that change no tensor.
#include <cstdint>
#include <span>
#include <string_view>

#include "workloads/model_spec.hpp"

namespace ckpt::harness::hf {

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
  // A boolean key (default true) that keeps `placement`; false: the norms before each block
  // only (HyperCLOVAX's use_post_norm).
  std::string_view post_norm_key;
  // The default of hidden_act where an activation holds tensors (xIELU); empty: not read.
  std::string_view activation;
  bool gate_proj = false;       // a separate attention output gate, self_attn.gate_proj (AFMoE)
  bool ungated_shared = false;  // HfArch::sparse_moe: the shared expert has no sigmoid gate
  bool router_bias = false;     // HfArch::sparse_moe: the router's e_score_correction_bias
  // The key of an untied output layer's rows where they may be fewer than vocab_size (Apertus
  // 1.5's output_vocab_size; absent or null: vocab_size).
  std::string_view output_rows_key;
};

struct ArchName {
  HfArch arch;
  std::string_view model_type;
  std::string_view class_name;
  std::span<const std::string_view> keys;  // read beyond common_keys() and the traits' keys
  bool reads_head_dim;
  Traits traits;
};
// Every architecture, in the order detection tries them.
std::span<const ArchName> arch_table();
// The keys every architecture reads beyond its own. A key outside those an architecture reads
// that is within edit distance 2 of one of them is taken for a misspelling.
std::span<const std::string_view> common_keys();
inline constexpr std::string_view kHeadDimKey = "head_dim";  // read where a row says so
// Keys that change no tensor, ignored whatever the architecture.
std::span<const std::string_view> ignored_keys();

}  // namespace ckpt::harness::hf
