#include "harness/checkpoint/dcp_metadata.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <string_view>
#include <utility>

#include "harness/checkpoint/manifest.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/plan/item_framing.hpp"
#include "harness/plan/megatron_pt_files.hpp"
#include "harness/plan/stand_in_text.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

bool writes_dcp_metadata(const Case& c) {
  // A safetensors directory holds what transformers writes: the files and their index alone.
  return writes_distcp_items(c.directory_layout) && c.mapping == Mapping::file_per_rank &&
         c.format != CheckpointFormat::safetensors;
}

namespace {

// The name a manifest item's tensor has in .metadata.
std::string metadata_fqn(const ManifestTensor& item) {
  return std::string(workloads::state_kind_name(item.shard.state)) + "/" + item.shard.name;
}

}  // namespace

std::uint64_t dcp_metadata_bytes(const std::vector<ManifestTensor>& items) {
  std::uint64_t bytes = 550;
  std::set<std::string> tensors;
  std::set<std::int64_t> ranks;
  for (const ManifestTensor& item : items) {
    const std::string fqn = metadata_fqn(item);
    const std::uint64_t ndim = item.shard.global_shape.size();
    ranks.insert(item.rank);
    bytes +=
        tensors.insert(fqn).second ? fqn.size() + 180 + 10 * ndim : fqn.size() + 113 + 6 * ndim;
  }
  // Gathered plans: every rank's names and shapes reach the coordinator as objects of their own.
  if (ranks.size() > 1) bytes += 73 * tensors.size();
  return bytes;
}

namespace {

// The key Megatron-core's torch_dist save gives an item's tensor: the layers (and experts) of a
// name are one tensor, each layer's weight a chunk of it (ShardedTensor's prepend_axis_num), so
// the numbers of a name's parts are not in the key; the distributed optimizer's states are
// "optimizer.state.<state>.<key>" (DistributedOptimizer.sharded_param_state_fs_model_space).
std::string megatron_tensor_key(const ManifestTensor& item) {
  std::string key;
  std::size_t begin = 0;
  const std::string& name = item.shard.name;
  while (begin <= name.size()) {
    const std::size_t end = std::min(name.find('.', begin), name.size());
    const std::string_view part(name.data() + begin, end - begin);
    const bool number =
        !part.empty() && std::ranges::all_of(part, [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!number) key.append(key.empty() ? "" : ".").append(part);
    begin = end + 1;
  }
  switch (item.shard.state) {
    case workloads::StateKind::weight:
      return key;
    case workloads::StateKind::master:
      return "optimizer.state.fp32_param." + key;
    default:
      return "optimizer.state." + std::string(workloads::state_kind_name(item.shard.state)) + "." +
             key;
  }
}

}  // namespace

std::uint64_t megatron_dist_metadata_bytes(const std::vector<ManifestTensor>& items) {
  std::uint64_t bytes = 490;
  std::set<std::string> tensors;
  std::set<std::pair<std::string, std::int64_t>> tensor_writers;
  for (const ManifestTensor& item : items) {
    const std::string key = megatron_tensor_key(item);
    if (tensors.insert(key).second) bytes += key.size() + 56;
    bytes += key.size() + 233;
    // Each process's plan (all_local_plans) holds the properties and size of every tensor it
    // writes a chunk of; the first process's are the objects of the tensor's own entry.
    if (!tensor_writers.emplace(key, item.rank).second) continue;
    bytes += 116;
  }
  return bytes - 116 * tensors.size();
}

std::vector<ManifestTensor> with_empty_chunks(const Case& c,
                                              const std::vector<ManifestTensor>& items) {
  std::vector<ManifestTensor> chunks = items;
  if (c.parallel.zero_sharding == workloads::ZeroSharding::flat) return chunks;
  std::set<std::int64_t> ranks;
  for (const ManifestTensor& item : items) ranks.insert(item.rank);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  for (const std::int64_t rank : ranks) {
    for (workloads::Shard& shard : layout.empty_chunks(rank))
      chunks.push_back({.shard = std::move(shard), .rank = rank});
  }
  return chunks;
}

std::vector<CoordinatorFile> coordinator_files(const Case& c,
                                               const std::vector<ManifestTensor>& items) {
  std::vector<CoordinatorFile> files;
  if (!writes_dcp_metadata(c)) return files;
  const bool megatron = c.directory_layout == DirectoryLayout::megatron_dist;
  const std::uint64_t metadata_bytes = megatron ? megatron_dist_metadata_bytes(items)
                                                : dcp_metadata_bytes(with_empty_chunks(c, items));
  files.push_back(
      {kDcpMetadataName, stand_in_text("ckptbench stand-in for DCP's pickled Metadata: " +
                                           std::to_string(items.size()) + " chunks\n",
                                       metadata_bytes)});
  if (megatron) {
    files.push_back({"common.pt", stand_in_text("ckptbench stand-in for Megatron's common.pt\n",
                                                megatron_common_pt_bytes(c.model))});
    files.push_back(
        {"metadata.json",
         R"({"sharded_backend": "torch_dist", "sharded_backend_version": 1, "common_backend": "torch", "common_backend_version": 1})"});
  }
  return files;
}

double commit_coordinator_files(CheckpointStore& store, const Case& c,
                                const std::filesystem::path& dir,
                                const std::vector<ManifestTensor>& items) {
  if (!writes_dcp_metadata(c)) return 0;
  const auto start = Clock::now();
  for (const CoordinatorFile& f : coordinator_files(c, items))
    store.write_text(dir / f.name, f.text);
  return seconds_since(start);
}

}  // namespace ckpt::harness
