#include "harness/plan/deepspeed_state_dict.hpp"

#include <set>
#include <string_view>

#include "harness/formats/torch_save_size.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kShapePickleBytes = 3;          // a torch.Size around its dims
constexpr std::uint64_t kModuleVersionPickleBytes = 4;  // a module's {"version": 1}

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

}  // namespace

std::uint64_t deepspeed_torch_save_bytes(const std::string& file, std::uint64_t pickle_bytes,
                                         const std::vector<std::uint64_t>& storages) {
  return torch_save_archive_bytes(std::string_view(file).substr(0, file.size() - 3), pickle_bytes,
                                  storages);
}

void count_module_versions(PickleBytes& p, const std::vector<workloads::Shard>& tensors) {
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
  p.ordered_dict_batches(modules.size());
}

std::uint64_t count_module_metadata(PickleBytes& p, const std::vector<workloads::Shard>& tensors) {
  count_module_versions(p, tensors);
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
  p.ordered_dict_batches(tensors.size());
  return optimizer_key;
}

}  // namespace ckpt::harness
