#include "harness/plan/deepspeed_zero0.hpp"

#include <string>
#include <vector>

#include "harness/formats/pickle_bytes.hpp"
#include "harness/formats/torch_save_pickle.hpp"
#include "harness/plan/deepspeed_state_dict.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

// Read off DeepSpeed 0.19.8's files with the measuring script's ds_config and fitted to every
// measured one: the bytes that do not grow with the model, and the memo puts of its fixed parts
// (buffer_names to the state's dict; the parameter group; fp32_groups' lists; the counters,
// ds_config and version).
constexpr std::uint64_t kUnfusedPickleBytes = 1044;
constexpr int kOptimizerLeadingMemoPuts = 11, kParamGroupMemoPuts = 17, kFp32GroupsMemoPuts = 3,
              kTrailingMemoPuts = 33;
constexpr std::uint64_t kFloatStorageGlobal = 20;  // GLOBAL torch FloatStorage
// The weights' memo indices: the rebuild function, "storage", their storage class, "cpu", and
// the OrderedDict global (the module's state dict put it first).
constexpr TensorMemo kWeightMemo{
    .rebuild = 5, .storage = 6, .storage_class = 7, .cpu = 9, .ordered_dict = 2};

std::uint64_t elements_in(const std::vector<std::int64_t>& shape) {
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

// The module's state dict: the first weight spells out the rebuild function, "storage", its
// storage class, its key and "cpu"; the others reuse them but for their own storage's key.
void count_weights(PickleBytes& p, const std::vector<workloads::Shard>& weights,
                   workloads::Dtype weight_dtype) {
  p.put(4);  // the file's dict, "module", OrderedDict, the state dict
  for (std::size_t i = 0; i < weights.size(); ++i) {
    p.text(weights[i].name);
    p.put();
    if (i > 0) {
      count_tensor_with_own_storage(p, weights[i].extent, i, kWeightMemo);
      continue;
    }
    count_first_persistent_id(p, weight_dtype, 0);
    count_tensor_after_storage_key(p, weights[i].extent, kWeightMemo.ordered_dict);
  }
  p.ordered_dict_batches(weights.size());
}

// Adam's state per weight ({step, exp_avg, exp_avg_sq}, each a tensor of its own storage; the
// first step spells out the fp32 storage class and each key once), the parameter group and
// fp32_groups' copies. Returns the memo index of the "optimizer" key.
std::uint64_t count_optimizer(PickleBytes& p, const std::vector<workloads::Shard>& weights) {
  const std::uint64_t optimizer_key = p.next_index() + 2;  // after buffer_names and its list
  p.put(kOptimizerLeadingMemoPuts);
  TensorMemo fp32 = kWeightMemo;
  std::uint64_t step_key = 0, exp_avg_key = 0, exp_avg_sq_key = 0;
  std::size_t storage = weights.size();
  for (std::size_t i = 0; i < weights.size(); ++i) {
    p.integer(static_cast<std::int64_t>(i));
    p.add(2);  // EMPTY_DICT, MARK
    p.put();
    if (i == 0) {
      step_key = p.next_index();
      p.put();  // "step", its text among the fixed bytes as the other keys'
      p.get(kWeightMemo.rebuild);
      p.add(2);
      p.get(kWeightMemo.storage);
      p.add(kFloatStorageGlobal);
      fp32.storage_class = p.next_index();
      p.put();
      p.text(std::to_string(storage));
      p.put();
      p.get(kWeightMemo.cpu);
      count_tensor_after_storage_key(p, {}, kWeightMemo.ordered_dict);
      exp_avg_key = p.next_index();
      p.put();
      count_tensor_with_own_storage(p, weights[i].extent, storage + 1, fp32);
      exp_avg_sq_key = p.next_index();
      p.put();
      count_tensor_with_own_storage(p, weights[i].extent, storage + 2, fp32);
    } else {
      p.get(step_key);
      count_tensor_with_own_storage(p, {}, storage, fp32);
      p.get(exp_avg_key);
      count_tensor_with_own_storage(p, weights[i].extent, storage + 1, fp32);
      p.get(exp_avg_sq_key);
      count_tensor_with_own_storage(p, weights[i].extent, storage + 2, fp32);
    }
    p.add(1);  // SETITEMS
    storage += 3;
  }
  p.add(weights.size() >= 2 ? 2 * (weights.size() / 1000) : 0);  // a plain dict's batches
  p.put(kParamGroupMemoPuts);
  for (std::size_t i = 0; i < weights.size(); ++i) p.integer(static_cast<std::int64_t>(i));
  p.list_batches(weights.size());
  p.put(kFp32GroupsMemoPuts);
  for (const workloads::Shard& w : weights)
    count_tensor_with_own_storage(p, w.extent, storage++, fp32);
  p.list_batches(weights.size());
  return optimizer_key;
}

}  // namespace

bool deepspeed_zero0_files(const Case& c, const workloads::Layout& layout) {
  const workloads::ParallelSpec& p = layout.parallel();
  const workloads::StateSpec& s = layout.state();
  return c.directory_layout == DirectoryLayout::deepspeed && c.mapping == Mapping::file_per_rank &&
         p.zero_stage == 0 && p.pp == 1 && p.ep == 1 && s.scope == workloads::StateScope::full &&
         s.master_dtype.has_value() && s.sizing == workloads::Sizing::exact;
}

std::uint64_t deepspeed_zero0_model_states_data_bytes(const workloads::Layout& layout,
                                                      std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const auto per_element = static_cast<std::uint64_t>(
      workloads::dtype_bytes(s.weight_dtype) + 2 * workloads::dtype_bytes(s.optimizer_dtype) +
      workloads::dtype_bytes(*s.master_dtype));
  std::uint64_t bytes = 0;
  for (const workloads::Shard& w : model_parallel_weights(layout, rank))
    bytes += 4 + elements_in(w.extent) * per_element;  // and Adam's fp32 step
  return bytes;
}

std::uint64_t deepspeed_zero0_model_states_bytes(const workloads::Layout& layout,
                                                 std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const std::vector<workloads::Shard> weights = model_parallel_weights(layout, rank);
  PickleBytes p(kUnfusedPickleBytes);
  count_weights(p, weights, s.weight_dtype);
  count_module_versions(p, weights);
  const std::uint64_t optimizer_key = count_optimizer(p, weights);
  for (int i = 0; i < 3; ++i) p.integer(layout.parallel().dp);  // samples, dp size, batch
  p.put(kTrailingMemoPuts);
  p.get(optimizer_key);  // ds_config's "optimizer" key
  // Storages in the order the pickle meets them: the weights, per weight its step and moments,
  // the fp32 copies.
  const auto weight = static_cast<std::uint64_t>(workloads::dtype_bytes(s.weight_dtype));
  const auto moment = static_cast<std::uint64_t>(workloads::dtype_bytes(s.optimizer_dtype));
  const auto master = static_cast<std::uint64_t>(workloads::dtype_bytes(*s.master_dtype));
  std::vector<std::uint64_t> storages;
  for (const workloads::Shard& w : weights) storages.push_back(elements_in(w.extent) * weight);
  for (const workloads::Shard& w : weights)
    storages.insert(storages.end(),
                    {4, elements_in(w.extent) * moment, elements_in(w.extent) * moment});
  for (const workloads::Shard& w : weights) storages.push_back(elements_in(w.extent) * master);
  return deepspeed_torch_save_bytes(deepspeed_model_states(layout.coord(rank).tp), p.bytes(),
                                    storages);
}

}  // namespace ckpt::harness
