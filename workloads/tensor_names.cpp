#include "workloads/tensor_names.hpp"

#include <utility>

namespace ckpt::workloads {
namespace {

// The norms of one layer, in order.
std::vector<std::string> norm_names(NormPlacement placement, bool megatron, HfNames family) {
  if (megatron) {
    switch (placement) {
      case NormPlacement::pre:
      case NormPlacement::parallel_pair:
        return {"input_layernorm", "pre_mlp_layernorm"};
      case NormPlacement::parallel:
        return {"input_layernorm"};
      case NormPlacement::sandwich:
        return {"input_layernorm", "post_self_attn_layernorm", "pre_mlp_layernorm",
                "post_mlp_layernorm"};
      case NormPlacement::post:
        return {"post_self_attn_layernorm", "post_mlp_layernorm"};
    }
  }
  switch (placement) {
    case NormPlacement::pre:
      if (family == HfNames::vaultgemma) return {"input_layernorm", "pre_feedforward_layernorm"};
      if (family == HfNames::apertus) return {"attention_layernorm", "feedforward_layernorm"};
      return {"input_layernorm", "post_attention_layernorm"};
    case NormPlacement::parallel_pair:
      if (family == HfNames::falcon) return {"ln_attn", "ln_mlp"};
      return {"input_layernorm", "post_attention_layernorm"};
    case NormPlacement::parallel:
      return {"input_layernorm"};
    case NormPlacement::sandwich:
      if (family == HfNames::glm4) {
        return {"input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm",
                "post_mlp_layernorm"};
      }
      if (family == HfNames::afmoe)
        return {"input_layernorm", "post_attention_layernorm", "pre_mlp_layernorm",
                "post_mlp_layernorm"};
      if (family == HfNames::hyperclovax)  // Peri-LN: a norm after each block's output
        return {"input_layernorm", "post_norm1", "post_attention_layernorm", "post_norm2"};
      return {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
              "post_feedforward_layernorm"};
    case NormPlacement::post:
      return {"post_attention_layernorm", "post_feedforward_layernorm"};
  }
  return {};
}

NameScheme megatron_names(const ModelSpec& m) {
  NameScheme n;
  n.layer = "decoder.layers.{layer}.";
  n.layer_norms = norm_names(m.norm_placement, true, m.hf_names);
  n.attention = "self_attention.";
  n.qkv = "linear_qkv";
  n.o = "linear_proj";
  n.q_norm = "q_layernorm";
  n.k_norm = "k_layernorm";
  n.mlp = "mlp.";
  n.gate_up = "linear_fc1";
  n.up = "linear_fc1";
  n.down = "linear_fc2";
  n.expert = "mlp.experts.local_experts.{expert}.";
  n.expert_gate = n.expert_up = "linear_fc1";
  n.expert_down = "linear_fc2";
  n.gate = "linear_fc1";
  n.shared_experts = "mlp.shared_experts.";
  n.shared_expert_gate_weight = "mlp.shared_experts.gate_weight";
  n.router_weight = "mlp.router.weight";
  n.router_bias_weight = "mlp.router.expert_bias";
  n.moe_output_norm = "mlp.post_mlp_layernorm";
  n.ssm = "mixer.";
  n.sinks_weight = "core_attention.softmax_offset";
  n.embedding_weight = "embedding.word_embeddings.weight";
  n.position_embedding_weight = "embedding.position_embeddings.weight";
  n.embedding_norm = "embedding.word_embeddings_layernorm";
  n.final_norm = "decoder.final_layernorm";
  n.output = "output_layer";
  n.token_type_embedding_weight = "embedding.tokentype_embeddings.weight";
  n.head_dense = "lm_head.dense";  // Megatron-core's BERT head
  n.head_norm = "lm_head.layer_norm";
  n.pooler = "pooler.dense";
  n.indexer = "indexer.";
  n.shared_block = "shared_block.";
  n.shared_block_linear = "shared_block_linear";
  n.shared_block_mamba = "mamba_layer.";
  return n;
}

// Llama's names, which most families share; the others differ from it in the parts set below.
NameScheme llama_names(const ModelSpec& m) {
  NameScheme n;
  n.layer = "model.layers.{layer}.";
  n.layer_norms = norm_names(m.norm_placement, false, m.hf_names);
  n.attention = "self_attn.";
  n.q = "q_proj";
  n.k = "k_proj";
  n.v = "v_proj";
  n.qkv = "qkv_proj";
  n.o = "o_proj";
  n.q_norm = "q_norm";
  n.k_norm = "k_norm";
  n.mlp = "mlp.";
  n.gate = "gate_proj";
  n.up = "up_proj";
  n.down = "down_proj";
  n.gate_up = "gate_up_proj";
  // Mixtral calls its MoE block "block_sparse_moe" and the expert matrices w1/w3/w2;
  // DeepSeek and Qwen-MoE use "mlp" and Llama's names (HfNames::deepseek says so outright).
  const bool mixtral = m.is_moe() &&
                       (m.hf_names == HfNames::llama || m.hf_names == HfNames::minimax_m2) &&
                       m.n_shared_experts == 0 && m.first_k_dense_replace == 0;
  const std::string moe = mixtral ? "block_sparse_moe." : "mlp.";
  n.expert = moe + "experts.{expert}.";
  n.expert_gate = mixtral ? "w1" : "gate_proj";
  n.expert_up = mixtral ? "w3" : "up_proj";
  n.expert_down = mixtral ? "w2" : "down_proj";
  n.shared_experts = "mlp.shared_experts.";
  n.router_weight = moe + "gate.weight";
  n.router_bias_weight = moe + "gate.e_score_correction_bias";
  n.moe_output_norm = "post_mlp_layernorm";
  n.fused_experts = "mlp.experts.";
  n.fused_in = "gate_up_proj";
  n.fused_out = "down_proj";
  n.sinks_weight = "sinks";
  n.ssm = m.mixer == Mixer::gated_delta_net ? "linear_attn."
          : m.mixer == Mixer::lightning     ? "self_attn."
                                            : "mixer.";
  n.embedding_weight = "model.embed_tokens.weight";
  n.position_embedding_weight = "model.embed_positions.weight";
  n.embedding_norm = "model.embed_layernorm";
  n.final_norm = "model.norm";
  n.output = "lm_head";
  n.indexer = "indexer.";
  return n;
}

// GPT-2's and GPT-J's "transformer." names.
void transformer_h(NameScheme& n, std::vector<std::string> norms) {
  n.layer = "transformer.h.{layer}.";
  n.layer_norms = std::move(norms);
  n.embedding_weight = "transformer.wte.weight";
  n.position_embedding_weight = "transformer.wpe.weight";
  n.final_norm = "transformer.ln_f";
}

// BERT's encoder layer used as a decoder (post-norm, every linear biased) under the base model's
// prefix, and its prediction head: BERT's cls.predictions or RoBERTa's lm_head.
void bert_names(const ModelSpec& m, NameScheme& n) {
  const std::string base = m.hf_prefix + ".";
  n.layer = base + "encoder.layer.{layer}.";
  n.layer_norms = {"attention.output.LayerNorm", "output.LayerNorm"};
  n.attention = "attention.";
  n.q = "self.query";
  n.k = "self.key";
  n.v = "self.value";
  n.o = "output.dense";
  n.mlp = "";
  n.up = "intermediate.dense";
  n.down = "output.dense";
  n.embedding_weight = base + "embeddings.word_embeddings.weight";
  n.position_embedding_weight = base + "embeddings.position_embeddings.weight";
  n.token_type_embedding_weight = base + "embeddings.token_type_embeddings.weight";
  n.embedding_norm = base + "embeddings.LayerNorm";
  n.pooler = base + "pooler";
  // The pre-norm variants, each with a final norm of its own.
  if (m.hf_names == HfNames::megatron_bert) {
    n.layer_norms = {"attention.ln", "ln"};
    n.final_norm = base + "encoder.ln";
  }
  if (m.hf_names == HfNames::roberta_prelayernorm) {
    n.layer_norms = {"attention.LayerNorm", "intermediate.LayerNorm"};
    n.final_norm = base + "LayerNorm";
  }
  if (m.hf_names == HfNames::xlm_roberta_xl) {
    n.layer_norms = {"attention.self_attn_layer_norm", "LayerNorm"};
    n.final_norm = base + "encoder.LayerNorm";
  }
  const bool roberta = m.hf_names != HfNames::bert && m.hf_names != HfNames::megatron_bert;
  const std::string head = roberta ? "lm_head." : "cls.predictions.";
  n.output = head + "decoder";
  n.output_bias_weight = head + "bias";
  n.head_dense = head + (roberta ? "dense" : "transform.dense");
  n.head_norm = head + (roberta ? "layer_norm" : "transform.LayerNorm");
}

// The families whose names share little with Llama's (older layouts, fused experts, Mamba).
NameScheme older_hf_names(const ModelSpec& m, NameScheme n) {
  switch (m.hf_names) {
    case HfNames::gpt2:
    case HfNames::openai_gpt:  // GPT-2's layer, its own embedding names
      transformer_h(n, {"ln_1", "ln_2"});
      if (m.hf_names == HfNames::openai_gpt) {
        n.embedding_weight = "transformer.tokens_embed.weight";
        n.position_embedding_weight = "transformer.positions_embed.weight";
      }
      n.attention = "attn.";
      n.qkv = "c_attn";
      n.o = "c_proj";
      n.up = "c_fc";
      n.down = "c_proj";
      break;
    case HfNames::ctrl:  // GPT-2's prefix, a Sequential MLP
      transformer_h(n, {"layernorm1", "layernorm2"});
      n.embedding_weight = "transformer.w.weight";
      n.final_norm = "transformer.layernorm";
      n.attention = "multi_head_attention.";
      n.q = "Wq";
      n.k = "Wk";
      n.v = "Wv";
      n.o = "dense";
      n.mlp = "ffn.";
      n.up = "0";
      n.down = "2";
      break;
    case HfNames::xlm:  // one module list per part, the layer index inside each name
      n.layer = "transformer.";
      n.layer_norms = {"layer_norm1.{layer}", "layer_norm2.{layer}"};
      n.attention = "attentions.{layer}.";
      n.q = "q_lin";
      n.k = "k_lin";
      n.v = "v_lin";
      n.o = "out_lin";
      n.mlp = "ffns.{layer}.";
      n.up = "lin1";
      n.down = "lin2";
      n.embedding_weight = "transformer.embeddings.weight";
      n.position_embedding_weight = "transformer.position_embeddings.weight";
      n.token_type_embedding_weight = "transformer.lang_embeddings.weight";
      n.embedding_norm = "transformer.layer_norm_emb";
      n.output = "pred_layer.proj";
      break;
    case HfNames::gptj:
      transformer_h(n, {"ln_1"});
      n.attention = "attn.";
      n.o = "out_proj";
      n.up = "fc_in";
      n.down = "fc_out";
      break;
    case HfNames::opt:
    case HfNames::xglm:  // OPT's layer, without the decoder prefix
    case HfNames::biogpt:
      n.layer_norms = {"self_attn_layer_norm", "final_layer_norm"};
      n.o = "out_proj";
      n.mlp = "";
      n.up = "fc1";
      n.down = "fc2";
      if (m.hf_names == HfNames::xglm) {
        n.final_norm = "model.layer_norm";
        break;
      }
      if (m.hf_names == HfNames::biogpt) {
        n.layer = "biogpt.layers.{layer}.";
        n.embedding_weight = "biogpt.embed_tokens.weight";
        n.position_embedding_weight = "biogpt.embed_positions.weight";
        n.final_norm = "biogpt.layer_norm";
        n.output = "output_projection";
        break;
      }
      n.layer = "model.decoder.layers.{layer}.";
      n.embedding_weight = "model.decoder.embed_tokens.weight";
      n.position_embedding_weight = "model.decoder.embed_positions.weight";
      n.final_norm = "model.decoder.final_layer_norm";
      break;
    case HfNames::exaone:  // Llama's layer under GPT-2's names
      transformer_h(n, {"ln_1", "ln_2"});
      n.attention = "attn.attention.";
      n.o = "out_proj";
      n.gate = "c_fc_0";
      n.up = "c_fc_1";
      n.down = "c_proj";
      break;
    case HfNames::gpt_neo:
      transformer_h(n, {"ln_1", "ln_2"});
      n.attention = "attn.attention.";
      n.o = "out_proj";
      n.up = "c_fc";
      n.down = "c_proj";
      break;
    case HfNames::gpt_oss:
      n.router_weight = "mlp.router.weight";
      n.router_bias_weight = "mlp.router.bias";
      break;
    case HfNames::jetmoe:  // GraniteMoE's fused experts under mlp.
      n.fused_experts = "mlp.";
      n.fused_in = "input_linear.weight";
      n.fused_out = "output_linear.weight";
      n.router_weight = "mlp.router.layer.weight";
      break;
    case HfNames::aria:  // its checkpoints' names for the fused experts
      n.fused_in = "fc1.weight";
      n.fused_out = "fc2.weight";
      n.router_weight = "mlp.router.weight";
      break;
    case HfNames::llama4:
      n.mlp = "feed_forward.";
      n.fused_experts = "feed_forward.experts.";
      n.router_weight = "feed_forward.router.weight";
      n.shared_experts = "feed_forward.shared_expert.";
      break;
    case HfNames::granitemoe:
    case HfNames::granitemoe_swa:  // saved with transformers' in-memory expert names
      n.fused_experts = "block_sparse_moe.";
      n.fused_in = "input_linear.weight";
      n.fused_out = "output_linear.weight";
      n.router_weight = "block_sparse_moe.router.layer.weight";
      if (m.hf_names == HfNames::granitemoe_swa) {
        n.fused_experts = "block_sparse_moe.experts.";
        n.fused_in = "gate_up_proj";
        n.fused_out = "down_proj";
        n.router_weight = "block_sparse_moe.router.weight";
      }
      n.shared_experts = "shared_mlp.";  // GraniteMoeShared: fused like the experts
      n.mlp = "shared_mlp.";             // GraniteMoeHybrid without experts: the shared MLP alone
      n.gate_up = "input_linear";
      n.down = "output_linear";
      n.ssm = "mamba.";
      break;
    case HfNames::dbrx:
      n.layer = "transformer.blocks.{layer}.";
      n.layer_norms = {"norm_attn_norm.norm_1", "norm_attn_norm.norm_2"};
      n.attention = "norm_attn_norm.attn.";
      n.qkv = "Wqkv";
      n.o = "out_proj";
      n.router_weight = "ffn.router.layer.weight";
      n.fused_experts = "ffn.experts.mlp.";
      n.embedding_weight = "transformer.wte.weight";
      n.final_norm = "transformer.norm_f";
      break;
    case HfNames::hybrid:
      n.layer_norms = {"input_layernorm", "pre_ff_layernorm"};
      n.ssm = "mamba.";
      n.mlp = "feed_forward.";
      n.expert = "feed_forward.experts.{expert}.";
      n.expert_gate = "gate_proj";
      n.expert_up = "up_proj";
      n.expert_down = "down_proj";
      n.router_weight = "feed_forward.router.weight";
      n.final_norm = "model.final_layernorm";
      break;
    case HfNames::nemotron_h:  // every layer one block, all called the mixer
      n.layer_norms = {"norm"};
      n.attention = n.mlp = n.ssm = "mixer.";
      n.expert = "mixer.experts.{expert}.";
      n.router_weight = "mixer.gate.weight";
      n.router_bias_weight = "mixer.gate.e_score_correction_bias";
      n.shared_experts = "mixer.shared_experts.";
      n.layer = "backbone.layers.{layer}.";
      n.embedding_weight = "backbone.embeddings.weight";
      n.final_norm = "backbone.norm_f";
      break;
    case HfNames::bert:
    case HfNames::megatron_bert:
    case HfNames::roberta:
    case HfNames::roberta_prelayernorm:
    case HfNames::xlm_roberta_xl:
      bert_names(m, n);
      break;
    case HfNames::zamba:  // the hybrid layers' parts as ZambaHybridLayer names them
    case HfNames::zamba2:
      n.layer_norms = {"input_layernorm", "pre_ff_layernorm"};
      n.ssm = "mamba.";
      n.mlp = "feed_forward.";
      n.shared_block = m.hf_names == HfNames::zamba2 ? "shared_transformer." : "shared_transf.";
      n.shared_block_linear = "linear";
      n.shared_block_mamba = "mamba_decoder.";
      n.final_norm = "model.final_layernorm";
      break;
    case HfNames::mamba:
      n.layer = "backbone.layers.{layer}.";
      n.layer_norms = {"norm"};
      n.embedding_weight = "backbone.embeddings.weight";
      n.final_norm = "backbone.norm_f";
      break;
    default:
      break;
  }
  return n;
}

NameScheme hf_names(const ModelSpec& m) {
  NameScheme n = llama_names(m);
  switch (m.hf_names) {
    case HfNames::llama:
    case HfNames::cohere:
    case HfNames::glm4:
    case HfNames::deepseek:
    case HfNames::vaultgemma:
      break;
    case HfNames::kolibri1:  // DeepSeek's MoE names, GLM-4's four norms, its checkpoint's spellings
      n.layer_norms = {"input_layernorm", "post_attn_norm", "post_attention_layernorm",
                       "post_ffn_norm"};
      n.router_bias_weight = "moe.router.expert_bias";
      break;
    case HfNames::qwen2_moe:
    case HfNames::qwen3_5:
    case HfNames::flint:
      if (m.hf_names == HfNames::flint) n.sinks_weight = "softmax_offset";
      n.expert = "mlp.experts.{expert}.";
      n.expert_gate = "gate_proj";
      n.expert_up = "up_proj";
      n.expert_down = "down_proj";
      n.router_weight = "mlp.gate.weight";
      n.shared_experts = "mlp.shared_expert.";
      n.shared_expert_gate_weight = "mlp.shared_expert_gate.weight";
      break;
    case HfNames::falcon:
    case HfNames::bloom:  // Falcon's names, and a LayerNorm after the word embedding
      n.embedding_norm = "transformer.word_embeddings_layernorm";
      n.layer = "transformer.h.{layer}.";
      n.attention = "self_attention.";
      n.qkv = "query_key_value";
      n.o = "dense";
      n.up = "dense_h_to_4h";
      n.down = "dense_4h_to_h";
      n.embedding_weight = "transformer.word_embeddings.weight";
      n.final_norm = "transformer.ln_f";
      break;
    case HfNames::gpt_neox:
      n.layer = "gpt_neox.layers.{layer}.";
      n.attention = "attention.";
      n.qkv = "query_key_value";
      n.o = "dense";
      n.up = "dense_h_to_4h";
      n.down = "dense_4h_to_h";
      n.embedding_weight = "gpt_neox.embed_in.weight";
      n.final_norm = "gpt_neox.final_layer_norm";
      n.output = "embed_out";
      break;
    case HfNames::phi:
      n.o = "dense";
      n.q_norm = "q_layernorm";
      n.k_norm = "k_layernorm";
      n.up = "fc1";
      n.down = "fc2";
      n.final_norm = "model.final_layernorm";
      break;
    case HfNames::starcoder2:
      n.up = "c_fc";
      n.down = "c_proj";
      break;
    case HfNames::hunyuan:
    case HfNames::hunyuan_moe:  // DeepSeek's MoE names but for the router and the shared MLP
      n.q_norm = "query_layernorm";
      n.k_norm = "key_layernorm";
      n.router_weight = "mlp.gate.wg.weight";
      n.shared_experts = "mlp.shared_mlp.";
      break;
    case HfNames::lfm2:
      n.layer_norms = {"operator_norm", "ffn_norm"};
      n.ssm = "conv.";
      n.o = "out_proj";
      n.q_norm = "q_layernorm";
      n.k_norm = "k_layernorm";
      n.mlp = "feed_forward.";
      n.gate = n.expert_gate = "w1";
      n.up = n.expert_up = "w3";
      n.down = n.expert_down = "w2";
      n.expert = "feed_forward.experts.{expert}.";
      n.router_weight = "feed_forward.gate.weight";
      n.router_bias_weight = "feed_forward.expert_bias";
      n.final_norm = "model.embedding_norm";
      break;
    case HfNames::exaone_moe:  // DeepSeek's MoE names, the correction bias beside the router
      n.router_bias_weight = "mlp.e_score_correction_bias";
      break;
    case HfNames::minimax_m2:  // Mixtral's names, the correction bias beside the router
      n.router_bias_weight = "block_sparse_moe.e_score_correction_bias";
      break;
    case HfNames::ernie4_5_moe:  // DeepSeek's MoE names, the bias in the router's statistics
      n.router_bias_weight = "mlp.moe_statics.e_score_correction_bias";
      break;
    case HfNames::afmoe:  // DeepSeek's MoE names but for the router (and HY-V3's shared MLP)
    case HfNames::hy_v3:
      n.router_weight = "mlp.router.gate.weight";
      n.router_bias_weight = "mlp.expert_bias";
      if (m.hf_names == HfNames::hy_v3) n.shared_experts = "mlp.shared_mlp.";
      break;
    case HfNames::hyperclovax:
    case HfNames::apertus:  // Llama's names but for the norms (norm_names)
      break;
    case HfNames::sarvam_moe:  // DeepSeek's MoE names, its own attention names
      n.embedding_weight = "model.word_embeddings.weight";
      n.attention = "attention.";
      n.qkv = "query_key_value";
      n.o = "dense";
      n.q_norm = "query_layernorm";
      n.k_norm = "key_layernorm";
      n.router_bias_weight = "mlp.gate.expert_bias";
      break;
    case HfNames::nanochat:
      n.up = "fc1";
      n.down = "fc2";
      break;
    case HfNames::persimmon:
      n.qkv = "query_key_value";
      n.o = "dense";
      n.q_norm = "q_layernorm";
      n.k_norm = "k_layernorm";
      n.up = "dense_h_to_4h";
      n.down = "dense_4h_to_h";
      n.final_norm = "model.final_layernorm";
      break;
    default:
      return older_hf_names(m, std::move(n));
  }
  return n;
}

}  // namespace

NameScheme tensor_names(const ModelSpec& model, Naming naming) {
  return naming == Naming::megatron ? megatron_names(model) : hf_names(model);
}

}  // namespace ckpt::workloads
