#include "harness/checkpoint/manifest.hpp"

#include "harness/plan/file_naming.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/common/json_input.hpp"
#include "harness/memory/checksum.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/checkpoint/manifest_checks.hpp"

namespace ckpt::harness {
namespace {

void fsync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("open {}: {}", path.string(), std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(fmt::format("fsync {}: {}", path.string(), std::strerror(saved)));
}


// Manifests before version 2 have no checksum_algorithm: their checksums and checkpoint_hash
// came from a hash of ckptbench's own, which this version cannot recompute, so it refuses them
// by name rather than as "a checkpoint of another configuration".
void check_checksum_algorithm(const nlohmann::json& manifest, const std::filesystem::path& path) {
  const auto it = manifest.find("checksum_algorithm");
  if (it == manifest.end()) {
    throw std::runtime_error(fmt::format(
        "{}: manifest version {} has no `checksum_algorithm`: it was written by an older ckptbench, whose checksums "
        "and checkpoint_hash are not {}; this version cannot check it — write the checkpoint again",
        path.string(), manifest.value("version", nlohmann::json()).dump(), kChecksumAlgorithm));
  }
  if (!it->is_string() || it->get<std::string>() != kChecksumAlgorithm) {
    throw std::runtime_error(fmt::format("{}: checksum_algorithm {} is not supported (this ckptbench reads and "
                                         "writes {})",
                                         path.string(), it->dump(), kChecksumAlgorithm));
  }
}

// A manifest is bounded like any untrusted JSON, with room for a very large job's tensor list.
constexpr JsonLimits kManifestLimits{.max_bytes = std::uint64_t{1} << 30, .max_elements = std::size_t{1} << 24};
// No byte count, offset or element count of a checkpoint reaches 2^50 (1 PiB): a larger one is a
// damaged or hostile manifest, refused before anything is planned or allocated from it.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{1} << 50;
constexpr std::size_t kMaxDims = 8;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 24;

// A damaged or hostile manifest must not make a read path open anything outside its checkpoint.
bool inside_checkpoint(const std::string& file) {
  const std::filesystem::path path(file);
  return !file.empty() && !path.has_root_path() &&
         std::find(path.begin(), path.end(), std::filesystem::path("..")) == path.end();
}

// The element counts of one shape field: each at most kMaxManifestBytes, as is their product.
std::vector<std::uint64_t> shape_of(const JsonField& field) {
  std::vector<std::uint64_t> dims;
  std::uint64_t product = 1;
  for (const JsonField& d : field.elements(kMaxDims)) {
    dims.push_back(d.count(kMaxManifestBytes));
    // Both factors are at most 2^50: the bound is checked by division, before the product could wrap.
    if (dims.back() != 0 && product > kMaxManifestBytes / dims.back()) {
      field.fail(fmt::format("holds more than {} elements in all", kMaxManifestBytes));
    }
    product *= dims.back();
  }
  return dims;
}

void check_tensor(const JsonField& t, std::int64_t world_size, const std::map<std::string, std::uint64_t>& files) {
  t.at("name").string();
  t.at("state").string();
  const JsonField dtype = t.at("dtype");
  std::uint64_t element_bytes = 0;
  try {
    element_bytes = static_cast<std::uint64_t>(workloads::dtype_bytes(workloads::parse_dtype(dtype.string())));
  } catch (const std::invalid_argument& e) {
    dtype.fail(e.what());
  }
  const std::vector<std::uint64_t> global = shape_of(t.at("global_shape"));
  const std::vector<std::uint64_t> offset = shape_of(t.at("offset"));
  const std::vector<std::uint64_t> extent = shape_of(t.at("extent"));
  if (offset.size() != global.size() || extent.size() != global.size()) {
    t.fail("global_shape, offset and extent have different numbers of dimensions");
  }
  std::uint64_t elements = 1;
  for (std::size_t d = 0; d < global.size(); ++d) {
    if (offset[d] + extent[d] > global[d]) t.at("extent").fail(fmt::format("dimension {} reaches past global_shape", d));
    elements *= extent[d];
  }
  const std::uint64_t begin = t.at("flat_begin").count(elements);
  const std::uint64_t end = t.at("flat_end").count(elements);
  if (end < begin) t.at("flat_end").fail(fmt::format("is below flat_begin ({})", begin));
  t.at("rank").integer(0, world_size - 1);
  if (const auto holder = t.find("holder")) holder->integer(0, world_size - 1);
  const JsonField file = t.at("file");
  const std::uint64_t bytes = t.at("bytes").count(kMaxManifestBytes);
  // At most the shard's elements (fewer when model.scale divides them).
  if (bytes > (end - begin) * element_bytes) {
    t.at("bytes").fail(fmt::format("must be at most (flat_end - flat_begin) × {} bytes = {}, found {}", element_bytes,
                                   (end - begin) * element_bytes, bytes));
  }
  // A file outside the checkpoint is refused by plans_from_manifest, naming the tensor.
  if (!inside_checkpoint(file.string())) return;
  const auto listed = files.find(file.string());
  if (listed == files.end()) file.fail("names a file the manifest's `files` does not list");
  const std::uint64_t file_offset = t.at("file_offset").count(kMaxManifestBytes);
  if (file_offset + bytes > listed->second) t.at("file_offset").fail(fmt::format("+ bytes reaches past the file's min_size ({})", listed->second));
  t.at("memory_offset").count(kMaxManifestBytes - bytes);
  t.at("data_key").count();
  t.at("checksum").string();
}

// The configuration tables and keys that restore, load and reshard read from a manifest.
void check_recorded_config(const JsonField& config) {
  for (const char* table : {"backend", "model", "parallel", "state", "strategy"}) config.at(table).object();
  config.at("backend").at("name").string();
  config.at("model").at("name").string();
  if (const auto scope = config.at("state").find("scope")) scope->string();
  if (const auto tp = config.at("parallel").find("tp")) tp->integer(1, kMaxWorldSize);
  for (const char* key : {"alignment", "chunk_bytes"}) {
    if (const auto value = config.at("strategy").find(key)) value->count(kMaxManifestBytes);
  }
}

// An error of untrusted JSON without the path it begins with: the messages here put what the
// file is between the two.
std::string after_path(const ConfigError& e, const std::filesystem::path& path) {
  return std::string(e.what()).substr(path.string().size() + 2);
}

// Every field of a manifest that a read path takes, typed and bounded, so that the paths that
// read it never meet a wrong type, an absurd size or a tensor outside its file.
void check_manifest_fields(const nlohmann::json& manifest, const std::filesystem::path& path) {
  const JsonField m(manifest, {.file = path.string()});
  m.at("version").integer();
  m.at("campaign").string();
  m.at("case_index").integer(0);
  if (const auto step = m.find("step")) step->integer(0);
  if (const auto iteration = m.find("training_iteration")) iteration->integer(0);
  m.at("config_hash").string();
  m.at("checkpoint_hash").string();
  check_recorded_config(m.at("config"));
  const std::int64_t world_size = m.at("world_size").integer(1, kMaxWorldSize);
  for (const JsonField& rank : m.at("ranks").elements()) rank.integer(0, world_size - 1);
  m.at("scale").integer(1, kMaxManifestBytes);
  m.at("mapping").string();
  m.at("directory_layout").string();
  m.at("data").at("pattern").string();
  m.at("data").at("seed").count();
  std::map<std::string, std::uint64_t> files;
  for (const JsonField& f : m.at("files").elements()) {
    const JsonField file = f.at("path");
    if (!inside_checkpoint(file.string())) {
      file.fail(fmt::format("names file \"{}\", which is not a file inside the checkpoint's directory", file.string()));
    }
    files[file.string()] = f.at("min_size").count(kMaxManifestBytes);
  }
  for (const JsonField& t : m.at("tensors").elements()) check_tensor(t, world_size, files);
}

}  // namespace

workloads::Shard shard_from_json(const nlohmann::json& t) {
  workloads::Shard s;
  s.name = t.at("name").get<std::string>();
  const std::string state = t.at("state").get<std::string>();
  for (auto kind : {workloads::StateKind::weight, workloads::StateKind::master, workloads::StateKind::exp_avg,
                    workloads::StateKind::exp_avg_sq}) {
    if (workloads::state_kind_name(kind) == state) s.state = kind;
  }
  s.dtype = workloads::parse_dtype(t.at("dtype").get<std::string>());
  s.global_shape = t.at("global_shape").get<std::vector<std::int64_t>>();
  s.offset = t.at("offset").get<std::vector<std::int64_t>>();
  s.extent = t.at("extent").get<std::vector<std::int64_t>>();
  s.flat_begin = t.at("flat_begin").get<std::int64_t>();
  s.flat_end = t.at("flat_end").get<std::int64_t>();
  s.bytes = (s.flat_end - s.flat_begin) * workloads::dtype_bytes(s.dtype);
  return s;
}

nlohmann::json manifest_tensors(const std::vector<RankPlan>& plans,
                                const std::vector<std::vector<std::uint64_t>>& checksums) {
  nlohmann::json tensors = nlohmann::json::array();
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t i = 0; i < plans[p].shards.size(); ++i) {
      const PlacedShard& ps = plans[p].shards[i];
      const workloads::Shard& s = ps.shard;
      tensors.push_back({{"name", s.name}, {"state", workloads::state_kind_name(s.state)},
                         {"dtype", workloads::dtype_name(s.dtype)}, {"global_shape", s.global_shape},
                         {"offset", s.offset}, {"extent", s.extent}, {"flat_begin", s.flat_begin},
                         {"flat_end", s.flat_end}, {"rank", ps.rank}, {"file", ps.file},
                         {"file_offset", ps.file_offset}, {"memory_offset", ps.memory_offset},
                         {"bytes", ps.bytes}, {"data_key", ps.data_key},
                         {"checksum", checksum_hex(checksums.at(p).at(i))}});
      // Megatron's distributed optimizer: the DP rank the gather brought it from.
      if (ps.holder >= 0 && ps.holder != ps.rank) tensors.back()["holder"] = ps.holder;
    }
  }
  return tensors;
}

nlohmann::json make_manifest(const Case& c, std::int64_t world_size, const std::vector<std::int64_t>& ranks,
                             nlohmann::json tensors, std::int64_t step) {
  std::map<std::string, std::uint64_t> file_sizes;
  for (const auto& t : tensors) {
    auto& size = file_sizes[t.at("file").get<std::string>()];
    size = std::max(size, t.at("file_offset").get<std::uint64_t>() + t.at("bytes").get<std::uint64_t>());
  }
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [path, size] : file_sizes) files.push_back({{"path", path}, {"min_size", size}});
  const std::string hash = manifest_hash(checkpoint_hash(c), tensors);
  return {{"format", "ckptbench-manifest"}, {"version", kManifestVersion}, {"campaign", c.campaign},
          {"case_index", c.index}, {"step", step}, {"checksum_algorithm", kChecksumAlgorithm},
          {"config_hash", config_hash(c)}, {"checkpoint_hash", hash}, {"config", c.config},
          {"world_size", world_size}, {"ranks", ranks}, {"scale", c.scale}, {"mapping", mapping_name(c.mapping)},
          {"directory_layout", directory_layout_name(c.directory_layout)},
          {"data", {{"pattern", data_pattern_name(c.data)}, {"seed", c.seed}}},
          {"files", std::move(files)}, {"tensors", std::move(tensors)}};
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("write {}: {}", temp.string(), std::strerror(errno)));
  }
  fsync_path(temp, O_RDONLY);
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) throw std::runtime_error(fmt::format("rename {} -> {}: {}", temp.string(), path.string(), ec.message()));
  fsync_path(path.parent_path(), O_RDONLY | O_DIRECTORY);
}

void commit_manifest(const std::filesystem::path& dir, const nlohmann::json& manifest) {
  write_file_atomically(dir / kManifestName, manifest.dump());
}

nlohmann::json read_manifest(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kManifestName;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error(fmt::format("{}: no manifest — the checkpoint in {} is incomplete (its writer failed or "
                                         "was interrupted) and cannot be restored",
                                         path.string(), dir.string()));
  }
  nlohmann::json manifest;
  try {
    manifest = read_untrusted_json_file(path, {.file = path.string()}, kManifestLimits);
  } catch (const ConfigError& e) {
    throw std::runtime_error(fmt::format("{}: not a ckptbench manifest ({})", path.string(), after_path(e, path)));
  }
  check_manifest(manifest, path);
  return manifest;
}

nlohmann::json parse_manifest(std::string_view text, const std::filesystem::path& path) {
  nlohmann::json manifest;
  try {
    manifest = parse_untrusted_json(text, {.file = path.string()}, kManifestLimits);
  } catch (const ConfigError& e) {
    throw std::runtime_error(fmt::format("{}: not a ckptbench manifest ({})", path.string(), after_path(e, path)));
  }
  check_manifest(manifest, path);
  return manifest;
}

void check_manifest(const nlohmann::json& manifest, const std::filesystem::path& path) {
  const auto format = manifest.is_object() ? manifest.find("format") : manifest.end();
  if (!manifest.is_object() || format == manifest.end() || *format != "ckptbench-manifest") {
    throw std::runtime_error(fmt::format("{}: not a ckptbench manifest", path.string()));
  }
  check_checksum_algorithm(manifest, path);
  try {
    check_manifest_fields(manifest, path);
  } catch (const ConfigError& e) {
    throw std::runtime_error(fmt::format("{}: damaged manifest: {}", path.string(), after_path(e, path)));
  }
}

std::vector<RankPlan> plans_from_manifest(const nlohmann::json& manifest, const Case& c,
                                          const std::vector<std::int64_t>& ranks,
                                          const std::filesystem::path& dir) {
  std::map<std::int64_t, RankPlan> by_rank;
  for (std::int64_t r : ranks) by_rank[r].rank = r;
  for (const auto& t : manifest.at("tensors")) {
    const auto it = by_rank.find(t.at("rank").get<std::int64_t>());
    if (it == by_rank.end()) continue;
    PlacedShard ps;
    ps.shard = shard_from_json(t);
    ps.rank = it->first;
    ps.file = t.at("file").get<std::string>();
    if (!inside_checkpoint(ps.file)) {
      throw std::runtime_error(fmt::format("tensor {} names file \"{}\", which is not a file inside {}",
                                           t.value("name", "?"), ps.file, dir.string()));
    }
    ps.file_offset = t.at("file_offset").get<std::uint64_t>();
    ps.memory_offset = t.at("memory_offset").get<std::uint64_t>();
    ps.bytes = t.at("bytes").get<std::uint64_t>();
    ps.data_key = t.at("data_key").get<std::uint64_t>();
    ps.geometry = shard_geometry(ps.shard, manifest.value("scale", std::int64_t{1}));
    it->second.shards.push_back(std::move(ps));
  }
  const std::uint64_t align = std::max<std::uint64_t>(1, c.alignment);
  std::vector<RankPlan> plans;
  for (auto& [rank, plan] : by_rank) {
    std::map<std::string, std::vector<backends::Extent>> per_file;
    std::map<std::string, std::vector<backends::DatasetPiece>> pieces;
    std::vector<std::string> order;
    for (const PlacedShard& ps : plan.shards) {
      if (!per_file.contains(ps.file)) order.push_back(ps.file);
      const std::uint64_t length = c.io.direct ? (ps.bytes + align - 1) / align * align : ps.bytes;
      per_file[ps.file].push_back({ps.file_offset, ps.memory_offset, length});
      pieces[ps.file].push_back(dataset_piece(ps));
      plan.payload_bytes += ps.bytes;
      plan.buffer_bytes = std::max(plan.buffer_bytes, (ps.memory_offset + ps.bytes + align - 1) / align * align);
    }
    for (const std::string& file : order) {
      backends::FilePlan fp;
      fp.path = (dir / file).string();
      fp.extents = build_extents(std::move(per_file[file]), c.coalesce_bytes, c.chunk_bytes, c.io.direct ? align : 1);
      fp.shared = mapping_shares_files(c.mapping);
      fp.datasets = std::move(pieces[file]);
      plan.io.files.push_back(std::move(fp));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
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
    identity["data"] = {{"pattern", config["data"].value("pattern", "")}, {"seed", config["data"].value("seed", 0)}};
  }
  // hdf5 stores datasets, the other backends raw bytes at the plan's offsets; a scaled-down hdf5
  // checkpoint has the datasets' leading dimensions divided by the scale unless shapes = "global".
  using Pointer = nlohmann::json::json_pointer;
  const bool hdf5 = config.value(Pointer("/backend/name"), "posix") == "hdf5";
  const bool scaled = config.value(Pointer("/model/scale"), 1) > 1;
  identity["format"] = !hdf5 ? "raw"
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
void flatten(const nlohmann::json& value, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (!value.is_object() || value.empty()) {
    out[prefix] = value;
    return;
  }
  for (const auto& [key, inner] : value.items()) flatten(inner, prefix.empty() ? key : prefix + "." + key, out);
}

// The identity with campaign keys for names: `direct` is backend.direct, and the derived
// `format` becomes the keys it comes from when `format_keys` (else it is left out).
std::map<std::string, nlohmann::json> identity_keys(const nlohmann::json& config, bool format_keys) {
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

std::string checkpoint_hash(const Case& c) { return checkpoint_hash(c.config); }

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
    differences.push_back(differences.empty() ? fmt::format("{} = {}, this campaign has {} = {}", key, was, key, is)
                                              : fmt::format("{}: {} vs {}", key, was, is));
  }
  if (differences.empty()) return "another file format";
  std::string joined = differences.front();
  for (std::size_t i = 1; i < differences.size(); ++i) joined += (i == 1 ? " (and " : ", ") + differences[i];
  return differences.size() > 1 ? joined + ")" : joined;
}

}  // namespace ckpt::harness
