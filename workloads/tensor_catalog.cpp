#include "workloads/tensor_catalog.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "workloads/checked_math.hpp"
#include "workloads/tensor_names.hpp"

namespace ckpt::workloads {
namespace {

using Shape = std::vector<std::int64_t>;

class CatalogBuilder {
 public:
  CatalogBuilder(const ModelSpec& model, Naming naming)
      : m_(model), megatron_(naming == Naming::megatron), names_(tensor_names(model, naming)) {}

  // One layer: its blocks, then the tensors the family adds (ModelSpec::layer_extras).
  std::vector<TensorDef> layer(const LayerKind& kind) const {
    std::vector<TensorDef> out = layer_blocks(kind);
    for (const ExtraTensor& extra : m_.layer_extras)
      add(out, names_.layer + extra.name, extra.shape, TpSplit::replicated);
    return out;
  }

  // One layer with its norms where the model's placement puts them (NormPlacement).
  std::vector<TensorDef> layer_blocks(const LayerKind& kind) const {
    std::vector<TensorDef> out;
    const std::vector<std::string>& norms = names_.layer_norms;
    const auto norms_from = [&](std::size_t first, std::size_t count) {
      for (std::size_t i = first; i < first + count && i < norms.size(); ++i)
        norm(out, names_.layer + norms[i]);
    };
    if (kind.shared_block) {
      shared_block_layer(out, kind);
      return out;
    }
    if (kind.attention + kind.ssm + kind.mlp == 1) {  // one block: a norm and the block
      norms_from(0, 1);
      if (kind.ssm) state_space_mixer(out);
      if (kind.attention) attention(out);
      if (kind.mlp) feed_forward(out, kind.moe);
      return out;
    }
    if (kind.ssm || m_.is_hybrid()) {  // hybrid: a norm, the mixer(s), a norm, the MLP
      norms_from(0, 1);
      if (kind.ssm) state_space_mixer(out);
      if (kind.attention) attention(out);
      norms_from(1, 1);
      feed_forward(out, kind.moe);
      return out;
    }
    switch (m_.norm_placement) {
      case NormPlacement::pre:
        norms_from(0, 1);
        break;
      case NormPlacement::parallel:
        norms_from(0, 1);
        break;
      case NormPlacement::parallel_pair:
        norms_from(0, 2);
        break;
      case NormPlacement::sandwich:
        norms_from(0, 1);
        break;
      case NormPlacement::post:
        break;
    }
    if (m_.uses_mla()) {
      latent_attention(out, kind.indexer);
    } else if (!m_.attention_in_extras) {
      attention(out, "", !kind.kv_shared);
    }
    switch (m_.norm_placement) {
      case NormPlacement::pre:
        norms_from(1, 1);
        break;
      case NormPlacement::sandwich:
        norms_from(1, 2);
        break;
      case NormPlacement::post:
        norms_from(0, 1);
        break;
      case NormPlacement::parallel:
      case NormPlacement::parallel_pair:
        break;
    }
    feed_forward(out, kind.moe);
    if (m_.norm_placement == NormPlacement::sandwich) norms_from(3, 1);
    if (m_.norm_placement == NormPlacement::post) norms_from(1, 1);
    return out;
  }

  std::vector<TensorDef> expert() const {
    std::vector<TensorDef> out;
    if (m_.fused_experts() && !megatron_) {
      fused_experts(out);
      return out;
    }
    // mlp_bias stops at the routed experts (transformers' DeepSeek-V2 experts have none).
    mlp(out, names_.layer + names_.expert, m_.expert_intermediate_size(), names_.expert_gate,
        names_.expert_up, names_.expert_down, m_.linear_bias || m_.expert_bias);
    return out;
  }

  std::vector<TensorDef> first_stage(std::int64_t padded_vocab) const {
    std::vector<TensorDef> out;
    add(out, names_.embedding_weight, {padded_vocab, m_.hidden_size}, TpSplit::dim0);
    if (m_.position_embedding == PositionEmbedding::learned) {
      add(out, names_.position_embedding_weight,
          {m_.max_position_embeddings + m_.position_offset, m_.hidden_size}, TpSplit::replicated);
    }
    if (m_.type_vocab_size > 0) {
      add(out, names_.token_type_embedding_weight, {m_.type_vocab_size, m_.hidden_size},
          TpSplit::replicated);
    }
    if (m_.embedding_norm) layer_norm_with_bias(out, names_.embedding_norm);
    for (const ExtraTensor& extra : m_.first_stage_extras)
      add(out, extra.name, extra.shape, TpSplit::replicated);
    return out;
  }

  std::vector<TensorDef> last_stage(std::int64_t padded_vocab) const {
    std::vector<TensorDef> out;
    const std::int64_t rows = m_.output_vocab_size > 0 ? m_.output_vocab_size : padded_vocab;
    if (m_.final_norm) norm(out, names_.final_norm);
    for (const ExtraTensor& extra : m_.last_stage_extras)
      add(out, extra.name, extra.shape, TpSplit::replicated);
    if (m_.pooler)
      linear(out, names_.pooler, m_.hidden_size, m_.hidden_size, TpSplit::replicated, true);
    if (m_.lm_head_transform) {
      linear(out, names_.head_dense, m_.hidden_size, m_.hidden_size, TpSplit::replicated, true);
      layer_norm_with_bias(out, names_.head_norm);
    }
    if (!m_.tie_word_embeddings)
      add(out, names_.output + ".weight", {rows, m_.hidden_size}, TpSplit::dim0);
    const bool own_bias = !names_.output_bias_weight.empty();
    if (m_.lm_head_bias)
      add(out, own_bias ? names_.output_bias_weight : names_.output + ".bias", {rows},
          TpSplit::dim0);
    // BERT's head ties the output layer's bias to its own only where the weights are tied.
    if (m_.lm_head_bias && own_bias && !m_.tie_word_embeddings)
      add(out, names_.output + ".bias", {rows}, TpSplit::dim0);
    return out;
  }

 private:
  static void add(std::vector<TensorDef>& out, std::string name, Shape shape, TpSplit split) {
    out.push_back(TensorDef{std::move(name), std::move(shape), split});
  }

  void norm(std::vector<TensorDef>& out, const std::string& prefix) const {
    if (m_.norm == NormKind::none) return;
    add(out, prefix + ".weight", {m_.hidden_size}, TpSplit::replicated);
    if (m_.norm == NormKind::layernorm)
      add(out, prefix + ".bias", {m_.hidden_size}, TpSplit::replicated);
  }

  void layer_norm_with_bias(std::vector<TensorDef>& out, const std::string& prefix) const {
    add(out, prefix + ".weight", {m_.hidden_size}, TpSplit::replicated);
    add(out, prefix + ".bias", {m_.hidden_size}, TpSplit::replicated);
  }

  // A linear layer [rows, cols]; column-parallel layers split rows and their bias, row-parallel
  // layers split columns and replicate their bias. GPT-2's Conv1D stores the weight as
  // [cols, rows], so the same cuts fall on the other dimension.
  void linear(std::vector<TensorDef>& out, const std::string& prefix, std::int64_t rows,
              std::int64_t cols, TpSplit split, bool bias) const {
    if (m_.conv1d_weights && !megatron_) {
      const TpSplit swapped = split == TpSplit::dim0   ? TpSplit::dim1
                              : split == TpSplit::dim1 ? TpSplit::dim0
                                                       : split;
      add(out, prefix + ".weight", {cols, rows}, swapped);
    } else {
      add(out, prefix + ".weight", {rows, cols}, split);
      out.back().linear = true;  // Conv1D above is no nn.Linear: FP8 quantization leaves it
    }
    if (bias)
      add(out, prefix + ".bias", {rows},
          split == TpSplit::dim0 ? TpSplit::dim0 : TpSplit::replicated);
  }

  // All experts of a layer in one tensor per matrix kind, the experts in dim 0 (EP cuts it);
  // TP cuts the expert width f as it does in a per-expert gate/up (column) or down (row).
  void fused_experts(std::vector<TensorDef>& out) const {
    const std::string p = names_.layer + names_.fused_experts;
    const std::int64_t e = m_.num_local_experts;
    const std::int64_t h = m_.hidden_size;
    const std::int64_t f = m_.expert_intermediate_size();
    const auto fused = [&](std::string name, Shape shape, TpSplit split) {
      const bool bias = name.ends_with("_bias");
      out.push_back(TensorDef{std::move(name), std::move(shape), split, true, !bias});
    };
    if (m_.expert_storage == ExpertStorage::fused_rows) {
      // TP cannot cut f inside each expert's block of rows as one box; it cuts h instead,
      // which gives every rank the same bytes.
      for (const char* name : {"w1", "v1", "w2"}) fused(p + name, {e * f, h}, TpSplit::dim1);
      return;
    }
    if (m_.expert_storage == ExpertStorage::fused_in_out) {
      fused(p + names_.fused_in, {e, 2 * f, h}, TpSplit::dim1);
      fused(p + names_.fused_out, {e, h, f}, TpSplit::dim2);
      return;
    }
    fused(p + names_.fused_in, {e, h, 2 * f}, TpSplit::dim2);
    if (m_.expert_bias) fused(p + names_.fused_in + "_bias", {e, 2 * f}, TpSplit::dim1);
    fused(p + names_.fused_out, {e, f, h}, TpSplit::dim1);
    if (m_.expert_bias) fused(p + names_.fused_out + "_bias", {e, h}, TpSplit::replicated);
  }

  // A layer that runs an attention + MLP block (its tensors where the layer holds them,
  // kind.attention: the first layer of each shared block when the blocks are tied, each one when
  // untied; under its norms: one as wide as attention's input, one before the MLP), then a
  // linear of its own and a Mamba layer (a norm and the mixer).
  void shared_block_layer(std::vector<TensorDef>& out, const LayerKind& kind) const {
    const std::string& block = names_.shared_block;
    if (kind.attention) {
      const std::int64_t in =
          m_.attention_input_size > 0 ? m_.attention_input_size : m_.hidden_size;
      add(out, names_.layer + block + names_.layer_norms.at(0) + ".weight", {in},
          TpSplit::replicated);
      attention(out, block);
      const std::string attn = names_.layer + block + names_.attention;
      // transformers sizes all three [in, in] whatever the heads.
      if (m_.shared_attention_adapters) {
        for (const char* list :
             {"linear_q_adapter_list.", "linear_k_adapter_list.", "linear_v_adapter_list."})
          block_adapters(out, attn + list, kind, in, in);
      }
      norm(out, names_.layer + block + names_.layer_norms.at(1));
      const std::string ffn = names_.layer + block + names_.mlp;
      mlp(out, ffn, m_.intermediate_size, names_.gate, names_.up, names_.down);
      block_adapters(out, ffn + names_.gate_up + "_adapter_list.", kind, m_.hidden_size,
                     2 * m_.intermediate_size);
    }
    linear(out, names_.layer + names_.shared_block_linear, m_.hidden_size, m_.hidden_size,
           TpSplit::replicated, false);
    norm(out, names_.layer + names_.shared_block_mamba + names_.layer_norms.at(0));
    state_space_mixer(out, names_.shared_block_mamba);
  }

  // The low-rank adapters a shared block holds for the hybrid layers that run it: each a
  // Sequential of [rank, in] and [out, rank], at the hybrid layer's place in the block's list
  // (the others are empty). Small; replicated across TP.
  void block_adapters(std::vector<TensorDef>& out, const std::string& list, const LayerKind& kind,
                      std::int64_t in, std::int64_t rows) const {
    const std::int64_t rank = m_.shared_block_adapter_rank;
    if (rank == 0) return;
    const auto hybrid_layers = std::count_if(m_.layer_kinds.begin(), m_.layer_kinds.end(),
                                             [](const LayerKind& k) { return k.shared_block; });
    for (std::int64_t i = kind.shared_block_id; i < hybrid_layers; i += m_.shared_blocks) {
      const std::string p = list + std::to_string(i) + ".";
      linear(out, p + "0", rank, in, TpSplit::replicated, false);
      linear(out, p + "1", rows, rank, TpSplit::replicated, false);
    }
  }

  // Mamba with heads: the channels of d_inner fall into heads of d_inner / heads, each with its
  // own x_proj [dt_rank + 2N, head width], dt_proj [head width, dt_rank] and bias, A [head width,
  // N] and D; the conv and the projections in and out as in Mamba. TP splits the heads.
  void mamba_per_head(std::vector<TensorDef>& out, const std::string& p) const {
    const std::int64_t d = m_.ssm_inner_size;
    const std::int64_t heads = m_.ssm_heads;
    const std::int64_t width = d / heads;
    const std::int64_t rank = m_.ssm_dt_rank;
    add(out, p + "conv1d.weight", {d, 1, m_.ssm_conv_kernel}, TpSplit::dim0);
    if (m_.ssm_conv_bias) add(out, p + "conv1d.bias", {d}, TpSplit::dim0);
    linear(out, p + "in_proj", 2 * d, m_.hidden_size, TpSplit::dim0, m_.ssm_proj_bias);
    add(out, p + "x_proj_weight", {heads, rank + 2 * m_.ssm_state_size, width}, TpSplit::dim0);
    add(out, p + "dt_proj_weight", {heads, width, rank}, TpSplit::dim0);
    add(out, p + "dt_proj_bias", {heads, width}, TpSplit::dim0);
    add(out, p + "A_log", {heads, width, m_.ssm_state_size}, TpSplit::dim0);
    add(out, p + "D", {heads, width}, TpSplit::dim0);
    linear(out, p + "out_proj", m_.hidden_size, d, TpSplit::dim1, m_.ssm_out_bias);
  }

  // Mamba: in_proj makes x and z (2·d_inner), a depthwise conv over x, x_proj the time step
  // (dt_rank) and B, C (N each), dt_proj back to d_inner, A [d_inner, N] and D per channel.
  // Mamba-2: in_proj makes z, x, B, C (groups × N each) and one dt per head; the conv runs over
  // x, B and C; A, D and the dt bias are per head; a gated RMSNorm over d_inner. Everything
  // sized by d_inner, heads or groups is split by TP (as Megatron-core's Mamba mixer does).
  void state_space_mixer(std::vector<TensorDef>& out, const std::string& base = "") const {
    if (m_.mixer == Mixer::gated_delta_net) {
      gated_delta_net(out);
      return;
    }
    if (m_.mixer == Mixer::short_conv) {
      short_conv(out);
      return;
    }
    if (m_.mixer == Mixer::lightning) {
      lightning_attention(out);
      return;
    }
    const std::string p = names_.layer + base + names_.ssm;
    if (m_.mixer == Mixer::mamba && m_.ssm_heads > 0) {
      mamba_per_head(out, p);
      return;
    }
    const std::int64_t d = m_.ssm_inner_size;
    const std::int64_t n = m_.ssm_state_size;
    const bool v2 = m_.mixer == Mixer::mamba2;
    const std::int64_t conv = v2 ? d + 2 * m_.ssm_groups * n : d;
    if (v2) {
      add(out, p + "dt_bias", {m_.ssm_heads}, TpSplit::dim0);
      add(out, p + "A_log", {m_.ssm_heads}, TpSplit::dim0);
      add(out, p + "D", {m_.ssm_heads}, TpSplit::dim0);
    } else {
      add(out, p + "A_log", {d, n}, TpSplit::dim0);
      add(out, p + "D", {d}, TpSplit::dim0);
    }
    add(out, p + "conv1d.weight", {conv, 1, m_.ssm_conv_kernel}, TpSplit::dim0);
    if (m_.ssm_conv_bias) add(out, p + "conv1d.bias", {conv}, TpSplit::dim0);
    linear(out, p + "in_proj", v2 ? conv + d + m_.ssm_heads : 2 * d, m_.hidden_size, TpSplit::dim0,
           m_.ssm_proj_bias);
    if (v2) {
      if (m_.ssm_gated_norm) add(out, p + "norm.weight", {d}, TpSplit::dim0);
    } else {
      linear(out, p + "x_proj", m_.ssm_dt_rank + 2 * n, d, TpSplit::dim1, false);
      linear(out, p + "dt_proj", d, m_.ssm_dt_rank, TpSplit::dim0, true);
    }
    if (m_.ssm_inner_norms) {
      add(out, p + "dt_layernorm.weight", {m_.ssm_dt_rank}, TpSplit::replicated);
      add(out, p + "b_layernorm.weight", {n}, TpSplit::replicated);
      add(out, p + "c_layernorm.weight", {n}, TpSplit::replicated);
    }
    linear(out, p + "out_proj", m_.hidden_size, d, TpSplit::dim1, m_.ssm_out_bias);
  }

  // The gated delta rule (Qwen3-Next's linear attention): in_proj_qkvz makes the keys and
  // queries (groups × N each), the values and the output gate (d_inner each), in_proj_ba one
  // beta and one alpha per value head; a bias-free depthwise conv over q, k and v; per-head
  // A_log and dt_bias; a gated RMSNorm of one value head's width that every head shares.
  void gated_delta_net(std::vector<TensorDef>& out) const {
    const std::string p = names_.layer + names_.ssm;
    const std::int64_t d = m_.ssm_inner_size;
    const std::int64_t conv = 2 * m_.ssm_groups * m_.ssm_state_size + d;
    add(out, p + "dt_bias", {m_.ssm_heads}, TpSplit::dim0);
    add(out, p + "A_log", {m_.ssm_heads}, TpSplit::dim0);
    add(out, p + "conv1d.weight", {conv, 1, m_.ssm_conv_kernel}, TpSplit::dim0);
    if (m_.ssm_split_projections) {
      linear(out, p + "in_proj_qkv", conv, m_.hidden_size, TpSplit::dim0, false);
      linear(out, p + "in_proj_z", d, m_.hidden_size, TpSplit::dim0, false);
      linear(out, p + "in_proj_b", m_.ssm_heads, m_.hidden_size, TpSplit::dim0, false);
      linear(out, p + "in_proj_a", m_.ssm_heads, m_.hidden_size, TpSplit::dim0, false);
    } else {
      linear(out, p + "in_proj_qkvz", conv + d, m_.hidden_size, TpSplit::dim0, false);
      linear(out, p + "in_proj_ba", 2 * m_.ssm_heads, m_.hidden_size, TpSplit::dim0, false);
    }
    add(out, p + "norm.weight", {d / m_.ssm_heads}, TpSplit::replicated);
    linear(out, p + "out_proj", m_.hidden_size, d, TpSplit::dim1, false);
  }

  // LFM2's short convolution: in_proj makes three gates of h, a depthwise conv over h, out_proj;
  // conv_bias puts a bias on all three.
  void short_conv(std::vector<TensorDef>& out) const {
    const std::string p = names_.layer + names_.ssm;
    const std::int64_t h = m_.hidden_size;
    add(out, p + "conv.weight", {h, 1, m_.ssm_conv_kernel}, TpSplit::dim0);
    if (m_.ssm_conv_bias) add(out, p + "conv.bias", {h}, TpSplit::dim0);
    linear(out, p + "in_proj", 3 * h, h, TpSplit::dim0, m_.ssm_conv_bias);
    linear(out, p + "out_proj", h, h, TpSplit::dim1, m_.ssm_conv_bias);
  }

  // MiniMax's lightning attention: a bias-free fused qkv_proj, an RMSNorm over every head's
  // output, an output gate and out_proj, and the decay factors it saves as buffers, per head and
  // per position of a block (its block size in ssm_state_size); split by heads like attention.
  void lightning_attention(std::vector<TensorDef>& out) const {
    const std::string p = names_.layer + names_.ssm;
    const std::int64_t width = m_.num_attention_heads * m_.head_dim;
    const std::int64_t heads = m_.num_attention_heads;
    const std::int64_t block = m_.ssm_state_size;
    add(out, p + "slope_rate", {heads, 1, 1}, TpSplit::dim0);
    add(out, p + "query_decay", {heads, block, 1}, TpSplit::dim0);
    add(out, p + "key_decay", {heads, block, 1}, TpSplit::dim0);
    add(out, p + "diagonal_decay", {1, heads, block, block}, TpSplit::dim1);
    add(out, p + "norm.weight", {width}, TpSplit::dim0);
    linear(out, p + "qkv_proj", 3 * width, m_.hidden_size, TpSplit::dim0, false);
    linear(out, p + "out_proj", m_.hidden_size, width, TpSplit::dim1, false);
    linear(out, p + "output_gate", width, m_.hidden_size, TpSplit::dim0, false);
  }

  // Fused q/k/v (Megatron, and HF where fused_qkv) is one column-parallel matrix split along
  // its rows, like Megatron's linear_qkv.
  // keys_and_values false: a layer that reuses another's (no k/v projections, no k norm).
  void attention(std::vector<TensorDef>& out, const std::string& base = "",
                 bool keys_and_values = true) const {
    const std::string p = names_.layer + base + names_.attention;
    const std::int64_t in = m_.attention_input_size > 0 ? m_.attention_input_size : m_.hidden_size;
    const std::int64_t q = m_.num_attention_heads * m_.head_dim;
    const std::int64_t kv = keys_and_values ? m_.num_key_value_heads * m_.head_dim : 0;
    const std::int64_t q_rows = m_.attention_gate ? 2 * q : q;
    const bool qkv_bias = m_.qkv_bias || m_.linear_bias;
    if (megatron_ || m_.fused_qkv) {
      linear(out, p + names_.qkv, q_rows + 2 * kv, in, TpSplit::dim0, qkv_bias);
    } else {
      linear(out, p + names_.q, q_rows, in, TpSplit::dim0, qkv_bias);
      if (keys_and_values) {
        linear(out, p + names_.k, kv, in, TpSplit::dim0, qkv_bias);
        linear(out, p + names_.v, kv, in, TpSplit::dim0, qkv_bias);
      }
    }
    if (m_.qk_norm) {
      // Split with the heads, except a head_dim vector, which every head shares.
      const QkNormShape shape = megatron_ ? QkNormShape::all_heads : m_.qk_norm_shape;
      const auto norm_shape = [&](std::int64_t heads) {
        switch (shape) {
          case QkNormShape::per_head:
            return Shape{heads, m_.head_dim};
          case QkNormShape::head_dim:
            return Shape{m_.head_dim};
          case QkNormShape::all_heads:
            break;
        }
        return Shape{heads * m_.head_dim};
      };
      const TpSplit split = shape == QkNormShape::head_dim ? TpSplit::replicated : TpSplit::dim0;
      // A LayerNorm carries a bias beside its weight (Persimmon's, Phi's q/k LayerNorms).
      for (const auto& [name, heads] : {std::pair{names_.q_norm, m_.num_attention_heads},
                                        std::pair{names_.k_norm, m_.num_key_value_heads}}) {
        if (!keys_and_values && name == names_.k_norm) continue;
        add(out, p + name + ".weight", norm_shape(heads), split);
        if (m_.norm == NormKind::layernorm) add(out, p + name + ".bias", norm_shape(heads), split);
      }
    }
    if (m_.attention_gate_proj)
      linear(out, p + "gate_proj", q, m_.hidden_size, TpSplit::dim0, false);
    linear(out, p + names_.o, m_.hidden_size, q, TpSplit::dim1, m_.o_bias || m_.linear_bias);
    if (m_.sub_norms) add(out, p + "attn_sub_norm.weight", {m_.hidden_size}, TpSplit::replicated);
    if (m_.attention_lambdas) {
      for (const char* name : {"lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"})
        add(out, p + name, {m_.head_dim}, TpSplit::replicated);
    }
    if (m_.attention_sinks)
      add(out, p + names_.sinks_weight, {m_.num_attention_heads}, TpSplit::dim0);
  }

  // Multi-head latent attention: the down-projections are small and replicated across TP
  // (Megatron's "duplicated" linears); the up-projections and output are split by heads.
  // attention_bias (qkv_bias, o_bias) reaches the down-projections and the output only.
  void latent_attention(std::vector<TensorDef>& out, bool indexer) const {
    const std::string p = names_.layer + names_.attention;
    const bool hf = !megatron_;
    const std::int64_t h = m_.hidden_size;
    const std::int64_t heads = m_.num_attention_heads;
    const std::int64_t q_head = m_.qk_nope_head_dim + m_.qk_rope_head_dim;
    if (m_.q_lora_rank > 0) {
      linear(out, p + (hf ? "q_a_proj" : "linear_q_down_proj"), m_.q_lora_rank, h,
             TpSplit::replicated, m_.qkv_bias);
      add(out, p + (hf ? "q_a_layernorm.weight" : "linear_q_up_proj.layer_norm_weight"),
          {m_.q_lora_rank}, TpSplit::replicated);
      linear(out, p + (hf ? "q_b_proj" : "linear_q_up_proj"), heads * q_head, m_.q_lora_rank,
             TpSplit::dim0, false);
    } else {
      linear(out, p + (hf ? "q_proj" : "linear_q_proj"), heads * q_head, h, TpSplit::dim0, false);
    }
    linear(out, p + (hf ? "kv_a_proj_with_mqa" : "linear_kv_down_proj"),
           m_.kv_lora_rank + m_.qk_rope_head_dim, h, TpSplit::replicated, m_.qkv_bias);
    add(out, p + (hf ? "kv_a_layernorm.weight" : "linear_kv_up_proj.layer_norm_weight"),
        {m_.kv_lora_rank}, TpSplit::replicated);
    linear(out, p + (hf ? "kv_b_proj" : "linear_kv_up_proj"),
           heads * (m_.qk_nope_head_dim + m_.v_head_dim), m_.kv_lora_rank, TpSplit::dim0, false);
    linear(out, p + (hf ? "o_proj" : "linear_proj"), h, heads * m_.v_head_dim, TpSplit::dim1,
           m_.o_bias);
    if (indexer) sparse_indexer(out, p + names_.indexer);
  }

  // DeepSeek Sparse Attention's indexer: a few small heads that pick the tokens each query
  // attends to. Small and replicated across TP, like the latent attention's down-projections.
  void sparse_indexer(std::vector<TensorDef>& out, const std::string& p) const {
    const bool hf = !megatron_;
    const std::int64_t heads = m_.indexer_heads;
    const std::int64_t dim = m_.indexer_head_dim;
    linear(out, p + (hf ? "wq_b" : "linear_wq_b"), heads * dim, m_.q_lora_rank, TpSplit::replicated,
           false);
    linear(out, p + (hf ? "wk" : "linear_wk"), dim, m_.hidden_size, TpSplit::replicated, false);
    add(out, p + "k_norm.weight", {dim}, TpSplit::replicated);
    add(out, p + "k_norm.bias", {dim}, TpSplit::replicated);
    linear(out, p + (hf ? "weights_proj" : "linear_weights_proj"), heads, m_.hidden_size,
           TpSplit::replicated, false);
  }

  void feed_forward(std::vector<TensorDef>& out, bool moe) const {
    if (moe) {
      moe_block(out);
    } else {
      mlp(out, names_.layer + names_.mlp, m_.intermediate_size, names_.gate, names_.up,
          names_.down);
      if (m_.sub_norms) {
        add(out, names_.layer + names_.mlp + "ffn_sub_norm.weight", {m_.intermediate_size},
            TpSplit::replicated);
      }
      if (m_.xielu_activation) {
        const std::string act = names_.layer + names_.mlp + "act_fn.";
        add(out, act + "alpha_p", {1}, TpSplit::replicated);
        add(out, act + "alpha_n", {1}, TpSplit::replicated);
        add(out, act + "beta", {}, TpSplit::replicated);
        add(out, act + "eps", {}, TpSplit::replicated);
      }
    }
  }

  // Router, optional routing bias, shared expert(s) and their gate; the routed experts are
  // expert().
  void moe_block(std::vector<TensorDef>& out) const {
    add(out, names_.layer + names_.router_weight, {m_.num_local_experts, m_.hidden_size},
        TpSplit::replicated);
    if (m_.moe_router_bias) {
      const Shape shape =
          m_.router_bias_row ? Shape{1, m_.num_local_experts} : Shape{m_.num_local_experts};
      add(out, names_.layer + names_.router_bias_weight, shape, TpSplit::replicated);
    }
    if (m_.shared_intermediate_size() > 0) {
      mlp(out, names_.layer + names_.shared_experts, m_.shared_intermediate_size(), names_.gate,
          names_.up, names_.down);
    }
    if (m_.shared_expert_gate) {
      add(out, names_.layer + names_.shared_expert_gate_weight, {1, m_.hidden_size},
          TpSplit::replicated);
    }
    if (m_.moe_output_norm) norm(out, names_.layer + names_.moe_output_norm);
  }

  // Gated: gate and up column-parallel (fused into one matrix by Megatron, and by HF where
  // fused_gate_up, split along its rows), down row-parallel. Plain: up and down.
  void mlp(std::vector<TensorDef>& out, const std::string& p, std::int64_t ffn,
           const std::string& gate, const std::string& up, const std::string& down) const {
    mlp(out, p, ffn, gate, up, down, m_.linear_bias || m_.mlp_bias);
  }
  void mlp(std::vector<TensorDef>& out, const std::string& p, std::int64_t ffn,
           const std::string& gate, const std::string& up, const std::string& down,
           bool bias) const {
    const std::int64_t h = m_.hidden_size;
    const bool gated = m_.mlp == MlpKind::gated;
    if (megatron_) {
      linear(out, p + names_.gate_up, gated ? 2 * ffn : ffn, h, TpSplit::dim0, bias);
      linear(out, p + down, h, ffn, TpSplit::dim1, bias);
      return;
    }
    if (gated && m_.fused_gate_up) {
      linear(out, p + names_.gate_up, 2 * ffn, h, TpSplit::dim0, bias);
    } else {
      if (gated) linear(out, p + gate, ffn, h, TpSplit::dim0, bias);
      linear(out, p + up, ffn, h, TpSplit::dim0, bias);
    }
    linear(out, p + down, h, ffn, TpSplit::dim1, bias);
  }

  const ModelSpec& m_;
  bool megatron_;
  NameScheme names_;
};

std::int64_t sum_numel(const std::vector<TensorDef>& defs) {
  return std::accumulate(
      defs.begin(), defs.end(), std::int64_t{0}, [](std::int64_t acc, const TensorDef& d) {
        return checked_add(acc, d.numel(), "hidden_size", "a layer's element count");
      });
}

void replace_all(std::string& text, std::string_view token, std::int64_t value) {
  const std::string replacement = std::to_string(value);
  for (auto pos = text.find(token); pos != std::string::npos;
       pos = text.find(token, pos + replacement.size())) {
    text.replace(pos, token.size(), replacement);
  }
}

}  // namespace

std::size_t split_dim(TpSplit split) {
  switch (split) {
    case TpSplit::dim1:
      return 1;
    case TpSplit::dim2:
      return 2;
    case TpSplit::replicated:
    case TpSplit::dim0:
      break;
  }
  return 0;
}

std::int64_t TensorDef::numel() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1},
                         [](std::int64_t acc, std::int64_t d) {
                           return checked_mul(acc, d, "hidden_size", "a tensor's element count");
                         });
}

std::int64_t TensorCatalog::parameter_count(const ModelSpec& model) const {
  const char* what = "the parameter count";
  const std::int64_t copies = fused_experts ? 1 : model.num_local_experts;
  const std::int64_t experts = checked_mul(copies, sum_numel(expert), "num_local_experts", what);
  std::int64_t total =
      checked_add(sum_numel(first_stage), sum_numel(last_stage), "num_hidden_layers", what);
  std::vector<std::int64_t> per_template;
  for (const LayerTemplate& t : layer_templates) {
    per_template.push_back(
        checked_add(sum_numel(t.tensors), t.kind.moe ? experts : 0, "num_local_experts", what));
  }
  for (const std::size_t index : template_of_layer)
    total = checked_add(total, per_template[index], "num_hidden_layers", what);
  return total;
}

TensorCatalog build_tensor_catalog(const ModelSpec& model, Naming naming,
                                   std::int64_t padded_vocab) {
  const CatalogBuilder builder(model, naming);
  TensorCatalog catalog;
  catalog.first_stage = builder.first_stage(padded_vocab);
  for (std::int64_t layer = 0; layer < model.num_hidden_layers; ++layer) {
    const LayerKind kind = model.layer_kind(layer);
    const auto known = std::find_if(catalog.layer_templates.begin(), catalog.layer_templates.end(),
                                    [&](const LayerTemplate& t) { return t.kind == kind; });
    catalog.template_of_layer.push_back(
        static_cast<std::size_t>(known - catalog.layer_templates.begin()));
    if (known == catalog.layer_templates.end())
      catalog.layer_templates.push_back(LayerTemplate{kind, builder.layer(kind)});
  }
  if (model.is_moe()) {
    catalog.expert = builder.expert();
    catalog.fused_experts = model.fused_experts() && naming == Naming::hf;
  }
  catalog.last_stage = builder.last_stage(padded_vocab);
  return catalog;
}

std::string format_tensor_name(std::string_view pattern, std::int64_t layer, std::int64_t expert) {
  std::string name(pattern);
  if (layer >= 0) replace_all(name, "{layer}", layer);
  if (expert >= 0) replace_all(name, "{expert}", expert);
  return name;
}

}  // namespace ckpt::workloads
