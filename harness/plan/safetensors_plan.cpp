#include "harness/plan/safetensors_plan.hpp"

#include <fmt/format.h>

#include <numeric>

#include "harness/formats/safetensors_header.hpp"
#include "harness/plan/extent_builder.hpp"

namespace ckpt::harness {
namespace {

bool whole_slice(const workloads::Shard& s) {
  for (std::size_t d = 0; d < s.global_shape.size(); ++d) {
    if (s.offset[d] != 0 || s.extent[d] != s.global_shape[d]) return false;
  }
  return true;
}

std::int64_t slice_elements(const workloads::Shard& s) {
  return std::accumulate(s.extent.begin(), s.extent.end(), std::int64_t{1}, std::multiplies<>());
}

std::uint64_t scaled_size(std::int64_t bytes, std::int64_t element_bytes, std::int64_t scale) {
  const std::int64_t elements =
      std::max<std::int64_t>(1, bytes / element_bytes / std::max<std::int64_t>(1, scale));
  return static_cast<std::uint64_t>(elements * element_bytes);
}

// Orders a file's shards as the safetensors package stores them (safetensors_stored_before).
void sort_as_stored(std::vector<workloads::Shard>& shards, bool weights_only) {
  std::vector<std::pair<SafetensorsTensor, workloads::Shard>> keyed;
  keyed.reserve(shards.size());
  for (workloads::Shard& s : shards) {
    SafetensorsTensor key{safetensors_name(s, weights_only),
                          std::string(safetensors_dtype(s.dtype))};
    keyed.emplace_back(std::move(key), std::move(s));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return safetensors_stored_before(a.first, b.first);
  });
  for (std::size_t i = 0; i < shards.size(); ++i) shards[i] = std::move(keyed[i].second);
}

}  // namespace

std::vector<std::vector<std::size_t>> safetensors_file_split(
    const std::vector<std::uint64_t>& bytes, std::uint64_t limit) {
  std::vector<std::vector<std::size_t>> files;
  std::vector<std::size_t> open;
  std::uint64_t filled = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] > limit) {
      files.push_back({i});
      continue;
    }
    if (filled + bytes[i] > limit) {
      files.push_back(std::move(open));
      open.clear();
      filled = 0;
    }
    open.push_back(i);
    filled += bytes[i];
  }
  if (!open.empty()) files.push_back(std::move(open));
  return files;
}

std::string safetensors_name(const workloads::Shard& shard, bool weights_only) {
  std::string name =
      weights_only ? shard.name
                   : fmt::format("{}/{}", workloads::state_kind_name(shard.state), shard.name);
  if (!whole_slice(shard)) {
    std::string slice;
    for (std::size_t d = 0; d < shard.offset.size(); ++d) {
      slice += fmt::format("{}{}:{}", d == 0 ? "" : ",", shard.offset[d],
                           shard.offset[d] + shard.extent[d]);
    }
    name += "[" + slice + "]";
  }
  if (shard.flat_begin != 0 || shard.flat_end != slice_elements(shard)) {
    name += fmt::format("#{}-{}", shard.flat_begin, shard.flat_end);
  }
  return name;
}

std::vector<std::uint64_t> safetensors_shape(const workloads::Shard& shard,
                                             std::uint64_t elements) {
  const bool whole_range = shard.flat_begin == 0 && shard.flat_end == slice_elements(shard);
  // A scalar keeps its empty shape, as torch writes a 0-d tensor.
  if (shard.extent.empty() && elements == 1) return {};
  if (!whole_range || shard.extent.empty()) return {elements};
  std::vector<std::uint64_t> shape(shard.extent.begin(), shard.extent.end());
  const std::uint64_t row =
      std::accumulate(shape.begin() + 1, shape.end(), std::uint64_t{1}, std::multiplies<>());
  if (elements % row != 0) return {elements};
  shape[0] = elements / row;
  return shape;
}

SafetensorsFiles::SafetensorsFiles(const workloads::Layout& layout, const Case& c)
    : layout_(layout),
      c_(c),
      weights_only_(layout.state().scope == workloads::StateScope::weights) {
  if (!weights_only_) {
    files_ = layout.world_size();
    return;
  }
  const std::int64_t element_bytes = workloads::dtype_bytes(layout.state().weight_dtype);
  // Quantized weights' tensors have dtypes of their own: their sizes come from their shards.
  const bool tensor_dtypes = layout.state().weights != workloads::WeightFormat::unquantized;
  first_file_.reserve(static_cast<std::size_t>(layout.world_size()));
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    first_file_.push_back(files_);
    std::vector<std::uint64_t> sizes;
    if (tensor_dtypes) {
      for (const workloads::Shard& s : layout.shards(rank))
        sizes.push_back(scaled_bytes(s, c_.scale));
    } else {
      layout.for_each_shard_size(rank, [&](std::int64_t bytes) {
        sizes.push_back(scaled_size(bytes, element_bytes, c_.scale));
      });
    }
    files_ += static_cast<std::int64_t>(safetensors_file_split(sizes, c.max_shard_bytes).size());
  }
}

std::vector<std::pair<std::string, std::vector<workloads::Shard>>> SafetensorsFiles::group(
    std::int64_t rank) const {
  std::vector<std::pair<std::string, std::vector<workloads::Shard>>> groups;
  std::vector<workloads::Shard> shards = layout_.shards(rank);
  if (!weights_only_) {
    if (shards.empty()) return groups;
    sort_as_stored(shards, false);
    groups.emplace_back(fmt::format("rank-{:05d}-of-{:05d}.safetensors", rank, files_),
                        std::move(shards));
    return groups;
  }
  std::vector<std::uint64_t> sizes;
  sizes.reserve(shards.size());
  for (const workloads::Shard& s : shards) sizes.push_back(scaled_bytes(s, c_.scale));
  std::int64_t index = first_file_.at(static_cast<std::size_t>(rank));
  for (const std::vector<std::size_t>& members :
       safetensors_file_split(sizes, c_.max_shard_bytes)) {
    // One file in all is model.safetensors, as save_pretrained names an unsharded model.
    std::string name = files_ == 1
                           ? std::string(kSafetensorsSingleName)
                           : fmt::format("model-{:05d}-of-{:05d}.safetensors", ++index, files_);
    std::vector<workloads::Shard>& file =
        groups.emplace_back(std::move(name), std::vector<workloads::Shard>{}).second;
    for (const std::size_t i : members) file.push_back(std::move(shards[i]));
    sort_as_stored(file, true);
  }
  return groups;
}

void plan_safetensors_rank(const SafetensorsFiles& files, const Case& c, std::int64_t rank,
                           const std::filesystem::path& checkpoint_dir, RankPlan& plan) {
  const bool weights_only = c.state.scope == workloads::StateScope::weights;
  // A weights file holds what transformers writes, {"format": "pt"} alone (its loaders expect
  // it); a rank's full-state file also the checkpoint's attributes.
  std::map<std::string, std::string> metadata;
  if (!weights_only) metadata = plan.io.attributes;
  metadata["format"] = "pt";
  for (auto& group : files.group(rank)) {
    std::vector<SafetensorsTensor> tensors;
    std::uint64_t data = 0;
    for (const workloads::Shard& s : group.second) {
      const std::uint64_t bytes = scaled_bytes(s, c.scale);
      const auto element = static_cast<std::uint64_t>(workloads::dtype_bytes(s.dtype));
      tensors.push_back({safetensors_name(s, weights_only), std::string(safetensors_dtype(s.dtype)),
                         safetensors_shape(s, bytes / element), data, data + bytes});
      data += bytes;
    }
    std::string header = encode_safetensors_header(tensors, metadata);
    const std::uint64_t header_bytes = header.size();
    const std::uint64_t memory_base = plan.buffer_bytes;
    std::vector<backends::Extent> extents{{0, memory_base, header_bytes}};
    backends::FilePlan file;
    for (std::size_t i = 0; i < group.second.size(); ++i) {
      PlacedShard& placed = plan.shards.emplace_back();
      placed.bytes = tensors[i].end - tensors[i].begin;
      placed.rank = rank;
      placed.file = group.first;
      placed.file_offset = header_bytes + tensors[i].begin;
      placed.memory_offset = memory_base + placed.file_offset;
      placed.data_key = shard_data_key(group.second[i], c.seed, c.data);
      placed.geometry = shard_geometry(group.second[i], c.scale);
      placed.shard = std::move(group.second[i]);
      file.datasets.push_back(dataset_piece(placed));
      extents.push_back({placed.file_offset, placed.memory_offset, placed.bytes});
      plan.payload_bytes += placed.bytes;
    }
    file.path = (checkpoint_dir / group.first).string();
    file.extents = build_extents(std::move(extents), c.coalesce_bytes, c.chunk_bytes, 1);
    file.file_size = header_bytes + data;
    plan.io.files.push_back(std::move(file));
    plan.headers.push_back({group.first, memory_base, std::move(header)});
    plan.buffer_bytes = memory_base + header_bytes + data;
  }
}

}  // namespace ckpt::harness
