#pragma once

// The order in which save_pretrained meets a family's tensors (workloads::HfSaveOrder), which
// decides the tensors each file holds when a model's weights take several safetensors files.
#include <string_view>

#include "workloads/model_spec.hpp"

namespace ckpt::harness::hf {

// From config.json's model_type.
workloads::HfSaveOrder save_order(std::string_view model_type);
// A model file names no model_type: the order of the family whose names it uses (`spec`'s
// hf_names; Llama's names with experts are Mixtral's).
workloads::HfSaveOrder save_order_of_names(const workloads::ModelSpec& spec);

}  // namespace ckpt::harness::hf
