#pragma once

#include <string>
#include <vector>

#include "workloads/model_spec.hpp"
#include "workloads/parallel_spec.hpp"

namespace ckpt::workloads {

// Tensor names of one framework and model family. Patterns hold "{layer}" / "{expert}" and end
// before ".weight" / ".bias" unless they name a whole tensor (the *_weight members).
struct NameScheme {
  std::string layer;                     // prefix of every layer tensor
  std::vector<std::string> layer_norms;  // in the layer's order, per the model's norm placement
  std::string attention;                 // prefix of the attention tensors
  std::string q, k, v, qkv, o;           // qkv: the fused matrix (Megatron; HF where fused_qkv)
  std::string q_norm, k_norm;
  std::string mlp;                      // prefix of the dense MLP
  std::string gate, up, down, gate_up;  // gate_up: the fused matrix
  std::string expert;                   // prefix of one routed expert
  std::string expert_gate, expert_up, expert_down;
  std::string shared_experts, shared_expert_gate_weight;
  std::string router_weight, router_bias_weight;
  std::string moe_output_norm;  // after the MoE block, where the model has one
  std::string fused_experts;    // prefix of a layer's fused expert tensors
  // Their gate/up and down tensors: [E, h, 2f] and [E, f, h] (gpt-oss, Llama 4, Aria), or
  // [E, 2f, h] and [E, h, f] (GraniteMoE).
  std::string fused_in, fused_out;
  std::string sinks_weight;  // attention sinks, after the attention prefix
  std::string ssm;           // prefix of a state-space mixer
  std::string embedding_weight, position_embedding_weight, embedding_norm, final_norm, output;
  std::string token_type_embedding_weight;
  std::string output_bias_weight;     // the output layer's bias where not output + ".bias"
  std::string head_dense, head_norm;  // the prediction head's transform before the output layer
  std::string pooler;                 // BigBird's pooler, where the model has one
  std::string indexer;                // the sparse-attention indexer, after the attention prefix
  // Zamba's hybrid layers: the shared block's prefix, the layer's own linear, its Mamba layer.
  std::string shared_block, shared_block_linear, shared_block_mamba;
};

// `model` resolved. Megatron-core's names are the same for every family; Hugging Face's follow
// model.hf_names.
NameScheme tensor_names(const ModelSpec& model, Naming naming);

}  // namespace ckpt::workloads
