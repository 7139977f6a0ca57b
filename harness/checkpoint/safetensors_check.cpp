#include "harness/checkpoint/safetensors_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/safetensors_index.hpp"
#include "harness/formats/safetensors_header.hpp"
#include "harness/plan/safetensors_plan.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

bool weights_only(const Manifest& manifest) {
  return manifest.writer.state.scope == workloads::StateScope::weights;
}

// What the manifest says of one tensor in its file, as a reader sees it in the header.
struct Expected {
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t file_offset = 0;
  std::uint64_t bytes = 0;
};

// The manifest's entries by file, keyed by their safetensors names.
std::map<std::string, std::map<std::string, Expected>> expected_files(
    const std::vector<ManifestTensor>& tensors, bool weights) {
  std::map<std::string, std::map<std::string, Expected>> files;
  for (const ManifestTensor& t : tensors) {
    Expected e;
    e.dtype = std::string(safetensors_dtype(t.shard.dtype));
    e.file_offset = t.file_offset;
    e.bytes = t.bytes;
    e.shape = safetensors_shape(
        t.shard, e.bytes / static_cast<std::uint64_t>(workloads::dtype_bytes(t.shard.dtype)));
    files[t.file][safetensors_name(t.shard, weights)] = std::move(e);
  }
  return files;
}

// `size`: the file's, as the store lists it; null when it is not there.
std::optional<std::string> header_problem(CheckpointStore& store, const fs::path& path,
                                          const std::uint64_t* size,
                                          const std::map<std::string, Expected>& expected) {
  const std::string file = path.string();
  if (size == nullptr) return file + ": file: missing (the checkpoint is incomplete)";
  SafetensorsHeader header;
  try {
    header = read_safetensors_header(
        *size,
        [&store, &path](std::uint64_t offset, std::uint64_t length) {
          return store.read_bytes(path, offset, length);
        },
        file);
  } catch (const std::runtime_error& e) {  // SafetensorsError, or the store's read error
    return e.what();
  }
  for (const SafetensorsTensor& t : header.tensors) {
    const std::string where = fmt::format("{}: tensor \"{}\"", file, t.name);
    const auto it = expected.find(t.name);
    if (it == expected.end())
      return where + ": not in the checkpoint's manifest (the header was changed)";
    const Expected& e = it->second;
    if (t.dtype != e.dtype)
      return fmt::format("{} field \"dtype\": {}, the manifest says {}", where, t.dtype, e.dtype);
    if (t.shape != e.shape) {
      return fmt::format("{} field \"shape\": {}, the manifest says {}", where,
                         nlohmann::json(t.shape).dump(), nlohmann::json(e.shape).dump());
    }
    // The manifest's file offsets count from the start of the file, data_offsets from the header's
    // end.
    const std::uint64_t begin = e.file_offset - std::min(e.file_offset, header.header_bytes);
    if (e.file_offset < header.header_bytes || t.begin != begin || t.end - t.begin != e.bytes) {
      return fmt::format(
          "{} field \"data_offsets\": [{}, {}], the manifest places it at file bytes [{}, {}] "
          "and the header ends at byte {}",
          where, t.begin, t.end, e.file_offset, e.file_offset + e.bytes, header.header_bytes);
    }
  }
  if (header.tensors.size() != expected.size()) {
    for (const auto& entry : expected) {
      const std::string& name = entry.first;
      const bool found =
          std::any_of(header.tensors.begin(), header.tensors.end(),
                      [&name](const SafetensorsTensor& t) { return t.name == name; });
      if (!found)
        return fmt::format("{}: tensor \"{}\": missing from the header, the manifest lists it",
                           file, name);
    }
  }
  return std::nullopt;
}

std::optional<std::string> index_problem(CheckpointStore& store, const fs::path& dir,
                                         const std::vector<ManifestTensor>& tensors, bool weights,
                                         std::size_t files) {
  const fs::path path = dir / kSafetensorsIndexName;
  const std::optional<std::string> text = store.read_text(path);
  if (!text) {
    if (files <= 1) return std::nullopt;  // one file: a loader opens it without an index
    return fmt::format("{}: missing — the checkpoint's {} safetensors files are found through it",
                       path.string(), files);
  }
  const nlohmann::json index = nlohmann::json::parse(*text, nullptr, false);
  if (index.is_discarded() || !index.is_object())
    return fmt::format("{}: not a JSON object", path.string());
  const nlohmann::json expected = safetensors_index(tensors, weights);
  for (const char* field : {"weight_map", "metadata"}) {
    const auto it = index.find(field);
    if (it == index.end()) return fmt::format("{}: {}: missing", path.string(), field);
    if (*it == expected[field]) continue;
    if (std::string(field) == "metadata") {
      return fmt::format("{}: metadata: {}, the manifest's tensors give {}", path.string(),
                         it->dump(), expected[field].dump());
    }
    if (!it->is_object())
      return fmt::format("{}: weight_map: not an object of tensor names", path.string());
    for (const auto& [name, file] : expected[field].items()) {
      const auto listed = it->find(name);
      if (listed == it->end())
        return fmt::format("{}: weight_map: tensor \"{}\" is missing", path.string(), name);
      if (*listed != file) {
        return fmt::format("{}: weight_map: tensor \"{}\" is in {}, the manifest says {}",
                           path.string(), name, listed->dump(), file.dump());
      }
    }
    for (const auto& [name, file] : it->items()) {
      if (!expected[field].contains(name)) {
        return fmt::format("{}: weight_map: tensor \"{}\" is not in the checkpoint's manifest",
                           path.string(), name);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> safetensors_checkpoint_problem(CheckpointStore& store,
                                                          const fs::path& dir,
                                                          const Manifest& manifest, int process,
                                                          int processes) {
  const bool weights = weights_only(manifest);
  const std::vector<ManifestTensor>& tensors = manifest.tensors;
  const std::map<std::string, std::map<std::string, Expected>> files =
      expected_files(tensors, weights);
  if (process == 0) {
    if (auto problem = index_problem(store, dir, tensors, weights, files.size())) return problem;
  }
  if (process >= static_cast<int>(files.size())) return std::nullopt;  // no file to check
  const std::map<std::string, std::uint64_t> sizes = store.file_sizes(dir);
  std::size_t i = 0;
  for (const auto& [file, expected] : files) {
    if (static_cast<int>(i++ % static_cast<std::size_t>(processes)) != process) continue;
    const auto size = sizes.find(file);
    const std::uint64_t* listed = size == sizes.end() ? nullptr : &size->second;
    if (auto problem = header_problem(store, dir / file, listed, expected)) return problem;
  }
  return std::nullopt;
}

}  // namespace ckpt::harness
