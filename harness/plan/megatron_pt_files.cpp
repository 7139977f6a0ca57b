#include "harness/plan/megatron_pt_files.hpp"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/formats/pickle_bytes.hpp"
#include "harness/formats/torch_save_pickle.hpp"
#include "harness/formats/torch_save_size.hpp"
#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

// Fitted to megatron_pt_files.jsonl: the args Namespace pickled alone but for the model's sizes
// in it, and the rest of the pickle that does not grow with the model (keys, counters, scheduler,
// rerun state, Python's and numpy's generator states, the parameter groups), with and without
// the optimizer's tensors. Python's generator state is that of Megatron's seed (1234): it pickles
// each of its 624 words in 5 or 7 bytes, so another position varies it by some tens of bytes.
constexpr std::uint64_t kArgsPickleBytes = 21752;
// common.pt of a torch_dist save: the args (--ckpt-format torch_dist), counters, the scheduler,
// the optimizer's sharding type and the content metadata, all but the model's sizes in the args.
constexpr std::uint64_t kCommonPickleBytes = 22380;
constexpr std::uint64_t kDistributedRestBytes = 9268;
constexpr std::uint64_t kOptimizerRestBytes = 9404;
constexpr std::uint64_t kOptimizerPerWeightBytes = 23;  // its dict in Adam's state
// The args fill the memo past 255 entries: every later memo reference takes 5 bytes.
constexpr std::uint64_t kArgsMemoEntries = 256;
constexpr TensorMemo kLongMemo{.rebuild = kArgsMemoEntries,
                               .storage = kArgsMemoEntries,
                               .storage_class = kArgsMemoEntries,
                               .cpu = kArgsMemoEntries,
                               .ordered_dict = kArgsMemoEntries};
constexpr std::uint64_t kModuleVersionBytes = 24;  // a module's {"version": 1}, its name aside
constexpr std::uint64_t kDistribOptimPickleBytes = 379;
// torch's CPU generator state, CUDA's generator state and the CUDA RNG tracker's one state.
constexpr std::uint64_t kRngStateBytes[] = {5056, 16, 16};
// The modules a GPT layer of megatron-core's local spec holds besides those of its weights.
constexpr std::string_view kLayerModulesWithoutWeights[] = {
    "self_attention.core_attention",
    "self_attention.core_attention.scale_mask_softmax",
    "self_attention.core_attention.attention_dropout",
    "self_attention.q_layernorm",
    "self_attention.k_layernorm",
    "pre_cross_attn_layernorm",
    "cross_attention",
    "cross_attn_bda"};

std::uint64_t pt_tensor_elements(const std::vector<std::int64_t>& shape) {
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

// The module tree's modules: the root, every dotted prefix of a weight's name, a GPT layer's
// modules without weights, the embedding's dropout and the rotary embedding.
std::set<std::string> megatron_module_names(const std::vector<workloads::Shard>& weights) {
  std::set<std::string> modules{"", "rotary_pos_emb"};
  for (const workloads::Shard& s : weights) {
    for (std::size_t dot = s.name.find('.'); dot != std::string::npos;
         dot = s.name.find('.', dot + 1))
      modules.insert(s.name.substr(0, dot));
    if (s.name.starts_with("embedding.")) modules.insert("embedding.embedding_dropout");
  }
  std::set<std::string> layers;
  for (const std::string& m : modules) {
    const std::size_t at = m.find("layers.");
    if (at != std::string::npos && m.find('.', at + 7) == std::string::npos) layers.insert(m);
  }
  for (const std::string& layer : layers) {
    for (const std::string_view extra : kLayerModulesWithoutWeights)
      modules.insert(layer + "." + std::string(extra));
  }
  return modules;
}

// A linear module's _extra_state (None without Transformer Engine) in the module's state dict.
std::set<std::string> extra_state_names(const std::vector<workloads::Shard>& weights) {
  std::set<std::string> names;
  for (const workloads::Shard& s : weights) {
    const std::string module = s.name.substr(0, s.name.rfind('.'));
    const std::string last = module.substr(module.rfind('.') + 1);
    if (last.starts_with("linear_") || last == "output_layer")
      names.insert(module + "._extra_state");
  }
  return names;
}

// The args' hidden_size, ffn_hidden_size, num_layers, num_attention_heads, num_query_groups,
// kv_channels and vocab_size.
void count_model_sizes(PickleBytes& p, const workloads::ModelSpec& model) {
  for (const std::int64_t v :
       {model.hidden_size, model.intermediate_size, model.num_hidden_layers,
        model.num_attention_heads, model.num_key_value_heads,
        model.head_dim > 0 ? model.head_dim : model.hidden_size / model.num_attention_heads,
        model.vocab_size})
    p.integer(v);
}

}  // namespace

bool megatron_pt_files(const Case& c, const workloads::Layout& layout) {
  const workloads::StateSpec& s = layout.state();
  return c.directory_layout == DirectoryLayout::megatron && c.mapping == Mapping::file_per_rank &&
         c.megatron_optimizer == MegatronOptimizer::gathered && layout.parallel().ep == 1 &&
         s.scope == workloads::StateScope::full && s.master_dtype.has_value() &&
         s.sizing == workloads::Sizing::exact;
}

PtFileBytes megatron_model_optim_rng_bytes(const workloads::Layout& layout, const Case& c,
                                           std::int64_t rank) {
  const std::vector<workloads::Shard> weights = model_parallel_weights(layout, rank);
  const bool optimizer_inside = !gathers_distributed_optimizer(c, layout);
  const workloads::StateSpec& s = layout.state();
  PickleBytes p(kArgsPickleBytes + (optimizer_inside ? kOptimizerRestBytes : kDistributedRestBytes),
                kArgsMemoEntries);
  count_model_sizes(p, layout.model());
  std::vector<std::uint64_t> storages;
  for (const workloads::Shard& w : weights) {
    p.text(w.name);
    p.put();
    count_tensor_with_own_storage(p, w.extent, storages.size(), kLongMemo);
    storages.push_back(pt_tensor_elements(w.extent) *
                       static_cast<std::uint64_t>(workloads::dtype_bytes(s.weight_dtype)));
  }
  for (const std::string& name : extra_state_names(weights)) {
    p.text(name);
    p.put();
    p.add(1);  // NONE
  }
  for (const std::string& module : megatron_module_names(weights))
    p.add(module.size() + kModuleVersionBytes);
  if (optimizer_inside) {
    // Megatron's parameter groups: the decayed weights (more than one dimension), then the rest.
    std::vector<const workloads::Shard*> order;
    for (const workloads::Shard& w : weights)
      if (w.extent.size() > 1) order.push_back(&w);
    for (const workloads::Shard& w : weights)
      if (w.extent.size() <= 1) order.push_back(&w);
    const auto moments = static_cast<std::uint64_t>(workloads::dtype_bytes(s.optimizer_dtype));
    for (std::size_t i = 0; i < order.size(); ++i) {
      p.integer(static_cast<std::int64_t>(i));  // Adam's state key and its group's entry
      p.integer(static_cast<std::int64_t>(i));
      p.add(kOptimizerPerWeightBytes);
      count_tensor_with_own_storage(p, {}, storages.size(), kLongMemo);
      storages.push_back(4);  // the step, fp32
      for (int m = 0; m < 2; ++m) {
        count_tensor_with_own_storage(p, order[i]->extent, storages.size(), kLongMemo);
        storages.push_back(pt_tensor_elements(order[i]->extent) * moments);
      }
    }
    const auto master = static_cast<std::uint64_t>(workloads::dtype_bytes(*s.master_dtype));
    for (const workloads::Shard* w : order) {
      count_tensor_with_own_storage(p, w->extent, storages.size(), kLongMemo);
      storages.push_back(pt_tensor_elements(w->extent) * master);
    }
  }
  for (const std::uint64_t bytes : kRngStateBytes) {
    count_tensor_with_own_storage(p, {static_cast<std::int64_t>(bytes)}, storages.size(),
                                  kLongMemo);
    storages.push_back(bytes);
  }
  PtFileBytes file{torch_save_archive_bytes("model_optim_rng", p.bytes(), storages), 0};
  for (const std::uint64_t bytes : storages) file.data += bytes;
  return file;
}

PtFileBytes megatron_distrib_optim_bytes(const workloads::Layout& layout, std::int64_t rank) {
  std::uint64_t elements = 0;
  for (const workloads::Shard& w : model_parallel_weights(layout, rank))
    elements += pt_tensor_elements(w.extent);
  // Each of param, exp_avg and exp_avg_sq names its element count in its storage's persistent id
  // and its size; then numel_unpadded.
  PickleBytes p(kDistribOptimPickleBytes);
  for (int i = 0; i < 7; ++i) p.integer(static_cast<std::int64_t>(elements));
  const std::uint64_t fp32 = 4 * elements;  // Megatron gathers into float32 tensors
  return {torch_save_archive_bytes("distrib_optim", p.bytes(), {fp32, fp32, fp32}), 3 * fp32};
}

std::uint64_t megatron_common_pt_bytes(const workloads::ModelSpec& model) {
  PickleBytes p(kCommonPickleBytes);
  count_model_sizes(p, model);
  return torch_save_archive_bytes("common", p.bytes(), {});
}

}  // namespace ckpt::harness
