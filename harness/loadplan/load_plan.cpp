#include "harness/loadplan/load_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "harness/loadplan/dataset_load_plan.hpp"
#include "harness/models/model_zoo.hpp"
#include "harness/plan/file_naming.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

workloads::ModelSpec recorded_model(const std::string& name) {
  try {
    return load_model_argument(name);
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("model.name = \"{}\" (the writer's, in the manifest's config) cannot be "
                    "loaded: {} — a relative model file resolves against the working directory, "
                    "so run from where the checkpoint was written",
                    name, e.what()));
  }
}

}  // namespace

ReshardSpec load_spec(const Case& c) {
  ReshardSpec spec = reshard_spec(c);
  spec.reader = c.load.inference;
  spec.direct_alignment = 0;
  return spec;
}

ReshardSpec load_spec(const Manifest& manifest, std::int64_t tp, std::uint64_t gap_bytes) {
  const ManifestWriter& writer = manifest.writer;
  ReshardSpec spec;
  spec.writer = writer.parallel;
  spec.scale = manifest.layout.scale;  // as the stored pieces are scaled
  spec.seed = manifest.seed;
  spec.pattern = manifest.pattern;
  spec.alignment = writer.alignment;
  spec.chunk_bytes = writer.chunk_bytes;
  spec.shared_files = mapping_shares_files(manifest.layout.mapping);
  spec.backend = writer.backend;
  spec.model = recorded_model(writer.model);
  spec.reader = inference_layout(spec.model, spec.writer, writer.state, tp, gap_bytes);
  return spec;
}

std::vector<std::int64_t> inference_ranks(const RestoreSpec& layout) {
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(layout.parallel.world_size()));
  std::iota(ranks.begin(), ranks.end(), std::int64_t{0});
  return ranks;
}

Manifest decoded_manifest(const Manifest& manifest) {
  if (!manifest.writer.compression.enabled()) return manifest;
  Manifest decoded = manifest;
  decoded.writer.compression = CompressionSpec{};
  std::map<std::string, std::vector<std::size_t>> by_file;  // tensor indexes, by stored offset
  for (std::size_t i = 0; i < manifest.tensors.size(); ++i)
    by_file[manifest.tensors[i].file].push_back(i);
  std::map<std::string, std::uint64_t> sizes;
  for (auto& [file, pieces] : by_file) {
    std::stable_sort(pieces.begin(), pieces.end(), [&](std::size_t a, std::size_t b) {
      return manifest.tensors[a].file_offset < manifest.tensors[b].file_offset;
    });
    std::uint64_t at = 0;
    for (const std::size_t i : pieces) {
      ManifestTensor& t = decoded.tensors[i];
      t.file_offset = at;
      t.stored_bytes = 0;
      at += t.bytes;
    }
    sizes[file] = at;
  }
  for (ManifestFile& f : decoded.files) f.min_size = sizes[f.path];
  return decoded;
}

std::vector<RankPlan> load_plans(const Manifest& manifest, const ReshardSpec& spec,
                                 const std::vector<std::int64_t>& ranks,
                                 const std::filesystem::path& dir) {
  const std::string& writer = manifest.writer.backend;
  if (plans_datasets(writer) != plans_datasets(spec.backend)) {
    throw ReshardError(fmt::format(
        "backend.name = \"{}\" cannot load a checkpoint written with backend.name = \"{}\": {}",
        spec.backend, writer,
        plans_datasets(writer)
            ? "its files hold datasets, which only that backend reads; load with it"
            : "its files hold raw bytes, and that backend reads only its own datasets; load with "
              "posix, uring or mpiio"));
  }
  if (plans_datasets(writer)) return dataset_load_plans(manifest, spec, ranks, dir);
  if (manifest.writer.compression.enabled())
    return reshard_plans(decoded_manifest(manifest), spec, ranks, dir);
  return reshard_plans(manifest, spec, ranks, dir);
}

FileRanges load_ranges(const std::vector<RankPlan>& plans,
                       const std::vector<std::uint64_t>& offsets) {
  FileRanges out;
  std::unordered_map<std::string, std::size_t> index;  // path -> its index in out.files
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const ByteRange& r : plans[p].reshard.requests) {
      const std::string& path = plans[p].io.files[r.file].path;
      const auto [it, added] = index.try_emplace(path, out.files.size());
      if (added) out.files.push_back(path);
      out.ranges.push_back({it->second, r.file_offset, offsets[p] + r.memory_offset, r.length});
    }
  }
  return out;
}

LoadCounts load_counts(const std::vector<RankPlan>& plans) {
  LoadCounts counts;
  for (const RankPlan& p : plans) {
    counts.bytes_needed += p.reshard.bytes_needed;
    counts.bytes_read += p.reshard.bytes_read;
    counts.padding_bytes += p.reshard.padding_bytes;
    counts.requests += p.reshard.requests.size();
  }
  // The plans are exact and unaligned (load_spec): what they read beyond the needed bytes is the
  // bridged gaps.
  counts.bridged_bytes = counts.bytes_read - counts.bytes_needed;
  return counts;
}

}  // namespace ckpt::harness
