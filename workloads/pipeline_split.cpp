#include "workloads/pipeline_split.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

// A first = last stage size that makes `layers` split over `stages` stages with every middle
// stage equal and every stage non-empty, closest to the even share; 0 when none exists.
std::int64_t suggest_edge_layers(std::int64_t layers, std::int64_t stages) {
  if (stages < 3) return 0;
  const std::int64_t share = layers / stages;
  std::int64_t best = 0;
  for (std::int64_t edge = 1; 2 * edge < layers; ++edge) {
    const std::int64_t rest = layers - 2 * edge;
    if (rest % (stages - 2) != 0 || rest / (stages - 2) < 1) continue;
    if (best == 0 || std::llabs(edge - share) < std::llabs(best - share)) best = edge;
  }
  return best;
}

std::string uneven_hint(std::int64_t layers, std::int64_t stages) {
  const std::int64_t edge = suggest_edge_layers(layers, stages);
  if (edge == 0) return "choose a pp that divides " + std::to_string(layers);
  return "choose a pp that divides " + std::to_string(layers) +
         ", or split unevenly, e.g. pp_first_stage_layers = " + std::to_string(edge) +
         " and pp_last_stage_layers = " + std::to_string(edge) + " (--pp-first-stage-layers " +
         std::to_string(edge) + " --pp-last-stage-layers " + std::to_string(edge) + ")";
}

}  // namespace

PipelineSplit::PipelineSplit(std::int64_t layers, const ParallelSpec& parallel)
    : layers_(layers),
      stages_(parallel.pp),
      first_(parallel.pp_first_stage_layers),
      last_(parallel.pp_last_stage_layers) {
  if (first_ < 0)
    throw SpecError("pp_first_stage_layers", "pp_first_stage_layers must not be negative");
  if (last_ < 0)
    throw SpecError("pp_last_stage_layers", "pp_last_stage_layers must not be negative");
  const std::int64_t fixed_stages = (first_ > 0 ? 1 : 0) + (last_ > 0 ? 1 : 0);
  if (fixed_stages > 0 && stages_ == 1) {
    throw SpecError(first_ > 0 ? "pp_first_stage_layers" : "pp_last_stage_layers",
                    "an uneven pipeline split needs pp > 1");
  }
  const std::int64_t middle_stages = stages_ - fixed_stages;
  const std::int64_t middle_layers = layers - first_ - last_;
  const std::string sizes = std::to_string(layers) + " layers over pp = " + std::to_string(stages_);
  if (middle_layers < 0 || (middle_stages == 0 && middle_layers != 0)) {
    throw SpecError("pp_first_stage_layers", "pp_first_stage_layers + pp_last_stage_layers (" +
                                                 std::to_string(first_ + last_) +
                                                 ") do not add up with " + sizes);
  }
  if (middle_stages == 0) return;
  if (middle_layers < middle_stages) {
    throw SpecError("pp", "cannot give every pipeline stage a layer: " + sizes +
                              (fixed_stages ? " with the given first/last stage sizes" : "") +
                              "; lower pp");
  }
  if (middle_layers % middle_stages != 0) {
    if (fixed_stages == 0) {
      throw SpecError("pp", "num_hidden_layers (" + std::to_string(layers) +
                                ") is not divisible by pp (" + std::to_string(stages_) + "); " +
                                uneven_hint(layers, stages_));
    }
    throw SpecError("pp_first_stage_layers", "the " + std::to_string(middle_layers) +
                                                 " layers left after the first/last "
                                                 "stages do not split evenly over the other " +
                                                 std::to_string(middle_stages) + " stages; " +
                                                 uneven_hint(layers, stages_));
  }
  per_stage_ = middle_layers / middle_stages;
}

PipelineSplit PipelineSplit::front_loaded(std::int64_t layers, std::int64_t stages) {
  PipelineSplit split;
  split.layers_ = layers;
  split.stages_ = stages;
  split.per_stage_ = layers / stages;
  split.front_loaded_ = layers % stages;
  return split;
}

std::pair<std::int64_t, std::int64_t> PipelineSplit::layers_of(std::int64_t stage) const {
  if (front_loaded_ >= 0) {
    const std::int64_t longer = std::min(stage, front_loaded_);
    const std::int64_t begin = longer * (per_stage_ + 1) + (stage - longer) * per_stage_;
    return {begin, begin + per_stage_ + (stage < front_loaded_ ? 1 : 0)};
  }
  if (stages_ == 1) return {0, layers_};
  if (stage == 0 && first_ > 0) return {0, first_};
  if (stage == stages_ - 1 && last_ > 0) return {layers_ - last_, layers_};
  const std::int64_t index = stage - (first_ > 0 ? 1 : 0);
  const std::int64_t begin = first_ + index * per_stage_;
  return {begin, begin + per_stage_};
}

}  // namespace ckpt::workloads
