#include "workloads/weight_quantization.hpp"

#include <vector>

#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

std::int64_t block_count(std::int64_t size) {
  return (size + kFp8BlockSize - 1) / kFp8BlockSize;
}

TensorDef fp8_scale_def(const TensorDef& weight) {
  TensorDef scale = weight;
  scale.pattern = fp8_scale_name(weight.pattern);
  const std::size_t rank = scale.shape.size();
  scale.shape[rank - 2] = block_count(scale.shape[rank - 2]);
  scale.shape[rank - 1] = block_count(scale.shape[rank - 1]);
  scale.linear = false;
  scale.dtype = Dtype::fp32;
  scale.block_scales = true;
  return scale;
}

void quantize_list(std::vector<TensorDef>& defs) {
  std::vector<TensorDef> out;
  out.reserve(defs.size() * 2);
  for (TensorDef& def : defs) {
    const bool quantized = def.linear && def.shape.size() >= 2;
    if (quantized) def.dtype = Dtype::fp8;
    out.push_back(def);
    if (quantized) out.push_back(fp8_scale_def(def));
  }
  defs = std::move(out);
}

std::string bracketed_shape(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (const std::int64_t d : shape) text += (text.empty() ? "" : ", ") + std::to_string(d);
  return "[" + text + "]";
}

// The pattern with every layer and expert placeholder as "*": the tensor of every layer.
std::string any_layer_name(std::string pattern) {
  for (const std::string_view token : {"{layer}", "{expert}"}) {
    for (auto pos = pattern.find(token); pos != std::string::npos; pos = pattern.find(token))
      pattern.replace(pos, token.size(), "*");
  }
  return pattern;
}

// Refuses `parts` parts of dimension `dim` of `def` unless each part is whole blocks.
void check_block_cut(const TensorDef& def, std::size_t dim, std::int64_t parts, const char* key) {
  const std::int64_t size = def.shape[dim];
  if (parts == 1 || (size % parts == 0 && size / parts % kFp8BlockSize == 0)) return;
  std::string whole;  // the degrees whose parts are whole blocks
  for (std::int64_t n = 1; n <= size / kFp8BlockSize || n == 1; ++n) {
    if (size % n == 0 && (n == 1 || size / n % kFp8BlockSize == 0))
      whole += (whole.empty() ? "" : ", ") + std::to_string(n);
  }
  throw SpecError(
      key, "tensor " + any_layer_name(def.pattern) + " " + bracketed_shape(def.shape) +
               " is stored in FP8 blocks of " + std::to_string(kFp8BlockSize) + " x " +
               std::to_string(kFp8BlockSize) + " (model.weights = \"fp8_block\"), and " + key +
               " = " + std::to_string(parts) + " cuts its dimension " + std::to_string(dim) +
               " into parts of " + std::to_string(size / parts) +
               ", not whole blocks: a block and its scale in " +
               any_layer_name(fp8_scale_name(def.pattern)) + " must stay on one rank; use " + key +
               " = " + whole + " for this tensor, or model.weights = \"unquantized\"");
}

void check_weights_scope(const StateSpec& state) {
  if (state.scope == StateScope::weights) return;
  throw SpecError("weights", "model.weights = \"" + std::string(weight_format_name(state.weights)) +
                                 "\" stores an inference checkpoint's weights, and state.scope = "
                                 "\"full\" also saves the training state (master copy and "
                                 "optimizer moments of full-precision weights); set state.scope "
                                 "= \"weights\", or model.weights = \"unquantized\"");
}

// The divisors n of `size`: the TP sizes that cut `size` blocks into whole blocks.
std::string whole_block_degrees(std::int64_t size) {
  std::string whole;
  for (std::int64_t n = 1; n <= size; ++n)
    if (size % n == 0) whole += (whole.empty() ? "" : ", ") + std::to_string(n);
  return whole;
}

// The experts' matrix [E, in, out] as MXFP4 blocks [E, out, in / 32, 16] or scales [E, out,
// in / 32]; TP's cut of `out` or `in` moves with the dimension.
TensorDef mxfp4_def(const TensorDef& matrix, const char* suffix, bool blocks) {
  TensorDef def = matrix;
  def.pattern = matrix.pattern + suffix;
  def.shape = {matrix.shape[0], matrix.shape[2], matrix.shape[1] / kMxfp4BlockValues};
  if (blocks) def.shape.push_back(kMxfp4BlockBytes);
  if (matrix.split == TpSplit::dim1) def.split = TpSplit::dim2;
  if (matrix.split == TpSplit::dim2) def.split = TpSplit::dim1;
  def.linear = false;
  def.dtype = Dtype::u8;
  return def;
}

}  // namespace

std::string fp8_scale_name(std::string_view pattern) {
  return std::string(pattern) + "_scale_inv";
}

void quantize_fp8_blocks(TensorCatalog& catalog) {
  quantize_list(catalog.first_stage);
  for (LayerTemplate& t : catalog.layer_templates) quantize_list(t.tensors);
  quantize_list(catalog.expert);
  quantize_list(catalog.last_stage);
}

void validate_fp8_blocks(const TensorCatalog& catalog, const ParallelSpec& parallel,
                         const StateSpec& state) {
  check_weights_scope(state);
  std::vector<const std::vector<TensorDef>*> parts{&catalog.first_stage, &catalog.expert,
                                                   &catalog.last_stage};
  for (const LayerTemplate& t : catalog.layer_templates) parts.push_back(&t.tensors);
  for (const auto* part : parts) {
    for (const TensorDef& def : *part) {
      if (def.dtype != Dtype::fp8) continue;
      const std::size_t rank = def.shape.size();
      if (def.split != TpSplit::replicated && split_dim(def.split) + 2 >= rank)
        check_block_cut(def, split_dim(def.split), parallel.tp, "tp");
      // A fused expert tensor of two dimensions holds its experts' rows in dim 0.
      if (def.expert_dim && rank == 2) check_block_cut(def, 0, parallel.ep, "ep");
    }
  }
}

void quantize_mxfp4_experts(TensorCatalog& catalog, const ModelSpec& model,
                            const StateSpec& state) {
  check_weights_scope(state);
  if (model.hf_names != HfNames::gpt_oss || !catalog.fused_experts) {
    throw SpecError("weights",
                    "model.weights = \"mxfp4\" stores the experts as gpt-oss ships them "
                    "(transformers converts only GptOssExperts), and model " +
                        model.name +
                        " has no gpt-oss experts; use a gpt_oss model, or model.weights = "
                        "\"fp8_block\" or \"unquantized\"");
  }
  std::vector<TensorDef> out;
  for (const TensorDef& def : catalog.expert) {
    if (!def.linear || def.shape.size() != 3) {
      out.push_back(def);
      continue;
    }
    if (def.shape[1] % kMxfp4BlockValues != 0) {
      throw SpecError("weights", "tensor " + any_layer_name(def.pattern) + " " +
                                     bracketed_shape(def.shape) +
                                     " cannot be stored in MXFP4 (model.weights = \"mxfp4\"): "
                                     "its input dimension " +
                                     std::to_string(def.shape[1]) + " is not whole blocks of " +
                                     std::to_string(kMxfp4BlockValues) +
                                     " values; use model.weights = \"unquantized\"");
    }
    out.push_back(mxfp4_def(def, "_blocks", true));
    out.push_back(mxfp4_def(def, "_scales", false));
  }
  catalog.expert = std::move(out);
}

void validate_mxfp4_experts(const TensorCatalog& catalog, const ParallelSpec& parallel) {
  for (const TensorDef& def : catalog.expert) {
    // The blocks of a row lie in dim 2; TP cuts it where it cuts the matrix's input.
    if (def.dtype != Dtype::u8 || def.shape.size() != 4 || def.split != TpSplit::dim2) continue;
    const std::int64_t blocks = def.shape[2];
    if (blocks % parallel.tp == 0) continue;
    throw SpecError(
        "tp", "tensor " + any_layer_name(def.pattern) + " " + bracketed_shape(def.shape) +
                  " holds MXFP4 blocks of " + std::to_string(kMxfp4BlockValues) +
                  " values (model.weights = \"mxfp4\"), " + std::to_string(blocks) +
                  " to a row, and tp = " + std::to_string(parallel.tp) +
                  " cuts a row's blocks into parts that are not whole blocks: a block and its "
                  "scale must stay on one rank; use tp = " +
                  whole_block_degrees(blocks) +
                  " for this tensor, or model.weights = " + "\"unquantized\"");
  }
}

}  // namespace ckpt::workloads
