#include "harness/plan/deepspeed_zero12.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "harness/formats/torch_save_pickle.hpp"
#include "harness/plan/deepspeed_state_dict.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

// The pickled dicts of DeepSpeed 0.19.8 under torch 2.15 with the measuring script's ds_config
// (tests/data/deepspeed/zero012_files.jsonl): the bytes that do not grow with the model (but for
// the ints that hold the DP size), read off pickletools' disassembly of the files and fitted to
// every measured file.
constexpr std::uint64_t kFlatModelStatesPickleBytes = 670;
constexpr std::uint64_t kStage2FlatModelStatesExtraBytes = 6;  // and two more memo entries
constexpr int kFlatModelStatesTrailingMemoPuts = 35;           // counters, ds_config, version
constexpr std::uint64_t kPartitionPickleBytes = 1176;
constexpr int kPartitionLeadingMemoPuts = 86;   // loss scaler, Adam's state and groups, paddings
constexpr int kPartitionTrailingMemoPuts = 16;  // ds_config
constexpr std::uint64_t kFragmentAddressGlobal = 50;  // GLOBAL ..tensor_fragment fragment_address
// Memo indices the pickle reuses: _rebuild_tensor_v2, the persistent id's "storage", storage
// class, key and device, OrderedDict; fragment_address and its "numel" and "start" keys.
constexpr std::uint64_t kRebuildIndex = 5;
constexpr std::uint64_t kStorageKeyIndices[] = {6, 7, 8, 9};
constexpr std::uint64_t kOrderedDictIndex = 2;
constexpr std::uint64_t kFragmentAddressIndex = 87, kNumelIndex = 90, kStartIndex = 91;

std::int64_t shard_elements(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

// One weight in the module's state dict: a view of the flat buffer (its one storage, whose
// persistent id the first weight spells out and the others reuse) at `offset`.
void count_weight(PickleBytes& p, const workloads::Shard& s, bool first, std::int64_t offset,
                  std::int64_t flat, workloads::Dtype dtype) {
  p.text(s.name);
  p.put();
  if (first) {
    count_first_persistent_id(p, dtype, 0);
  } else {
    p.get(kRebuildIndex);
    p.add(2);
    for (const std::uint64_t index : kStorageKeyIndices) p.get(index);
  }
  count_view_after_storage_key(p, s.extent, flat, offset, kOrderedDictIndex);
}

std::uint64_t flat_model_states_pickle_bytes(const workloads::Layout& layout,
                                             const std::vector<workloads::Shard>& tensors,
                                             std::int64_t flat) {
  PickleBytes p(kFlatModelStatesPickleBytes);
  p.put(4);
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    count_weight(p, tensors[i], i == 0, offset, flat, layout.state().weight_dtype);
    offset += shard_elements(tensors[i].extent);
  }
  p.ordered_dict_batches(tensors.size());
  const std::uint64_t optimizer_key = count_module_metadata(p, tensors);
  for (int i = 0; i < 3; ++i) p.integer(layout.parallel().dp);  // samples, dp size, batch
  p.put(kFlatModelStatesTrailingMemoPuts);
  if (layout.parallel().zero_stage == 2) {
    p.add(kStage2FlatModelStatesExtraBytes);
    p.put(2);
  }
  p.get(optimizer_key);  // ds_config's "optimizer" key, memoized as the state dict's
  return p.bytes();
}

// Per tensor with elements in [begin, end) of the flat buffer: its name and a fragment_address
// (the elements there, where they start in the partition).
void count_fragments(PickleBytes& p, const std::vector<workloads::Shard>& tensors,
                     std::int64_t begin, std::int64_t end) {
  std::int64_t offset = 0;
  bool first = true;
  for (const workloads::Shard& s : tensors) {
    const std::int64_t from = std::max(offset, begin);
    offset += shard_elements(s.extent);
    const std::int64_t to = std::min(offset, end);
    if (to <= from) continue;
    p.text(s.name);
    p.put();
    if (first) {
      p.add(kFragmentAddressGlobal);
      p.put();
    } else {
      p.get(kFragmentAddressIndex);
    }
    p.add(2);  // EMPTY_TUPLE NEWOBJ
    p.put();
    p.add(1);  // EMPTY_DICT
    p.put();
    p.add(1);  // MARK
    if (first) {
      p.text("numel");
      p.put();
    } else {
      p.get(kNumelIndex);
    }
    p.integer(to - from);
    if (first) {
      p.text("start");
      p.put();
    } else {
      p.get(kStartIndex);
    }
    p.integer(from - begin);
    p.add(2);  // SETITEMS BUILD
    first = false;
  }
}

}  // namespace

bool deepspeed_zero12_files(const Case& c, const workloads::Layout& layout) {
  const workloads::ParallelSpec& p = layout.parallel();
  const workloads::StateSpec& s = layout.state();
  return c.directory_layout == DirectoryLayout::deepspeed && c.mapping == Mapping::file_per_rank &&
         (p.zero_stage == 1 || p.zero_stage == 2) && p.pp == 1 && p.ep == 1 &&
         s.scope == workloads::StateScope::full && s.master_dtype.has_value() &&
         s.sizing == workloads::Sizing::exact;
}

std::int64_t deepspeed_zero12_flat_elements(const workloads::Layout& layout, std::int64_t rank) {
  std::int64_t elements = 0;
  for (const workloads::Shard& s : model_parallel_weights(layout, rank))
    elements += shard_elements(s.extent);
  const std::int64_t alignment = 2 * layout.parallel().dp;
  return (elements + alignment - 1) / alignment * alignment;
}

std::uint64_t deepspeed_zero12_model_states_data_bytes(const workloads::Layout& layout,
                                                       std::int64_t rank) {
  return static_cast<std::uint64_t>(deepspeed_zero12_flat_elements(layout, rank) *
                                    workloads::dtype_bytes(layout.state().weight_dtype));
}

std::uint64_t deepspeed_zero12_model_states_bytes(const workloads::Layout& layout,
                                                  std::int64_t rank) {
  const std::vector<workloads::Shard> tensors = model_parallel_weights(layout, rank);
  const std::int64_t flat = deepspeed_zero12_flat_elements(layout, rank);
  const workloads::RankCoord c = layout.coord(rank);
  return deepspeed_torch_save_bytes(deepspeed_model_states(c.tp),
                                    flat_model_states_pickle_bytes(layout, tensors, flat),
                                    {deepspeed_zero12_model_states_data_bytes(layout, rank)});
}

std::uint64_t deepspeed_zero12_optimizer_data_bytes(const workloads::Layout& layout,
                                                    std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const auto partition = static_cast<std::uint64_t>(deepspeed_zero12_flat_elements(layout, rank) /
                                                    layout.parallel().dp);
  return 4 + partition * static_cast<std::uint64_t>(2 * workloads::dtype_bytes(s.optimizer_dtype) +
                                                    workloads::dtype_bytes(*s.master_dtype));
}

std::uint64_t deepspeed_zero12_optimizer_file_bytes(const workloads::Layout& layout,
                                                    std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const std::vector<workloads::Shard> tensors = model_parallel_weights(layout, rank);
  const std::int64_t dp = layout.parallel().dp;
  const std::int64_t flat = deepspeed_zero12_flat_elements(layout, rank);
  const std::int64_t partition = flat / dp;
  const workloads::RankCoord c = layout.coord(rank);
  PickleBytes p(kPartitionPickleBytes);
  for (int i = 0; i < 6; ++i) p.integer(partition);  // exp_avg, exp_avg_sq, fp32: numel, size
  std::int64_t elements = 0;
  for (const workloads::Shard& t : tensors) elements += shard_elements(t.extent);
  p.integer(c.dp == dp - 1 ? flat - elements : 0);  // group_paddings
  // param_alignment_paddings: a 0 per tensor of the group (APPEND for one, MARK ... APPENDS).
  const std::size_t n = tensors.size();
  p.add(2 * n + (n == 1 ? 1 : 2));
  p.list_batches(n);
  p.integer(dp);  // partition_count
  p.integer(dp);  // ds_config's train_batch_size
  p.put(kPartitionLeadingMemoPuts);
  count_fragments(p, tensors, c.dp * partition, (c.dp + 1) * partition);
  p.put(kPartitionTrailingMemoPuts);
  const auto moments =
      static_cast<std::uint64_t>(partition * workloads::dtype_bytes(s.optimizer_dtype));
  const auto master =
      static_cast<std::uint64_t>(partition * workloads::dtype_bytes(*s.master_dtype));
  return deepspeed_torch_save_bytes(deepspeed_optimizer_file(c.dp, c.tp), p.bytes(),
                                    {4, moments, moments, master});
}

}  // namespace ckpt::harness
