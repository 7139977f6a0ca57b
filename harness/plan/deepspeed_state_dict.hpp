#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/formats/pickle_bytes.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// What DeepSpeed's checkpoint files of every ZeRO stage share: the tensors a model-parallel
// rank's module holds and the parts of the pickled engine state that follow its module.

// torch.save's archive of a DeepSpeed file named `file` (its records are named under the file's
// name without ".pt") around a pickle of `pickle_bytes` and these storages.
std::uint64_t deepspeed_torch_save_bytes(const std::string& file, std::uint64_t pickle_bytes,
                                         const std::vector<std::uint64_t>& storages);

// Counts the state dict's _metadata after the module's tensors: per module of the smallest module
// tree holding the names its {"version": 1}.
void count_module_versions(PickleBytes& p, const std::vector<workloads::Shard>& tensors);

// Counts what the model_states pickle holds after the module's tensors: the state dict's
// _metadata (per module of the smallest module tree holding the names its {"version": 1}),
// buffer_names, the "optimizer" key and param_shapes (per tensor its name and torch.Size).
// Returns the memo index of the "optimizer" key, which ds_config's own "optimizer" key reuses.
std::uint64_t count_module_metadata(PickleBytes& p, const std::vector<workloads::Shard>& tensors);

}  // namespace ckpt::harness
