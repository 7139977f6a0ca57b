#pragma once

// The order in which transformers' save_pretrained meets a model's tensors (Hugging Face names).
// huggingface_hub packs the tensors into files in that order, so it decides which tensors share
// a file when the weights take several. Two orders occur:
//  - modules: the state dict as torch builds it, each module's own tensors before its
//    children's, each in the order the class registers them (Llama's layer: self_attn, mlp,
//    input_layernorm, post_attention_layernorm);
//  - re-sorted: a family with weight conversions (most MoE families) has its whole state dict
//    sorted by the names it holds in memory, each part of a name compared as a number where it
//    is one (transformers' dot_natural_key). A fused in-memory tensor (a layer's experts as one
//    gate_up_proj) gives way, in its place, to the per-expert tensors it is saved as: by part
//    (gate before up), then by expert. The tensors cut from one fused tensor share its storage,
//    and huggingface_hub keeps a storage's tensors in one file, sized as one.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ckpt::workloads {

struct HfSaveOrder {
  bool resorted = false;
  // modules: child names in the order the classes register them. A name not listed comes after
  // its listed siblings, in the layout's order.
  std::vector<std::string> modules;
  // re-sorted: how a saved name reads in memory, {saved, in memory}, each a run of whole
  // dot-separated parts (Mixtral's {"block_sparse_moe", "mlp"}).
  std::vector<std::pair<std::string, std::string>> renames;
  // re-sorted: a per-expert matrix ("experts.{e}.{saved}.weight" after renaming) and the fused
  // in-memory tensor it is cut from ("experts.{fused}"), with its part of it.
  struct ExpertPart {
    std::string saved, fused;
    int part = 0;
  };
  std::vector<ExpertPart> expert_parts;
};

// `names` (one model's tensors, in the layout's order) in save order: indices into `names`,
// and for each of them the storage it belongs to (equal numbers: one storage; the tensors of a
// storage are consecutive in the order).
struct HfSaveSequence {
  std::vector<std::size_t> order;
  std::vector<std::size_t> storage;
};
HfSaveSequence hf_save_sequence(const std::vector<std::string>& names, const HfSaveOrder& rule);

}  // namespace ckpt::workloads
