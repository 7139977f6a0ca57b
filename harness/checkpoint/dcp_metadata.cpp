#include "harness/checkpoint/dcp_metadata.hpp"

#include <chrono>
#include <set>

#include "harness/checkpoint/manifest.hpp"
#include "harness/common/elapsed.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

bool writes_dcp_metadata(const Case& c) {
  // A safetensors directory holds what transformers writes: the files and their index alone.
  return (c.directory_layout == DirectoryLayout::dcp ||
          c.directory_layout == DirectoryLayout::megatron_dist) &&
         c.mapping == Mapping::file_per_rank && c.format != CheckpointFormat::safetensors;
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

std::uint64_t megatron_dist_metadata_bytes(const std::vector<ManifestTensor>& items) {
  std::uint64_t bytes = 400;
  std::set<std::string> tensors;
  for (const ManifestTensor& item : items) {
    const std::string fqn = metadata_fqn(item);
    const std::uint64_t ndim = item.shard.global_shape.size();
    if (tensors.insert(fqn).second) bytes += fqn.size() + 130 + 3 * ndim;
    bytes += fqn.size() + item.file.size() + 150 + 6 * ndim;
  }
  return bytes;
}

namespace {

std::string stand_in(std::uint64_t bytes, const std::string& head) {
  std::string text(bytes, '\0');
  for (std::size_t i = 0; i < text.size(); ++i)
    text[i] = i < head.size() ? head[i] : static_cast<char>('a' + i % 26);
  return text;
}

}  // namespace

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
  files.push_back({kDcpMetadataName,
                   stand_in(metadata_bytes, "ckptbench stand-in for DCP's pickled Metadata: " +
                                                std::to_string(items.size()) + " chunks\n")});
  if (megatron) {
    files.push_back(
        {"common.pt", stand_in(kCommonPtBytes, "ckptbench stand-in for Megatron's common.pt\n")});
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
