#pragma once

#include <cstdint>
#include <string>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// The bytes a framework's file holds beyond the layout's tensors in it, which the plan appends
// as stand-in text after them so that the file has the framework's size: for `file` of modeled
// `rank`, whose layout tensors hold `tensor_bytes` (unscaled), the framework file's size less
// those bytes, divided by the case's scale like the tensors; 0 for a file it does not know.
//
// With torch.save's framing (Case::framing) the whole file counts: the archive, the pickle and
// the storages. Without, only the storages' bytes beyond the layout's tensors stay (DeepSpeed's
// partition padding and Adam's step), not the framing around them.
//
// Known files: DeepSpeed's optimizer file under ZeRO-3 (deepspeed_zero3_files), the model
// states and optimizer files under ZeRO 1 and 2 (deepspeed_zero12_files), the model states
// file without ZeRO (deepspeed_zero0_files), and Megatron's
// model_optim_rng.pt and distrib_optim.pt (megatron_pt_files).
std::uint64_t framework_file_rest(const workloads::Layout& layout, const Case& c, std::int64_t rank,
                                  const std::string& file, std::uint64_t tensor_bytes);

}  // namespace ckpt::harness
