#pragma once

#include "workloads/model_spec.hpp"
#include "workloads/parallel_spec.hpp"
#include "workloads/tensor_catalog.hpp"

namespace ckpt::workloads {

// Checks that `parallel` can shard `model` (resolved and valid): positive sizes, ZeRO stage,
// heads / KV heads / FFN sizes divisible by tp, dp divisible by ep, experts by ep. Throws
// SpecError whose key is the parallelism option to change and whose message names the model
// key in conflict and the values that would work.
void validate_parallelism(const ModelSpec& model, const ParallelSpec& parallel);

// Backstop after the catalog is built: every TP-split dimension must divide by tp.
void validate_tp_splits(const TensorCatalog& catalog, std::int64_t tp);

}  // namespace ckpt::workloads
