#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/dtype.hpp"
#include "workloads/model_spec.hpp"
#include "workloads/parallel_spec.hpp"

namespace ckpt::workloads {

// How tensor parallelism cuts a tensor: not at all (every TP rank holds a copy), along
// dim 0 (column-parallel, vocab-parallel), dim 1 (row-parallel; column-parallel for a
// transposed Conv1D weight or a fused expert tensor [E, out, in]) or dim 2 (a fused expert
// tensor [E, in, out]).
enum class TpSplit { replicated, dim0, dim1, dim2 };

std::size_t split_dim(TpSplit split);  // the dimension a non-replicated split cuts

struct TensorDef {
  std::string pattern;              // name with "{layer}" / "{expert}" placeholders
  std::vector<std::int64_t> shape;  // global shape
  TpSplit split = TpSplit::replicated;
  // Dim 0 holds every expert of the layer (fused expert tensors): expert parallelism gives
  // each EP rank its contiguous block of experts along it.
  bool expert_dim = false;
  // The weight of a linear layer (nn.Linear, or a fused expert tensor's matrices): what block
  // quantization (WeightFormat::fp8_block) stores in FP8.
  bool linear = false;
  // The dtype the weight is stored in whatever the state's weight dtype: a quantized weight and
  // its scales. Unset: the state's.
  std::optional<Dtype> dtype;
  // A quantized weight's block scales (fp8_block's weight_scale_inv): model.scale leaves the
  // tensor whole (Shard::unscaled).
  bool block_scales = false;

  std::int64_t numel() const;
};

// One layer's tensors; all layers of one LayerKind share them.
struct LayerTemplate {
  LayerKind kind;
  std::vector<TensorDef> tensors;  // an MoE layer's non-expert tensors (attention, router, shared)
};

// Every tensor of the model, grouped by where it lives in the pipeline. Layers come as one
// template per kind (dense, MoE, state-space, ...) because all layers of a kind share shapes.
struct TensorCatalog {
  std::vector<TensorDef> first_stage;  // embeddings: pipeline stage 0
  std::vector<LayerTemplate> layer_templates;
  std::vector<std::size_t> template_of_layer;  // index into layer_templates, one per layer
  std::vector<TensorDef> expert;  // one routed expert of an MoE layer, or all of them (fused)
  bool fused_experts = false;     // `expert` holds each layer's experts in dim 0, once per layer
  std::vector<TensorDef> last_stage;  // final norm and untied output layer: last stage

  const std::vector<TensorDef>& layer(std::int64_t index) const {
    return layer_templates[template_of_layer[static_cast<std::size_t>(index)]].tensors;
  }
  // Unique parameters of the whole model (tied embeddings counted once).
  std::int64_t parameter_count(const ModelSpec& model) const;
};

// `model` must be resolved and valid. `padded_vocab` >= model.vocab_size sizes the embedding
// and output tables (Megatron pads them; HF checkpoints do not).
TensorCatalog build_tensor_catalog(const ModelSpec& model, Naming naming,
                                   std::int64_t padded_vocab);

// Substitutes "{layer}" and "{expert}" in a pattern.
std::string format_tensor_name(std::string_view pattern, std::int64_t layer, std::int64_t expert);

}  // namespace ckpt::workloads
