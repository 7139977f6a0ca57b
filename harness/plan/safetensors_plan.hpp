#pragma once

// Planning of strategy.format = "safetensors" checkpoints: which files each rank writes, the
// tensors' names in them, and the rank plans (header + tensors back to back, memory mirroring
// the file). Naming:
//   state.scope = "weights"  as save_pretrained writes a model: model.safetensors when the
//                            world's tensors fit one file, else model-{i:05}-of-{n:05}.safetensors
//                            with model.safetensors.index.json; each rank's tensors in the
//                            model's order split as huggingface_hub splits a state dict under
//                            strategy.max_shard_bytes, a new file at each rank's first shard (one
//                            writer per file); n counts the world's files. The model's order is
//                            the one save_pretrained meets the tensors in (HfSaveOrder).
//   state.scope = "full"     rank-{r:05}-of-{w:05}.safetensors: one file per rank, with the index.
// In a file the tensors lie in the safetensors package's order (by dtype, then name).
// A tensor's name is the model's name; a tensor-parallel slice appends its slice,
// "name[0:4096,2048:4096]"; a ZeRO flat range its elements, "name#1024-2048"; under
// state.scope = "full" the state kind comes first, "exp_avg/name" (unique whatever state.naming).

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

inline constexpr const char* kSafetensorsIndexName = "model.safetensors.index.json";
// The one file of a model whose weights fit one file (no index beside it).
inline constexpr const char* kSafetensorsSingleName = "model.safetensors";

// The tensor name of `shard` in a safetensors file (see above).
std::string safetensors_name(const workloads::Shard& shard, bool weights_only);
// The shape recorded for `elements` elements of `shard` (fewer than its slice under model.scale):
// the slice's shape (none for a scalar), with the leading dimension shortened when the elements
// are whole rows of it, else one dimension.
std::vector<std::uint64_t> safetensors_shape(const workloads::Shard& shard, std::uint64_t elements);

// Splits tensors of `bytes` each, in the model's order, into files as huggingface_hub's
// split_state_dict_into_shards does for save_pretrained: a tensor over `limit` gets a file of its
// own at once while the open file stays open; the open file closes when the next tensor would
// take it over `limit`. Returns each file's tensors (indices), in file order.
std::vector<std::vector<std::size_t>> safetensors_file_split(
    const std::vector<std::uint64_t>& bytes, std::uint64_t limit);

// The file of every shard of every rank, without building the world's shards.
class SafetensorsFiles {
 public:
  SafetensorsFiles(const workloads::Layout& layout, const Case& c);
  // The rank's shards grouped by file, in file order: {file name, shards}.
  std::vector<std::pair<std::string, std::vector<workloads::Shard>>> group(std::int64_t rank) const;
  std::int64_t files() const { return files_; }

 private:
  // Weights: the rank's shards in the order save_pretrained meets them, cut into files as
  // huggingface_hub cuts them (one storage's tensors as one).
  std::vector<std::vector<workloads::Shard>> split_rank(std::int64_t rank) const;

  const workloads::Layout& layout_;
  const Case& c_;
  bool weights_only_;
  std::vector<std::int64_t> first_file_;  // weights: rank -> number of its first file (0-based)
  std::int64_t files_ = 0;
};

// Plans `rank` of a safetensors checkpoint in `checkpoint_dir` into `plan` (shards, headers,
// buffer bytes, extents); `attributes` go into each header's __metadata__.
void plan_safetensors_rank(const SafetensorsFiles& files, const Case& c, std::int64_t rank,
                           const std::filesystem::path& checkpoint_dir, RankPlan& plan);

}  // namespace ckpt::harness
