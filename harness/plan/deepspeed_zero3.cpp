#include "harness/plan/deepspeed_zero3.hpp"

#include <fmt/format.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/formats/torch_save_size.hpp"
#include "harness/plan/file_naming.hpp"

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
constexpr std::uint64_t kPlaceholderPickleBytes = 29;   // an empty tensor rebuilt from its storage
constexpr std::uint64_t kShapePickleBytes = 3;          // a torch.Size around its dims
constexpr std::uint64_t kModuleVersionPickleBytes = 4;  // a module's {"version": 1}
constexpr int kPlaceholderMemoPuts = 8;
constexpr int kFirstPlaceholderMemoPuts = 12;
constexpr int kModelStatesTrailingMemoPuts = 37;  // counters, ds_config, version

// Bytes of pickle protocol 2 as Python's pickler writes them: an int in 2, 3 or 5 bytes
// (BININT1, BININT2, BININT), a string as BINUNICODE, and each memo put or get of a memoized
// object in 2 bytes (BINPUT, BINGET) up to memo index 255 and in 5 (LONG_BINPUT, LONG_BINGET)
// above; a dict of more than 1000 items in batches (a MARK and a SETITEMS each).
class PickleBytes {
 public:
  explicit PickleBytes(std::uint64_t fixed) : bytes_(fixed) {}
  void add(std::uint64_t bytes) { bytes_ += bytes; }
  void integer(std::int64_t value) { bytes_ += value < 256 ? 2 : value < 65536 ? 3 : 5; }
  void text(std::string_view s) { bytes_ += 5 + s.size(); }
  void put(int count = 1) {
    for (int i = 0; i < count; ++i) bytes_ += memo_++ < 256 ? 2 : 5;
  }
  void get(std::uint64_t index) { bytes_ += index < 256 ? 2 : 5; }
  std::uint64_t next_index() const { return memo_; }
  void batches(std::size_t items) { bytes_ += items > 0 ? 2 * ((items - 1) / 1000) : 0; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_;
  std::uint64_t memo_ = 0;
};

// torch.save's archive of a DeepSpeed file: its records are named under the file's name
// without ".pt".
std::uint64_t torch_save_bytes(const std::string& file, std::uint64_t pickle_bytes,
                               const std::vector<std::uint64_t>& storages) {
  return torch_save_archive_bytes(std::string_view(file).substr(0, file.size() - 3), pickle_bytes,
                                  storages);
}

// The tensors one model-parallel rank's module holds, whole on its TP slice, in module order:
// the layout of the same job without data parallelism, where a TP rank above 0 also holds TP
// rank 0's TP-replicated tensors (the layout gives those to TP rank 0 alone).
std::vector<workloads::Shard> group_tensors(const workloads::Layout& layout, std::int64_t rank) {
  const workloads::ParallelSpec& p = layout.parallel();
  workloads::ParallelSpec single = p;
  single.dp = 1;
  single.ep = 1;
  single.zero_stage = 0;
  workloads::StateSpec weights = layout.state();
  weights.scope = workloads::StateScope::weights;
  weights.naming = layout.state().effective_naming();
  const workloads::Layout group(layout.model(), single, weights);
  const workloads::RankCoord c = layout.coord(rank);
  std::vector<workloads::Shard> own = group.shards(c.pp * p.tp + c.tp);
  if (c.tp == 0) return own;
  std::vector<workloads::Shard> tensors;
  auto next_own = own.begin();
  for (workloads::Shard& first : group.shards(c.pp * p.tp)) {
    if (first.extent == first.global_shape) {
      tensors.push_back(std::move(first));
    } else if (next_own != own.end()) {
      tensors.push_back(std::move(*next_own++));
    }
  }
  return tensors;
}

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

// The modules of a module tree holding exactly these parameters: the root and every dotted
// prefix of a parameter's name (each with its {"version": 1} in the state dict's _metadata).
std::set<std::string> module_names(const std::vector<workloads::Shard>& tensors) {
  std::set<std::string> modules{""};
  for (const workloads::Shard& s : tensors) {
    for (std::size_t dot = s.name.find('.'); dot != std::string::npos;
         dot = s.name.find('.', dot + 1))
      modules.insert(s.name.substr(0, dot));
  }
  return modules;
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
  p.batches(tensors.size());
  p.put(3);
  const std::set<std::string> modules = module_names(tensors);
  std::uint64_t version = 0;
  for (const std::string& module : modules) {
    p.text(module);
    p.add(kModuleVersionPickleBytes);
    p.put(2);
    if (module.empty()) {
      version = p.next_index();
      p.put();
    } else {
      p.get(version);
    }
  }
  p.batches(modules.size());
  p.put(2);
  const std::uint64_t optimizer_key = p.next_index();
  p.put(4);
  std::uint64_t size_type = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    p.text(tensors[i].name);
    p.put();
    if (i == 0) {
      size_type = p.next_index();
      p.put();
    } else {
      p.get(size_type);
    }
    for (const std::int64_t d : tensors[i].extent) p.integer(d);
    p.add(kShapePickleBytes);
    p.put(3);
  }
  p.batches(tensors.size());
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
  for (const SubGroup& g : sub_groups(layout, group_tensors(layout, rank))) elements += g.elements;
  return elements;
}

std::uint64_t deepspeed_zero3_optimizer_file_bytes(const workloads::Layout& layout,
                                                   std::int64_t rank) {
  const workloads::StateSpec& s = layout.state();
  const auto master = static_cast<std::uint64_t>(workloads::dtype_bytes(*s.master_dtype));
  const auto moments = static_cast<std::uint64_t>(workloads::dtype_bytes(s.optimizer_dtype));
  const std::vector<SubGroup> groups = sub_groups(layout, group_tensors(layout, rank));
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
  return torch_save_bytes(deepspeed_optimizer_file(c.dp, c.tp), pickle.bytes(), storages);
}

std::uint64_t deepspeed_zero3_model_states_bytes(const workloads::Layout& layout,
                                                 std::int64_t rank) {
  const std::vector<workloads::Shard> tensors = group_tensors(layout, rank);
  const std::vector<std::uint64_t> placeholders(tensors.size(), 0);  // empty storages
  const workloads::RankCoord c = layout.coord(rank);
  return torch_save_bytes(deepspeed_zero_model_states(c.dp, c.tp),
                          model_states_pickle_bytes(layout, tensors), placeholders);
}

}  // namespace ckpt::harness
