#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/hf_save_order.hpp"

namespace ckpt::workloads {

enum class NormKind {
  rmsnorm,
  layernorm,
  none
};  // layernorm carries a bias; none: non-parametric (OLMo)
// Norms of one layer: pre: before attention and before the MLP (Llama); parallel: one before
// the parallel attention + MLP (GPT-J style: Phi, Cohere, Falcon-7B); sandwich: before and after
// each (Gemma 2); post: after each (OLMo 2); parallel_pair: one each for the parallel attention
// and MLP (Falcon's new_decoder_architecture).
enum class NormPlacement { pre, parallel, sandwich, post, parallel_pair };
// Hugging Face tensor-name family (Naming::hf): which checkpoint spells the tensors how.
// The last group is read from config.json only (a TOML model file cannot express their layouts).
enum class HfNames {
  llama,
  qwen2_moe,
  falcon,
  gpt_neox,
  phi,
  starcoder2,
  cohere,
  glm4,
  deepseek,
  vaultgemma,
  gpt2,
  gptj,
  bloom,
  opt,
  gpt_oss,
  llama4,
  granitemoe,
  mamba,
  dbrx,
  hybrid,
  nemotron_h,
  hunyuan,
  hunyuan_moe,
  nanochat,
  persimmon,
  gpt_neo,
  xglm,
  openai_gpt,
  exaone,
  granitemoe_swa,
  sarvam_moe,
  exaone_moe,
  lfm2,
  hyperclovax,
  apertus,
  minimax_m2,
  ernie4_5_moe,
  qwen3_5,
  afmoe,
  hy_v3,
  kolibri1,
  flint,
  bert,
  megatron_bert,
  roberta,
  roberta_prelayernorm,
  xlm_roberta_xl,
  biogpt,
  ctrl,
  xlm,
  zamba,
  zamba2,
  aria,
  jetmoe
};
// The shape of the per-head q/k norms: one vector over all heads (OLMo 2), one row per head
// (Cohere), or one head_dim vector shared by the heads (Qwen3, Gemma 3).
enum class QkNormShape { all_heads, per_head, head_dim };
enum class MlpKind { gated, plain };                    // gated: three matrices; plain: two
enum class PositionEmbedding { rope, learned, alibi };  // learned: max_position × hidden table
// How a Hugging Face checkpoint stores the routed experts of a layer: one set of matrices per
// expert, or one 3-D tensor per matrix kind with the experts in dim 0 — fused_gate_up:
// gate_up_proj [E, h, 2f] and down_proj [E, f, h] (gpt-oss, Llama 4); fused_in_out:
// input_linear [E, 2f, h] and output_linear [E, h, f] (GraniteMoE).
// fused_rows: w1, v1 and w2 each [E·f, h], the experts' rows one after another (DBRX).
enum class ExpertStorage { per_expert, fused_gate_up, fused_in_out, fused_rows };
// What mixes tokens in a layer: attention followed by the MLP, or a state-space mixer alone
// (Mamba: A_log [d_inner, N]; Mamba-2: one A_log per head, grouped B/C; the gated delta rule
// of Qwen3-Next's linear attention: per-head A_log and dt_bias, grouped keys like Mamba-2's B/C;
// LFM2's short convolution: in_proj [3h, h], a depthwise conv over h, out_proj; MiniMax's
// lightning attention: qkv_proj [3 × heads × head_dim, h], a norm, an output gate, out_proj).
enum class Mixer { attention, mamba, mamba2, gated_delta_net, short_conv, lightning };
// What one layer holds besides its norms: attention, the state-space mixer or both side by side,
// then the MLP (or the MoE block). A layer of exactly one of the three holds one norm and that
// block (Mamba's layers; NemotronH's attention, Mamba, MLP or MoE layers).
struct LayerKind {
  bool attention = true;
  bool ssm = false;
  bool mlp = true;
  bool moe = false;
  bool indexer = false;  // a sparse-attention indexer beside the latent attention
  // Runs an attention + MLP block, then a linear of its own, then its Mamba mixer (Zamba's
  // hybrid layers). A layer with attention and mlp set holds the block's tensors: under tied
  // word embeddings transformers ties every hybrid layer's block to the first, so only the first
  // such layer holds them; untied, every hybrid layer saves its own block and has both set.
  bool shared_block = false;
  // Which of the model's shared blocks a layer holding one holds (Zamba 2's num_mem_blocks
  // blocks, taken in turn by the hybrid layers); it decides the block's adapters.
  std::int64_t shared_block_id = 0;
  // Reads the keys and values an earlier layer computed: no k/v projections and no k norm
  // (Gemma 3n's last num_kv_shared_layers layers).
  bool kv_shared = false;
  bool operator==(const LayerKind&) const = default;
};

// A tensor a family holds beyond the blocks ModelSpec models, by name and shape (Gemma 3n's
// AltUp and LAuReL blocks and per-layer inputs); replicated across TP.
struct ExtraTensor {
  std::string name;
  std::vector<std::int64_t> shape;
};

// The architecture of a decoder-only transformer, in Hugging Face vocabulary where one
// exists. Zero means "not set" for the optional sizes; `resolved()` applies the HF defaults.
struct ModelSpec {
  std::string name;

  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_hidden_layers = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;  // default: num_attention_heads (MHA)
  std::int64_t head_dim = 0;             // default: hidden_size / num_attention_heads
  std::int64_t vocab_size = 0;
  // Rows of an untied output layer pruned below vocab_size (Apertus 1.5); 0: vocab_size.
  std::int64_t output_vocab_size = 0;
  bool tie_word_embeddings = false;
  std::int64_t max_position_embeddings = 0;

  NormKind norm = NormKind::rmsnorm;
  bool linear_bias = false;  // bias on every linear layer (GPT-3, BLOOM, OPT)
  bool qkv_bias = false;     // bias on q/k/v only (Qwen2)
  bool o_bias = false;       // bias on the attention output (Llama's attention_bias)
  bool mlp_bias = false;     // bias on every MLP matrix (Llama's mlp_bias)
  MlpKind mlp = MlpKind::gated;
  PositionEmbedding position_embedding = PositionEmbedding::rope;
  bool embedding_norm = false;       // LayerNorm right after the word embedding (BLOOM)
  std::int64_t type_vocab_size = 0;  // rows of the token-type (segment) embedding (BERT); 0: none
  // A dense [h, h] with a bias and a LayerNorm before the output layer (BERT's prediction head).
  bool lm_head_transform = false;
  // A dense [h, h] with a bias over the first token after the last layer (BigBird's pooler).
  bool pooler = false;
  // HF names only: the base model's attribute name where a family's classes vary it (BERT's
  // "bert", RoBERTa's "roberta", ...).
  std::string hf_prefix;
  bool final_norm = true;  // false: no norm after the last layer (GPT-1, some OPT)
  NormPlacement norm_placement = NormPlacement::pre;
  bool qk_norm = false;  // q_norm [heads × head_dim], k_norm [kv heads × head_dim]
  QkNormShape qk_norm_shape = QkNormShape::all_heads;  // HF names only
  bool lm_head_bias = false;                           // bias on the output layer (Phi)
  // HF names only (Megatron always fuses): one qkv matrix [(heads + 2 kv) × head_dim, hidden],
  // one gate_up matrix [2 × ffn, hidden] (Phi-3, Falcon, GPT-NeoX).
  bool fused_qkv = false;
  bool fused_gate_up = false;
  HfNames hf_names = HfNames::llama;
  // HF names only: GPT-2's Conv1D stores each linear transposed, [in, out].
  bool conv1d_weights = false;
  // Rows of the learned position table beyond max_position_embeddings (OPT: 2).
  std::int64_t position_offset = 0;
  bool attention_sinks = false;  // one learned logit per head, [heads] (gpt-oss)
  // Differential attention (DiffLlama): four learned vectors [head_dim] per layer that weigh the
  // two softmax maps (lambda_q1, lambda_k1, lambda_q2, lambda_k2).
  bool attention_lambdas = false;
  // BitNet: RMSNorms inside the attention [hidden] and the dense MLP [intermediate], before
  // their output projections (attn_sub_norm, ffn_sub_norm).
  bool sub_norms = false;
  // q_proj also yields a sigmoid gate on the attention output: [2 × heads × head_dim, h]
  // (Qwen3-Next).
  bool attention_gate = false;
  // The same gate as its own matrix, gate_proj [heads × head_dim, h] (AFMoE).
  bool attention_gate_proj = false;
  // The width attention reads where it is not hidden_size (Zamba's shared block reads the hidden
  // state and the input embeddings side by side, 2h); its input norm is as wide.
  std::int64_t attention_input_size = 0;
  // Zamba 2's shared blocks: low-rank adapters (a [rank, in] and an [out, rank] matrix) on the
  // fused gate_up of the shared MLP and, with shared_attention_adapters, on q, k and v, one per
  // hybrid layer that runs the block; 0: none. Block b holds those of the hybrid layers
  // b, b + shared_blocks, … (counted over the hybrid layers).
  std::int64_t shared_block_adapter_rank = 0;
  std::int64_t shared_blocks = 1;
  bool shared_attention_adapters = false;
  // The last kv_shared_layers layers reuse earlier layers' keys and values (LayerKind::kv_shared).
  std::int64_t kv_shared_layers = 0;
  // Tensors beyond the modelled blocks: in every layer (names after the layer prefix), and
  // whole names beside the embedding (first pipeline stage) and the output layer (last stage).
  std::vector<ExtraTensor> layer_extras, first_stage_extras, last_stage_extras;
  // The attention is none of the kinds modelled and all its tensors are in layer_extras
  // (JetMoE's mixture of attention experts).
  bool attention_in_extras = false;
  // The dense MLP's xIELU activation holds learned alpha_p and alpha_n [1] and the constants
  // beta and eps [] (Apertus).
  bool xielu_activation = false;

  // Mixture of experts: num_local_experts > 0 turns layers >= first_k_dense_replace into MoE.
  std::int64_t num_local_experts = 0;
  std::int64_t num_experts_per_tok = 0;
  std::int64_t moe_intermediate_size = 0;  // default: intermediate_size
  std::int64_t n_shared_experts = 0;       // one shared MLP of n × moe_intermediate_size
  std::int64_t first_k_dense_replace = 0;
  // Qwen2-MoE: one shared expert of this size (instead of n_shared_experts), optionally scaled
  // by a sigmoid gate [1, hidden].
  std::int64_t shared_expert_intermediate_size = 0;
  bool shared_expert_gate = false;
  bool moe_router_bias = false;  // per-expert routing bias (DeepSeek-V3's e_score_correction_bias)
  // The routing bias as one row per expert group, [1, experts] (ERNIE 4.5's moe_statics).
  bool router_bias_row = false;
  bool moe_output_norm = false;  // a norm after each MoE block's output (A.X-K1)
  ExpertStorage expert_storage = ExpertStorage::per_expert;  // HF names only
  bool expert_bias = false;  // biases on the fused expert matrices (gpt-oss)

  // State-space mixers (mixer != attention): no attention and no MLP in a layer.
  // The gated delta rule reuses the Mamba-2 sizes: heads = value heads, groups = key heads,
  // N = key head width, d_inner = value heads × value head width.
  Mixer mixer = Mixer::attention;
  std::int64_t ssm_inner_size = 0;  // d_inner (expand × hidden)
  std::int64_t ssm_state_size = 0;  // N
  std::int64_t ssm_conv_kernel = 0;
  std::int64_t ssm_dt_rank = 0;  // Mamba: width of the time-step projection
  // Mamba-2 and the gated delta rule; Mamba with heads: x_proj, dt_proj, A and D per head (Zamba).
  std::int64_t ssm_heads = 0, ssm_groups = 0;
  bool ssm_proj_bias = false;  // bias on in_proj / out_proj
  bool ssm_conv_bias = true;
  bool ssm_gated_norm = true;  // Mamba-2's gated RMSNorm over d_inner (Falcon-H1: mamba_rms_norm)
  bool ssm_out_bias = false;   // bias on out_proj alone (Falcon-H1's projectors_bias)
  // The gated delta rule's input projections split into in_proj_qkv, in_proj_z, in_proj_b and
  // in_proj_a (Qwen3.5) instead of in_proj_qkvz and in_proj_ba.
  bool ssm_split_projections = false;
  // Jamba: RMSNorms over the time step [dt_rank] and over B and C [N] inside the mixer.
  bool ssm_inner_norms = false;

  // Hybrid stacks (Jamba, Bamba, Falcon-H1, GraniteMoeHybrid, Qwen3-Next): every layer has the
  // MLP after its mixer, which is attention in `attention_layers` and the state-space `mixer` in
  // the others, or both side by side in every layer (ssm_beside_attention).
  bool hybrid = false;
  bool ssm_beside_attention = false;
  std::vector<std::int64_t> attention_layers;
  // The MoE layers when they are not simply the ones from first_k_dense_replace on (Jamba's
  // every other layer); ascending.
  std::vector<std::int64_t> moe_layers;
  // Each layer's kind spelled out, one per layer, when every layer is one block (NemotronH's
  // attention, Mamba, MLP and MoE layers in its own order); empty: derived from the above. Its
  // MoE layers are also listed in moe_layers.
  std::vector<LayerKind> layer_kinds;

  // Multi-head latent attention (DeepSeek-V2/V3): on when kv_lora_rank > 0.
  std::int64_t q_lora_rank = 0;  // 0: queries are not compressed
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  // DeepSeek Sparse Attention's indexer beside the latent attention (DeepSeek-V3.2, GLM-5): wq_b
  // [heads × dim, q_lora_rank], wk [dim, h], a LayerNorm [dim] and weights_proj [heads, h]; 0
  // heads: none. The layers in shared_indexer_layers reuse an earlier layer's selection and hold
  // none.
  std::int64_t indexer_heads = 0, indexer_head_dim = 0;
  std::vector<std::int64_t> shared_indexer_layers;

  // HF names only: the order save_pretrained meets the tensors in, which decides the tensors
  // each safetensors file holds when the weights take several (the family's, from config.json's
  // model_type; a model file's, from hf_names).
  HfSaveOrder hf_save_order;

  bool is_moe() const { return num_local_experts > 0; }
  bool uses_mla() const { return kv_lora_rank > 0; }
  bool fused_experts() const { return is_moe() && expert_storage != ExpertStorage::per_expert; }
  bool is_hybrid() const { return hybrid; }
  bool layer_is_moe(std::int64_t layer) const;
  std::int64_t moe_layer_count() const;
  LayerKind layer_kind(std::int64_t layer) const;
  std::int64_t expert_intermediate_size() const {
    return moe_intermediate_size > 0 ? moe_intermediate_size : intermediate_size;
  }
  // The shared expert's MLP width, 0 without one.
  std::int64_t shared_intermediate_size() const {
    return shared_expert_intermediate_size > 0 ? shared_expert_intermediate_size
                                               : n_shared_experts * expert_intermediate_size();
  }

  // Copy with HF defaults filled in (kv heads, head_dim). Does not validate.
  ModelSpec resolved() const;

  // Throws SpecError naming the first offending key.
  void validate() const;
};

std::string_view norm_name(NormKind kind);
std::string_view mlp_name(MlpKind kind);
std::string_view norm_placement_name(NormPlacement placement);
std::string_view hf_names_name(HfNames names);
std::string_view qk_norm_shape_name(QkNormShape shape);
std::string_view position_embedding_name(PositionEmbedding kind);

}  // namespace ckpt::workloads
