#include "workloads/parallel_spec.hpp"

namespace ckpt::workloads {

std::string_view state_kind_name(StateKind kind) {
  switch (kind) {
    case StateKind::weight:
      return "weight";
    case StateKind::master:
      return "master";
    case StateKind::exp_avg:
      return "exp_avg";
    case StateKind::exp_avg_sq:
      return "exp_avg_sq";
  }
  return "weight";
}

std::string_view state_scope_name(StateScope scope) {
  return scope == StateScope::weights ? "weights" : "full";
}

std::string_view naming_name(Naming naming) {
  return naming == Naming::hf ? "hf" : "megatron";
}

std::string_view sizing_name(Sizing sizing) {
  return sizing == Sizing::dlio ? "dlio" : "exact";
}

std::string_view weight_format_name(WeightFormat format) {
  switch (format) {
    case WeightFormat::fp8_block:
      return "fp8_block";
    case WeightFormat::mxfp4:
      return "mxfp4";
    case WeightFormat::unquantized:
      break;
  }
  return "unquantized";
}

std::string_view zero_sharding_name(ZeroSharding sharding) {
  return sharding == ZeroSharding::per_tensor ? "per_tensor" : "flat";
}

Dtype StateSpec::dtype_of(StateKind kind) const {
  switch (kind) {
    case StateKind::weight:
      return weight_dtype;
    case StateKind::master:
      return master_dtype.value_or(Dtype::fp32);
    case StateKind::exp_avg:
    case StateKind::exp_avg_sq:
      return optimizer_dtype;
  }
  return weight_dtype;
}

}  // namespace ckpt::workloads
