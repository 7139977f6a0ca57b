#include "harness/checkpoint/manifest.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/memory/checksum.hpp"

namespace ckpt::harness {
namespace {

void fsync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error(fmt::format("open {}: {}", path.string(), std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0)
    throw std::runtime_error(fmt::format("fsync {}: {}", path.string(), std::strerror(saved)));
}

}  // namespace

nlohmann::json manifest_tensors_json(const std::vector<ManifestTensor>& tensors) {
  nlohmann::json out = nlohmann::json::array();
  for (const ManifestTensor& t : tensors) {
    const workloads::Shard& s = t.shard;
    out.push_back({{"name", s.name},
                   {"state", workloads::state_kind_name(s.state)},
                   {"dtype", workloads::dtype_name(s.dtype)},
                   {"global_shape", s.global_shape},
                   {"offset", s.offset},
                   {"extent", s.extent},
                   {"flat_begin", s.flat_begin},
                   {"flat_end", s.flat_end},
                   {"rank", t.rank},
                   {"file", t.file},
                   {"file_offset", t.file_offset},
                   {"memory_offset", t.memory_offset},
                   {"bytes", t.bytes},
                   {"data_key", t.data_key},
                   {"checksum", t.checksum}});
    if (s.unscaled) out.back()["unscaled"] = true;
    if (t.holder >= 0) out.back()["holder"] = t.holder;
    if (t.stored_bytes > 0) out.back()["stored_bytes"] = t.stored_bytes;
    if (!t.checkpoint.empty()) out.back()["checkpoint"] = t.checkpoint;
    if (t.iteration) out.back()["iteration"] = *t.iteration;
    if (!t.delta_file.empty()) {
      nlohmann::json runs = nlohmann::json::array();
      for (const DeltaRun& r : t.delta) {
        runs.push_back({r.offset, r.bytes, r.file_offset});
        if (r.stored_bytes > 0) runs.back().push_back(r.stored_bytes);
      }
      out.back()["delta"] = {{"file", t.delta_file}, {"runs", std::move(runs)}};
    }
  }
  return out;
}

std::vector<ManifestTensor> manifest_tensors(
    const std::vector<RankPlan>& plans, const std::vector<std::vector<std::uint64_t>>& checksums) {
  std::vector<ManifestTensor> tensors;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t i = 0; i < plans[p].shards.size(); ++i) {
      const PlacedShard& ps = plans[p].shards[i];
      // Megatron's distributed optimizer: the DP rank the gather brought it from.
      const std::int64_t holder = ps.holder >= 0 && ps.holder != ps.rank ? ps.holder : -1;
      tensors.push_back({.shard = ps.shard,
                         .rank = ps.rank,
                         .holder = holder,
                         .file = ps.file,
                         .file_offset = ps.file_offset,
                         .memory_offset = ps.memory_offset,
                         .bytes = ps.bytes,
                         .data_key = ps.data_key,
                         .checksum = checksum_hex(checksums.at(p).at(i)),
                         .stored_bytes = ps.stored_bytes});
      tensors.back().shard.bytes =
          (ps.shard.flat_end - ps.shard.flat_begin) * workloads::dtype_bytes(ps.shard.dtype);
    }
  }
  return tensors;
}

namespace {

// The typed parts of a case's configuration that read paths plan from (ManifestWriter).
ManifestWriter writer_of(const Case& c) {
  return {.backend = c.backend,
          .model = c.model_argument,
          .parallel = c.parallel,
          .state = c.state,
          .format = c.format,
          .alignment = c.alignment,
          .chunk_bytes = c.chunk_bytes,
          .scale = c.scale,
          .pattern = c.data,
          .seed = c.seed,
          .compression = c.compression,
          .selective = c.selective,
          .framing = c.framing};
}

}  // namespace

Manifest make_manifest(const Case& c, std::int64_t world_size,
                       const std::vector<std::int64_t>& ranks, std::vector<ManifestTensor> tensors,
                       std::int64_t step, std::optional<std::int64_t> training_iteration) {
  std::map<std::string, std::uint64_t> file_sizes;
  for (const ManifestTensor& t : tensors) {
    for (const DeltaRun& r : t.delta) {
      auto& size = file_sizes[t.delta_file];
      size = std::max(size, r.file_offset + r.file_bytes());
    }
    if (!t.checkpoint.empty()) continue;  // the earlier checkpoint's manifest lists its file
    auto& size = file_sizes[t.file];
    size = std::max(size, t.file_offset + t.file_bytes());
  }
  Manifest m;
  m.campaign = c.campaign;
  m.case_index = c.index;
  m.step = step;
  m.training_iteration = training_iteration;
  m.config_hash = config_hash(c);
  m.checkpoint_hash = manifest_hash(checkpoint_hash(c), training_iteration, tensors);
  m.config = c.config;
  m.writer = writer_of(c);
  m.layout = {.world_size = world_size,
              .ranks = ranks,
              .scale = c.scale,
              .mapping = c.mapping,
              .directory_layout = c.directory_layout};
  m.pattern = c.data;
  m.seed = c.seed;
  for (const auto& [path, size] : file_sizes) m.files.push_back({path, size});
  m.tensors = std::move(tensors);
  return m;
}

nlohmann::json manifest_json(const Manifest& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const ManifestFile& f : m.files)
    files.push_back({{"path", f.path}, {"min_size", f.min_size}});
  nlohmann::json j = {{"format", kManifestFormat},
                      {"version", m.version},
                      {"campaign", m.campaign},
                      {"case_index", m.case_index},
                      {"step", m.step},
                      {"checksum_algorithm", kChecksumAlgorithm},
                      {"config_hash", m.config_hash},
                      {"checkpoint_hash", m.checkpoint_hash},
                      {"config", m.config},
                      {"world_size", m.layout.world_size},
                      {"ranks", m.layout.ranks},
                      {"scale", m.layout.scale},
                      {"mapping", mapping_name(m.layout.mapping)},
                      {"directory_layout", directory_layout_name(m.layout.directory_layout)},
                      {"data", {{"pattern", data_pattern_name(m.pattern)}, {"seed", m.seed}}},
                      {"files", std::move(files)},
                      {"tensors", manifest_tensors_json(m.tensors)}};
  if (m.training_iteration) j["training_iteration"] = *m.training_iteration;
  return j;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out)
      throw std::runtime_error(fmt::format("write {}: {}", temp.string(), std::strerror(errno)));
  }
  fsync_path(temp, O_RDONLY);
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("rename {} -> {}: {}", temp.string(), path.string(), ec.message()));
  fsync_path(path.parent_path(), O_RDONLY | O_DIRECTORY);
}

void commit_manifest(const std::filesystem::path& dir, const Manifest& manifest) {
  write_file_atomically(dir / kManifestName, manifest_json(manifest).dump());
}

bool inside_checkpoint(const std::string& file) {
  const std::filesystem::path path(file);
  return !file.empty() && !path.has_root_path() &&
         std::find(path.begin(), path.end(), std::filesystem::path("..")) == path.end();
}

bool sibling_checkpoint_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos;
}

namespace {

// Only what decides the checkpoint's bytes and where they go, from a case's `config`: restoring
// with another iteration count, cache policy, backend or budget is allowed.
nlohmann::json checkpoint_identity(const nlohmann::json& config) {
  nlohmann::json identity = nlohmann::json::object();
  for (const char* table : {"model", "parallel", "state", "ranks", "strategy"}) {
    if (config.contains(table)) identity[table] = config[table];
  }
  if (config.contains("data")) {
    identity["data"] = {{"pattern", config["data"].value("pattern", "")},
                        {"seed", config["data"].value("seed", 0)}};
  }
  // hdf5 stores datasets, the other backends raw bytes at the plan's offsets; a scaled-down hdf5
  // checkpoint has the datasets' leading dimensions divided by the scale unless shapes = "global".
  using Pointer = nlohmann::json::json_pointer;
  const bool hdf5 = config.value(Pointer("/backend/name"), "posix") == "hdf5";
  const bool scaled = config.value(Pointer("/model/scale"), 1) > 1;
  identity["format"] =
      !hdf5 ? "raw"
      : scaled && config.value(Pointer("/backend/hdf5/shapes"), "scaled") == "global"
          ? "hdf5-global-shapes"
          : "hdf5";
  if (config.contains("backend")) {
    identity["direct"] = config["backend"].value("direct", false);
    identity["direct_alignment"] = config["backend"].value("direct_alignment", 0);
  }
  return identity;
}

// {"parallel": {"tp": 8}} -> {"parallel.tp": 8}
void flatten(const nlohmann::json& value, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  if (!value.is_object() || value.empty()) {
    out[prefix] = value;
    return;
  }
  for (const auto& [key, inner] : value.items())
    flatten(inner, prefix.empty() ? key : prefix + "." + key, out);
}

// The identity with campaign keys for names: `direct` is backend.direct, and the derived
// `format` becomes the keys it comes from when `format_keys` (else it is left out).
std::map<std::string, nlohmann::json> identity_keys(const nlohmann::json& config,
                                                    bool format_keys) {
  std::map<std::string, nlohmann::json> keys;
  flatten(checkpoint_identity(config), "", keys);
  keys.erase("format");
  for (const char* key : {"direct", "direct_alignment"}) {
    if (const auto node = keys.extract(key)) keys["backend." + std::string(key)] = node.mapped();
  }
  if (!format_keys) return keys;
  for (const char* pointer : {"/backend/name", "/backend/hdf5/shapes"}) {
    const nlohmann::json::json_pointer at(pointer);
    std::string key = pointer + 1;
    std::replace(key.begin(), key.end(), '/', '.');
    keys[key] = config.contains(at) ? config[at] : nlohmann::json();
  }
  return keys;
}

}  // namespace

std::string checkpoint_hash(const Case& c) {
  return checkpoint_hash(c.config);
}

std::string checkpoint_hash(const nlohmann::json& config) {
  return checksum_hex(checksum64(checkpoint_identity(config).dump()));
}

std::string checkpoint_difference(const nlohmann::json& recorded_config, const Case& c) {
  const nlohmann::json recorded_identity = checkpoint_identity(recorded_config);
  const nlohmann::json wanted_identity = checkpoint_identity(c.config);
  if (recorded_identity == wanted_identity) return "";
  const bool format = recorded_identity.value("format", "") != wanted_identity.value("format", "");
  const std::map<std::string, nlohmann::json> recorded = identity_keys(recorded_config, format);
  const std::map<std::string, nlohmann::json> wanted = identity_keys(c.config, format);
  const auto text = [](const std::map<std::string, nlohmann::json>& keys, const std::string& key) {
    const auto it = keys.find(key);
    return it == keys.end() || it->second.is_null() ? std::string("(none)") : it->second.dump();
  };
  std::set<std::string> all;
  for (const auto& entry : recorded) all.insert(entry.first);
  for (const auto& entry : wanted) all.insert(entry.first);
  std::vector<std::string> differences;
  for (const std::string& key : all) {
    const std::string was = text(recorded, key), is = text(wanted, key);
    if (was == is) continue;
    differences.push_back(differences.empty()
                              ? fmt::format("{} = {}, this campaign has {} = {}", key, was, key, is)
                              : fmt::format("{}: {} vs {}", key, was, is));
  }
  if (differences.empty()) return "another file format";
  std::string joined = differences.front();
  for (std::size_t i = 1; i < differences.size(); ++i)
    joined += (i == 1 ? " (and " : ", ") + differences[i];
  return differences.size() > 1 ? joined + ")" : joined;
}

}  // namespace ckpt::harness
