// The one reader of ckptbench-manifest.json (Manifest): untrusted JSON, bounded before it is
// parsed, every field typed and bounded through JsonField, so that the paths that read a Manifest
// never meet a wrong type, an absurd size or a tensor outside its file.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

#include "harness/checkpoint/manifest.hpp"
#include "harness/common/json_input.hpp"
#include "harness/memory/checksum.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// A manifest is bounded like any untrusted JSON, with room for a very large job's tensor list.
constexpr JsonLimits kManifestLimits{.max_bytes = std::uint64_t{1} << 30,
                                     .max_elements = std::size_t{1} << 24};
// No byte count, offset or element count of a checkpoint reaches 2^50 (1 PiB): a larger one is a
// damaged or hostile manifest, refused before anything is planned or allocated from it.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{1} << 50;
constexpr std::size_t kMaxDims = 8;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 24;

// The enumerator of `all` whose name `field` holds.
template <typename E, std::size_t N>
E choice(const JsonField& field, const std::array<E, N>& all, std::string_view (*name)(E)) {
  const std::string value = field.string();
  for (const E e : all) {
    if (name(e) == value) return e;
  }
  std::string names;
  for (const E e : all) names += (names.empty() ? "\"" : ", \"") + std::string(name(e)) + "\"";
  field.fail(fmt::format("\"{}\" is unknown to this ckptbench (it knows {})", value, names));
}

workloads::Dtype dtype_of(const JsonField& field,
                          workloads::Dtype (*parse)(std::string_view) = workloads::parse_dtype) {
  try {
    return parse(field.string());
  } catch (const std::invalid_argument& e) {
    field.fail(e.what());
  }
}

// The element counts of one shape field: each at most kMaxManifestBytes, as is their product.
std::vector<std::int64_t> shape_of(const JsonField& field) {
  std::vector<std::int64_t> dims;
  std::uint64_t product = 1;
  for (const JsonField& d : field.elements(kMaxDims)) {
    const std::uint64_t dim = d.count(kMaxManifestBytes);
    // Both factors are at most 2^50: the bound is checked by division, before the product could
    // wrap.
    if (dim != 0 && product > kMaxManifestBytes / dim) {
      field.fail(fmt::format("holds more than {} elements in all", kMaxManifestBytes));
    }
    product *= dim;
    dims.push_back(static_cast<std::int64_t>(dim));
  }
  return dims;
}

workloads::Shard shard_of(const JsonField& t) {
  workloads::Shard s;
  s.name = t.at("name").string();
  s.state = choice(t.at("state"),
                   std::array{workloads::StateKind::weight, workloads::StateKind::master,
                              workloads::StateKind::exp_avg, workloads::StateKind::exp_avg_sq},
                   workloads::state_kind_name);
  s.dtype = dtype_of(t.at("dtype"), workloads::parse_tensor_dtype);
  s.global_shape = shape_of(t.at("global_shape"));
  s.offset = shape_of(t.at("offset"));
  s.extent = shape_of(t.at("extent"));
  if (s.offset.size() != s.global_shape.size() || s.extent.size() != s.global_shape.size()) {
    t.fail("global_shape, offset and extent have different numbers of dimensions");
  }
  std::uint64_t elements = 1;
  for (std::size_t d = 0; d < s.global_shape.size(); ++d) {
    if (s.offset[d] + s.extent[d] > s.global_shape[d]) {
      t.at("extent").fail(fmt::format("dimension {} reaches past global_shape", d));
    }
    elements *= static_cast<std::uint64_t>(s.extent[d]);
  }
  s.flat_begin = static_cast<std::int64_t>(t.at("flat_begin").count(elements));
  s.flat_end = static_cast<std::int64_t>(t.at("flat_end").count(elements));
  if (s.flat_end < s.flat_begin)
    t.at("flat_end").fail(fmt::format("is below flat_begin ({})", s.flat_begin));
  s.bytes = s.elements() * workloads::dtype_bytes(s.dtype);
  if (const auto unscaled = t.find("unscaled")) s.unscaled = unscaled->boolean();
  return s;
}

// A tensors entry's `delta` (strategy.delta_every): runs inside the piece, in order and apart, in
// a file of this checkpoint (inside a listed file, when `files` is given), over a base named by
// `checkpoint`.
void read_delta(const JsonField& d, ManifestTensor& m,
                const std::map<std::string, std::uint64_t>* files) {
  if (m.checkpoint.empty())
    d.fail("needs the entry's `checkpoint`, the base checkpoint holding the piece whole");
  const JsonField file = d.at("file");
  m.delta_file = file.string();
  if (!inside_checkpoint(m.delta_file)) file.fail("must be a file inside the checkpoint");
  const auto listed = files == nullptr ? std::map<std::string, std::uint64_t>::const_iterator{}
                                       : files->find(m.delta_file);
  if (files != nullptr && listed == files->end())
    file.fail("names a file the manifest's `files` does not list");
  std::uint64_t end = 0;
  for (const JsonField& run : d.at("runs").elements()) {
    const std::vector<JsonField> fields = run.elements(4);
    if (fields.size() != 3 && fields.size() != 4)
      run.fail("must be [offset, bytes, file_offset] or, compressed, [..., stored_bytes]");
    const DeltaRun r{.offset = fields[0].count(m.bytes),
                     .bytes = fields[1].count(m.bytes),
                     .file_offset = fields[2].count(kMaxManifestBytes),
                     .stored_bytes = fields.size() == 4 ? fields[3].count(kMaxManifestBytes) : 0};
    if (fields.size() == 4 && r.stored_bytes == 0) fields[3].fail("must be above 0");
    if (r.bytes == 0 || r.offset < end || r.offset + r.bytes > m.bytes)
      run.fail(
          fmt::format("must be a non-empty run after the previous one inside the piece's {} "
                      "bytes",
                      m.bytes));
    if (files != nullptr && r.file_offset + r.file_bytes() > listed->second)
      run.fail(fmt::format("reaches past the min_size ({}) of {}", listed->second, m.delta_file));
    end = r.offset + r.bytes;
    m.delta.push_back(r);
  }
}

// One tensors entry; `files`: the manifest's files and their sizes.
ManifestTensor tensor_of(const JsonField& t, std::int64_t world_size,
                         const std::map<std::string, std::uint64_t>* files) {
  ManifestTensor m;
  m.shard = shard_of(t);
  m.rank = t.at("rank").integer(0, world_size - 1);
  if (const auto holder = t.find("holder")) m.holder = holder->integer(0, world_size - 1);
  const JsonField file = t.at("file");
  m.file = file.string();
  m.bytes = t.at("bytes").count(kMaxManifestBytes);
  // At most the shard's elements (fewer when model.scale divides them).
  const auto shard_bytes = static_cast<std::uint64_t>(m.shard.bytes);
  if (m.bytes > shard_bytes) {
    t.at("bytes").fail(
        fmt::format("must be at most (flat_end - flat_begin) × {} bytes = {}, found {}",
                    workloads::dtype_bytes(m.shard.dtype), shard_bytes, m.bytes));
  }
  m.file_offset = t.at("file_offset").count(kMaxManifestBytes);
  m.memory_offset = t.at("memory_offset").count(kMaxManifestBytes - m.bytes);
  m.data_key = t.at("data_key").count();
  m.checksum = t.at("checksum").string();
  if (const auto stored = t.find("stored_bytes")) m.stored_bytes = stored->count(kMaxManifestBytes);
  if (const auto source = t.find("checkpoint")) {
    m.checkpoint = source->string();
    if (!sibling_checkpoint_name(m.checkpoint))
      source->fail("must name a checkpoint directory of the same case directory");
  }
  if (const auto iteration = t.find("iteration")) m.iteration = iteration->integer(0);
  if (const auto delta = t.find("delta")) read_delta(*delta, m, files);
  // A file outside the checkpoint is refused by the read paths, naming the tensor; an earlier
  // checkpoint's file is checked against that checkpoint's manifest (selective_source_problem).
  if (files == nullptr || !inside_checkpoint(m.file) || !m.checkpoint.empty()) return m;
  const auto listed = files->find(m.file);
  if (listed == files->end()) file.fail("names a file the manifest's `files` does not list");
  if (m.file_offset + m.file_bytes() > listed->second) {
    t.at("file_offset")
        .fail(fmt::format("+ {} reaches past the file's min_size ({})",
                          m.stored_bytes > 0 ? "stored_bytes" : "bytes", listed->second));
  }
  return m;
}

DataPattern pattern_of(const JsonField& field) {
  return choice(
      field,
      std::array{DataPattern::random, DataPattern::zeros, DataPattern::bf16, DataPattern::trained},
      data_pattern_name);
}

workloads::ParallelSpec parallel_of(const JsonField& p) {
  workloads::ParallelSpec s;
  s.tp = p.at("tp").integer(1, kMaxWorldSize);
  s.pp = p.at("pp").integer(1, kMaxWorldSize);
  s.dp = p.at("dp").integer(1, kMaxWorldSize);
  s.ep = p.at("ep").integer(1, kMaxWorldSize);
  s.zero_stage = static_cast<int>(p.at("zero").integer(0, 3));
  // Manifests written before the key existed partitioned flat.
  if (const auto sharding = p.find("zero_sharding")) {
    s.zero_sharding = choice(
        *sharding, std::array{workloads::ZeroSharding::flat, workloads::ZeroSharding::per_tensor},
        workloads::zero_sharding_name);
  }
  s.vocab_divisor = p.at("vocab_divisor").integer(1, kMaxWorldSize);
  s.pp_first_stage_layers = p.at("pp_first_stage_layers").integer(0, kMaxWorldSize);
  s.pp_last_stage_layers = p.at("pp_last_stage_layers").integer(0, kMaxWorldSize);
  return s;
}

workloads::StateSpec state_of(const JsonField& config) {
  using workloads::Naming;
  using workloads::Sizing;
  using workloads::StateScope;
  const JsonField state = config.at("state");
  workloads::StateSpec s;
  s.scope = choice(state.at("scope"), std::array{StateScope::weights, StateScope::full},
                   workloads::state_scope_name);
  if (const auto naming = state.find("naming")) {
    s.naming = choice(*naming, std::array{Naming::megatron, Naming::hf}, workloads::naming_name);
  }
  s.weight_dtype = dtype_of(state.at("weight_dtype"));
  const JsonField master = state.at("master_dtype");
  s.master_dtype = master.string() == "none" ? std::nullopt : std::optional(dtype_of(master));
  s.optimizer_dtype = dtype_of(state.at("optimizer_dtype"));
  s.sizing = choice(config.at("model").at("sizing"), std::array{Sizing::exact, Sizing::dlio},
                    workloads::sizing_name);
  // model.weights, absent from the configuration of unquantized weights.
  if (const auto weights = config.at("model").find("weights")) {
    s.weights = choice(*weights, workloads::kWeightFormats, workloads::weight_format_name);
  }
  return s;
}

// strategy.compression*, absent from the configuration of a case that compresses nothing.
CompressionSpec compression_of(const JsonField& strategy) {
  CompressionSpec z;
  const auto codec = strategy.find("compression");
  if (!codec) return z;
  z.codec = choice(*codec, std::array{Compression::none, Compression::zstd, Compression::bytegroup},
                   compression_name);
  z.level = static_cast<int>(strategy.at("compression_level").integer(1, 22));
  z.unit =
      choice(strategy.at("compression_unit"),
             std::array{CompressionUnit::shard, CompressionUnit::chunk}, compression_unit_name);
  z.chunk_bytes = strategy.at("compression_chunk_bytes").count(kMaxManifestBytes);
  z.threads = static_cast<int>(strategy.at("compression_threads").integer(1, 256));
  return z;
}

// The configuration's parts that read paths plan from.
ManifestWriter writer_of(const JsonField& config) {
  ManifestWriter w;
  w.backend = config.at("backend").at("name").string();
  w.model = config.at("model").at("name").string();
  w.parallel = parallel_of(config.at("parallel"));
  w.state = state_of(config);
  const JsonField strategy = config.at("strategy");
  w.format = choice(strategy.at("format"),
                    std::array{CheckpointFormat::raw, CheckpointFormat::safetensors},
                    checkpoint_format_name);
  w.alignment = strategy.at("alignment").count(kMaxManifestBytes);
  w.chunk_bytes = strategy.at("chunk_bytes").count(kMaxManifestBytes);
  w.scale = config.at("model").at("scale").integer(1, static_cast<std::int64_t>(kMaxManifestBytes));
  w.pattern = pattern_of(config.at("data").at("pattern"));
  w.seed = config.at("data").at("seed").count();
  w.compression = compression_of(strategy);
  // strategy.framing, absent from the configuration of a checkpoint written before it existed.
  if (const auto framing = strategy.find("framing")) {
    w.framing = choice(*framing, std::array{true, false}, framing_name);
  }
  if (const auto every = strategy.find("selective_every"))
    w.selective.every = every->integer(1, 1024);
  if (const auto k = strategy.find("partial_experts")) w.selective.experts = k->integer(0, 1 << 20);
  if (const auto n = strategy.find("delta_every")) {
    w.selective.delta_every = n->integer(1, 1024);
    w.selective.block_bytes = strategy.at("delta_block_bytes").count(kMaxManifestBytes);
    if (w.selective.block_bytes == 0) strategy.at("delta_block_bytes").fail("must be above 0");
    w.selective.changed_per_million = static_cast<std::uint32_t>(
        std::lround(strategy.at("delta_changed_fraction").non_negative() * 1e6));
    if (w.selective.changed_per_million > 1'000'000)
      strategy.at("delta_changed_fraction").fail("must be at most 1");
  }
  return w;
}

ManifestLayout layout_of(const JsonField& m) {
  ManifestLayout l;
  l.world_size = m.at("world_size").integer(1, kMaxWorldSize);
  for (const JsonField& rank : m.at("ranks").elements())
    l.ranks.push_back(rank.integer(0, l.world_size - 1));
  l.scale = m.at("scale").integer(1, static_cast<std::int64_t>(kMaxManifestBytes));
  l.mapping = choice(m.at("mapping"),
                     std::array{Mapping::file_per_tensor, Mapping::file_per_rank,
                                Mapping::file_per_node, Mapping::shared_file},
                     mapping_name);
  l.directory_layout =
      choice(m.at("directory_layout"),
             std::array{DirectoryLayout::dcp, DirectoryLayout::megatron, DirectoryLayout::deepspeed,
                        DirectoryLayout::megatron_dist},
             directory_layout_name);
  return l;
}

// Every field, after the format and version were checked.
Manifest fields_of(const JsonField& m) {
  Manifest out;
  out.version = static_cast<int>(m.at("version").integer());
  out.campaign = m.at("campaign").string();
  out.case_index = m.at("case_index").integer(0);
  if (const auto step = m.find("step")) out.step = step->integer(0);
  if (const auto iteration = m.find("training_iteration"))
    out.training_iteration = iteration->integer(0);
  out.config_hash = m.at("config_hash").string();
  out.checkpoint_hash = m.at("checkpoint_hash").string();
  out.config = m.at("config").object();
  out.writer = writer_of(m.at("config"));
  out.layout = layout_of(m);
  out.pattern = pattern_of(m.at("data").at("pattern"));
  out.seed = m.at("data").at("seed").count();
  std::map<std::string, std::uint64_t> files;
  for (const JsonField& f : m.at("files").elements()) {
    const JsonField file = f.at("path");
    if (!inside_checkpoint(file.string())) {
      file.fail(
          fmt::format("names file \"{}\", which is not a file inside the checkpoint's directory",
                      file.string()));
    }
    out.files.push_back({file.string(), f.at("min_size").count(kMaxManifestBytes)});
    files[out.files.back().path] = out.files.back().min_size;
  }
  for (const JsonField& t : m.at("tensors").elements())
    out.tensors.push_back(tensor_of(t, out.layout.world_size, &files));
  return out;
}

// What this version cannot check, by name rather than as damage: another format, a version before
// this one (its checkpoint_hash covers less: the checkpoint must be written again), a newer one,
// another checksum algorithm.
void check_kind(const nlohmann::json& manifest, const fs::path& path) {
  const auto format = manifest.is_object() ? manifest.find("format") : manifest.end();
  if (!manifest.is_object() || format == manifest.end() || *format != kManifestFormat) {
    throw std::runtime_error(fmt::format("{}: not a ckptbench manifest", path.string()));
  }
  const auto version = manifest.find("version");
  const bool integer = version != manifest.end() && version->is_number_integer();
  const auto algorithm = manifest.find("checksum_algorithm");
  if (algorithm == manifest.end()) {
    throw std::runtime_error(fmt::format(
        "{}: manifest version {} has no `checksum_algorithm`: it was written by an older "
        "ckptbench, whose checksums "
        "and checkpoint_hash are not {}; this version cannot check it — write the checkpoint again",
        path.string(), version == manifest.end() ? "(missing)" : json_excerpt(*version),
        kChecksumAlgorithm));
  }
  if (integer && version->get<std::int64_t>() < kOldestReadManifestVersion) {
    throw std::runtime_error(
        fmt::format("{}: manifest version {} was written by an older ckptbench, whose "
                    "checkpoint_hash does not cover what "
                    "version {} checks (the tensor list and the training iteration), so this "
                    "ckptbench cannot tell whether the "
                    "checkpoint was changed — write the checkpoint again with this ckptbench",
                    path.string(), json_excerpt(*version), kOldestReadManifestVersion));
  }
  if (!integer || version->get<std::int64_t>() > kManifestVersion) {
    throw std::runtime_error(
        fmt::format("{}: manifest version {} is not one this ckptbench reads (it reads versions "
                    "{} to {}): written by a newer "
                    "ckptbench, or damaged",
                    path.string(), version == manifest.end() ? "(missing)" : json_excerpt(*version),
                    kOldestReadManifestVersion, kManifestVersion));
  }
  if (!algorithm->is_string() || algorithm->get<std::string>() != kChecksumAlgorithm) {
    throw std::runtime_error(
        fmt::format("{}: checksum_algorithm {} is not supported (this ckptbench reads and "
                    "writes {})",
                    path.string(), json_excerpt(*algorithm), kChecksumAlgorithm));
  }
}

// An error of untrusted JSON without the path it begins with: the messages here put what the
// file is between the two.
std::string after_path(const ConfigError& e, const fs::path& path) {
  return std::string(e.what()).substr(path.string().size() + 2);
}

Manifest manifest_of(const nlohmann::json& manifest, const fs::path& path) {
  check_kind(manifest, path);
  try {
    return fields_of(JsonField(manifest, {.file = path.string()}));
  } catch (const ConfigError& e) {
    throw std::runtime_error(
        fmt::format("{}: damaged manifest: {}", path.string(), after_path(e, path)));
  }
}

}  // namespace

std::string missing_manifest(const fs::path& dir) {
  return fmt::format(
      "{}: no manifest — the checkpoint in {} is incomplete (its writer failed or was "
      "interrupted) and cannot be restored",
      (dir / kManifestName).string(), dir.string());
}

Manifest read_manifest(const fs::path& dir) {
  const fs::path path = dir / kManifestName;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw std::runtime_error(missing_manifest(dir));
  nlohmann::json manifest;
  try {
    manifest = read_untrusted_json_file(path, {.file = path.string()}, kManifestLimits);
  } catch (const ConfigError& e) {
    throw std::runtime_error(
        fmt::format("{}: not a ckptbench manifest ({})", path.string(), after_path(e, path)));
  }
  return manifest_of(manifest, path);
}

Manifest parse_manifest(std::string_view text, const fs::path& path) {
  nlohmann::json manifest;
  try {
    manifest = parse_untrusted_json(text, {.file = path.string()}, kManifestLimits);
  } catch (const ConfigError& e) {
    throw std::runtime_error(
        fmt::format("{}: not a ckptbench manifest ({})", path.string(), after_path(e, path)));
  }
  return manifest_of(manifest, path);
}

std::vector<ManifestTensor> parse_manifest_tensors(std::string_view text) {
  const JsonSource source{.file = "(tensor entries of another process)"};
  const nlohmann::json entries = parse_untrusted_json(text, source, kManifestLimits);
  std::vector<ManifestTensor> tensors;
  for (const JsonField& t : JsonField(entries, source).elements())
    tensors.push_back(tensor_of(t, kMaxWorldSize, nullptr));
  return tensors;
}

}  // namespace ckpt::harness
