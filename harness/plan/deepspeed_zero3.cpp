#include "harness/plan/deepspeed_zero3.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "harness/plan/deepspeed_state_dict.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

// DeepSpeed's default zero_optimization.sub_group_size: a rank's parameters are cut into
// sub-groups of at least this many partition elements, each with its own flat fp32 tensor and
// Adam state (stage3.py: _create_fp16_sub_groups).
constexpr std::int64_t kSubGroupElements = 1'000'000'000;

// The pickled dicts (torch.save's data.pkl) of DeepSpeed 0.19.8 under torch 2.15, with the
// measuring script's ds_config (tests/data/deepspeed/zero3_files.jsonl): the bytes that do not
// grow with the model (but for the ints that hold the DP size), and those per tensor, module and
// sub-group that are not a name, an int or a memo reference (read off pickletools' disassembly
// of the files).
constexpr std::uint64_t kOptimizerPickleBytes = 1287;
constexpr std::uint64_t kOptimizerPicklePerSubGroupBytes = 300;  // beyond the first: estimated
constexpr std::uint64_t kModelStatesPickleBytes = 744;
constexpr std::uint64_t kPlaceholderPickleBytes = 29;  // an empty tensor rebuilt from its storage
constexpr int kPlaceholderMemoPuts = 8;
constexpr int kFirstPlaceholderMemoPuts = 12;
constexpr int kModelStatesTrailingMemoPuts = 37;  // counters, ds_config, version

std::int64_t slice_elements(const workloads::Shard& s) {
  std::int64_t n = 1;
  for (const std::int64_t d : s.extent) n *= d;
  return n;
}

// One sub-group of a rank's parameters: its partition elements and its tensors' range.
struct SubGroup {
  std::int64_t elements = 0;
  std::int64_t first_tensor = 0, tensors = 0;
};

std::vector<SubGroup> sub_groups(const workloads::Layout& layout,
                                 const std::vector<workloads::Shard>& tensors) {
  const std::int64_t dp = layout.parallel().dp;
  std::vector<SubGroup> groups(1);
  for (const workloads::Shard& s : tensors) {
    if (groups.back().elements >= kSubGroupElements)
      groups.push_back({0, groups.back().first_tensor + groups.back().tensors, 0});
    groups.back().elements += (slice_elements(s) + dp - 1) / dp;
    ++groups.back().tensors;
  }
  return groups;
}

// The model_states pickle: the module's state dict (per parameter an empty placeholder named by
// its storage key, then per module its version), then param_shapes (per parameter its name and
// torch.Size), then the counters, ds_config and version.
std::uint64_t model_states_pickle_bytes(const workloads::Layout& layout,
                                        const std::vector<workloads::Shard>& tensors) {
  PickleBytes p(kModelStatesPickleBytes);
  for (int i = 0; i < 3; ++i) p.integer(layout.parallel().dp);  // dp_world_size, samples, batch
  p.put(4);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    p.text(tensors[i].name);
    p.text(std::to_string(i));
    p.add(kPlaceholderPickleBytes);
    p.put(i == 0 ? kFirstPlaceholderMemoPuts : kPlaceholderMemoPuts);
  }
  p.ordered_dict_batches(tensors.size());
  const std::uint64_t optimizer_key = count_module_metadata(p, tensors);
  p.put(kModelStatesTrailingMemoPuts);
  p.get(optimizer_key);  // ds_config's "optimizer" key, memoized as the state dict's
  return p.bytes();
}

}  // namespace

bool deepspeed_zero3_files(const Case& c, const workloads::Layout& layout) {
  return deepspeed_zero3_files(c.directory_layout, c.mapping, layout.parallel(), layout.state());
}

std::int64_t deepspeed_zero3_partition_elements(const workloads::Layout& layout,
                                                std::int64_t rank) {
  std::int64_t elements = 0;
  for (const SubGroup& g : sub_groups(layout, model_parallel_weights(layout, rank)))
    elements += g.elements;
  return elements;
}

std::uint64_t deepspeed_zero3_optimizer_file_bytes(const workloads::Layout& layout,
                                                   std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const auto master = static_cast<std::uint64_t>(workloads::dtype_bytes(*s.master_dtype));
  const auto moments = static_cast<std::uint64_t>(workloads::dtype_bytes(s.optimizer_dtype));
  const std::vector<SubGroup> groups = sub_groups(layout, model_parallel_weights(layout, rank));
  // Pickled in this order: per sub-group the Adam step, exp_avg and exp_avg_sq, then the flat
  // partitions (fp32_flat_groups). The pickle names each partition's size twice per tensor and
  // each sub-group by the ids of its first and last parameter ("0_8").
  PickleBytes pickle(kOptimizerPickleBytes);
  pickle.integer(layout.parallel().dp);  // partition_count
  pickle.integer(layout.parallel().dp);  // ds_config's train_batch_size
  std::vector<std::uint64_t> storages;
  for (const SubGroup& g : groups) {
    const auto elements = static_cast<std::uint64_t>(g.elements);
    storages.insert(storages.end(), {4, elements * moments, elements * moments});
    for (int i = 0; i < 6; ++i) pickle.integer(g.elements);
    pickle.add(fmt::format("{}_{}", g.first_tensor, g.first_tensor + g.tensors - 1).size());
    if (&g != &groups.front()) pickle.add(kOptimizerPicklePerSubGroupBytes);
  }
  for (const SubGroup& g : groups)
    storages.push_back(static_cast<std::uint64_t>(g.elements) * master);
  const workloads::RankCoord c = layout.coord(rank);
  return deepspeed_torch_save_bytes(deepspeed_optimizer_file(c.dp, c.tp), pickle.bytes(), storages);
}

std::uint64_t deepspeed_zero3_optimizer_data_bytes(const workloads::Layout& layout,
                                                   std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const auto per_element = static_cast<std::uint64_t>(
      workloads::dtype_bytes(*s.master_dtype) + 2 * workloads::dtype_bytes(s.optimizer_dtype));
  std::uint64_t bytes = 0;
  for (const SubGroup& g : sub_groups(layout, model_parallel_weights(layout, rank)))
    bytes += 4 + static_cast<std::uint64_t>(g.elements) * per_element;
  return bytes;
}

std::uint64_t deepspeed_zero3_model_states_bytes(const workloads::Layout& layout,
                                                 std::int64_t rank) {
  const std::vector<workloads::Shard> tensors = model_parallel_weights(layout, rank);
  const std::vector<std::uint64_t> placeholders(tensors.size(), 0);  // empty storages
  const workloads::RankCoord c = layout.coord(rank);
  return deepspeed_torch_save_bytes(deepspeed_zero_model_states(c.dp, c.tp),
                                    model_states_pickle_bytes(layout, tensors), placeholders);
}

}  // namespace ckpt::harness
