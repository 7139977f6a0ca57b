#include "harness/cli/load_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "backends/registry.hpp"
#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/checkpoint/object_checkpoint_store.hpp"
#include "harness/checkpoint/safetensors_check.hpp"
#include "harness/comm/comm.hpp"
#include "harness/exec/cache_policy.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/load/load_storage.hpp"
#include "harness/load/planned_load.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/plan/training_state.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// Loading reads bytes at the manifest's file offsets: a checkpoint whose backend stored none
// (null) holds no weights to load. One of its own format (hdf5 datasets) loads as TP slices read
// as hyperslabs by that backend (--tp, --backend hdf5); a backend of its own format reads no other
// backend's files.
void check_stored_bytes(const fs::path& dir, const Manifest& manifest,
                        const LoadCommandOptions& o) {
  const std::string& backend = manifest.writer.backend;
  for (const backends::BackendInfo& info : backends::list_backends()) {
    if (info.name == o.backend && !info.capabilities.raw_layout && o.backend != backend) {
      throw std::runtime_error(fmt::format(
          "{}: written with backend.name = \"{}\", and --backend {} reads only the files of its "
          "own format; load it with a backend that reads raw bytes (posix, uring, mpiio)",
          dir.string(), backend, o.backend));
    }
    if (info.name != backend) continue;
    if (!info.capabilities.stores_data) {
      throw std::runtime_error(
          fmt::format("{}: written with backend.name = \"{}\", which stores no data: its files "
                      "hold none of the weights its "
                      "manifest lists, so there is nothing to load; write the checkpoint with a "
                      "backend that stores it (posix, "
                      "uring, mpiio) and campaign.keep = true",
                      dir.string(), backend));
    }
    if (!info.capabilities.raw_layout && (o.tp == 0 || o.backend != backend)) {
      throw std::runtime_error(fmt::format(
          "{}: written with backend.name = \"{}\", which stores its own self-describing format, "
          "not the raw bytes at the manifest's offsets that `ckptbench load` reads {}; load its "
          "TP slices with --tp N --backend {} (hyperslabs of its datasets), or write it with "
          "posix, uring or mpiio (strategy.format = \"safetensors\" for Hugging Face files)",
          dir.string(), backend, o.tp == 0 ? "whole" : "through --backend " + o.backend, backend));
    }
  }
}

// What CHECKPOINT is when it is not a checkpoint directory: each its own message, naming the fix.
void check_checkpoint_directory(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) {
    throw std::runtime_error(
        fmt::format("{}: no such file or directory — give a checkpoint directory, the one holding "
                    "{} (e.g. TARGET/CAMPAIGN/case-0000/step_0000001)",
                    dir.string(), kManifestName));
  }
  if (!fs::is_directory(status)) {
    const bool manifest = dir.filename() == kManifestName;
    throw std::runtime_error(
        manifest
            ? fmt::format("{} is the manifest itself: give its directory, {}", dir.string(),
                          dir.parent_path().string())
            : fmt::format(
                  "{} is a file, not a checkpoint directory — give the directory that holds {}",
                  dir.string(), kManifestName));
  }
  if (fs::exists(dir / kManifestName, ec)) return;
  std::string latest;
  if (std::ifstream in(dir / "latest"); in >> latest) {
    throw std::runtime_error(
        fmt::format("{} is a case directory, not a checkpoint: give one of its checkpoints, e.g. "
                    "the latest, {}",
                    dir.string(), (dir / latest).string()));
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (fs::exists(entry.path() / kManifestName, ec)) {
      throw std::runtime_error(
          fmt::format("{} holds checkpoints but is not one: give one of them, e.g. {}",
                      dir.string(), entry.path().string()));
    }
  }
  throw std::runtime_error(
      fmt::format("{}: no {} — not a checkpoint directory, or a checkpoint whose writer failed or "
                  "was interrupted (a checkpoint is complete once its manifest is written)",
                  dir.string(), kManifestName));
}

// What loading checks of the manifest before it trusts any data (read_manifest refused a version
// this ckptbench cannot check): files inside the checkpoint (std::runtime_error, exit 2), then
// damage (DamagedCheckpoint, exit 1): the tensor list and training iteration against its
// checkpoint_hash, a safetensors checkpoint's headers and index.
void check_manifest(CheckpointStore& store, const fs::path& dir, const Manifest& manifest) {
  if (auto problem = manifest_path_problem(manifest, dir)) {
    throw std::runtime_error(
        fmt::format("{}: damaged manifest: {}", (dir / kManifestName).string(), *problem));
  }
  if (auto problem = manifest_hash_problem(manifest, dir / kManifestName))
    throw DamagedCheckpoint(*problem);
  if (manifest.writer.format != CheckpointFormat::safetensors) return;
  if (auto problem = safetensors_checkpoint_problem(store, dir, manifest))
    throw DamagedCheckpoint(*problem);
}

// The checkpoint's files, in the manifest's order, at their actual sizes (one listing of an object
// store).
FileRanges checkpoint_files(CheckpointStore& store, const fs::path& dir, const Manifest& manifest) {
  const std::string_view scope = workloads::state_scope_name(manifest.writer.state.scope);
  if (manifest.writer.state.scope != workloads::StateScope::weights) {
    throw std::runtime_error(
        fmt::format("{}: holds state.scope = \"{}\" (weights and optimizer state in the same "
                    "files); without --tp `ckptbench "
                    "load` reads every file whole, so it loads weights-only checkpoints — load "
                    "this checkpoint's weights with "
                    "--tp N (the slices of inference TP N planned from the manifest, e.g. --tp {}, "
                    "the writer's), or restore "
                    "full state with --phase restore",
                    dir.string(), scope, manifest.writer.parallel.tp));
  }
  const std::map<std::string, std::uint64_t> sizes = store.file_sizes(dir);
  std::vector<std::pair<std::string, std::uint64_t>> sized;
  for (const ManifestFile& f : manifest.files) {
    const fs::path path = dir / f.path;
    const auto size = sizes.find(f.path);
    if (size == sizes.end())
      throw std::runtime_error(
          fmt::format("{}: missing (the checkpoint is incomplete)", path.string()));
    sized.emplace_back(path.string(), size->second);
  }
  return place_files(sized);
}

// The first tensor whose loaded bytes differ from the pattern, as a message, or "".
// Verification runs in the destination's memory space (device kernels for cuda).
std::string verify_loaded(const Manifest& manifest, const FileRanges& files, const fs::path& dir,
                          const Buffer& memory) {
  // The tensors as placed shards in the destination, so that their pattern runs (a tensor's
  // bytes are a function of its global index: ShardGeometry) come from the one place that
  // makes them for fill and restore.
  RankPlan placed;
  for (const ManifestTensor& t : manifest.tensors) {
    const std::string path = (dir / t.file).string();
    const auto file = std::find(files.files.begin(), files.files.end(), path);
    if (file == files.files.end())
      return "tensor " + t.shard.name + ": its file " + path + " was not loaded";
    // place_files: one range a file, in the files' order.
    const ByteRange& whole = files.ranges[static_cast<std::size_t>(file - files.files.begin())];
    PlacedShard& ps = placed.shards.emplace_back();
    ps.shard = t.shard;
    ps.geometry = shard_geometry(ps.shard, manifest.layout.scale);
    ps.memory_offset = whole.memory_offset + t.file_offset;
    ps.bytes = t.bytes;
    ps.data_key =
        training_key(t.data_key, t.iteration_in(manifest.iteration()));  // a [training] state
  }
  std::vector<std::pair<std::size_t, std::size_t>> owner;
  const std::vector<PatternRange> ranges = shard_pattern_ranges({placed}, {0}, &owner);
  if (ranges.empty()) return "";
  const std::optional<Mismatch> bad = memory.first_mismatch(ranges, manifest.pattern);
  if (!bad) return "";
  const std::size_t index = owner[bad->range].second;
  const ManifestTensor& t = manifest.tensors.at(index);
  const std::uint64_t shard_byte =
      ranges[bad->range].offset - placed.shards[index].memory_offset + bad->offset;
  return fmt::format("verification failed: tensor {} at byte {} (file {} offset {})", t.shard.name,
                     shard_byte, t.file, t.file_offset + shard_byte);
}

// The loader's settings and the destination's memory as the options give them.
LoadSettings settings_of(const LoadCommandOptions& o) {
  LoadSettings settings = o.settings;
  settings.method = parse_load_method(o.method).value_or(LoadMethod::pipelined);
  return settings;
}

// --set backend.<--backend>.KEY=VALUE, as a campaign's [backend.<name>] table; make_backend checks
// the keys and values.
backends::BackendOptions backend_options(const LoadCommandOptions& o) {
  const std::string table = "backend." + o.backend + ".";
  backends::BackendOptions options;
  for (const std::string& set : o.sets) {
    const auto equals = set.find('=');
    if (equals == std::string::npos || !set.starts_with(table) || equals == table.size()) {
      throw std::runtime_error(fmt::format(
          "--set {}: give {}KEY=VALUE, an option of --backend {} (`ckptbench backends` lists "
          "them)",
          set, table, o.backend));
    }
    options[set.substr(table.size(), equals - table.size())] = set.substr(equals + 1);
  }
  return options;
}

LoadStorage storage_of(const LoadCommandOptions& o) {
  return {.backend = o.backend, .options = backend_options(o)};
}

// Before any I/O: --backend names a backend this build runs that can serve --method as asked.
void check_load_backend(const LoadCommandOptions& o) {
  const std::vector<backends::BackendInfo> infos = backends::list_backends();
  const auto info = std::find_if(infos.begin(), infos.end(), [&](const backends::BackendInfo& b) {
    return b.name == o.backend;
  });
  if (info == infos.end()) {
    backends::validate_backend(o.backend, {});  // throws, suggesting the closest name
  } else if (!info->available) {
    throw std::runtime_error(
        fmt::format("--backend {} is unavailable here: {} (CMake option {}; `ckptbench backends` "
                    "lists what this build can run)",
                    o.backend, info->reason, info->cmake_option));
  } else if (auto problem = load_backend_problem(o.backend, info->capabilities, settings_of(o),
                                                 kLoadCommandNames)) {
    throw std::runtime_error(*problem);
  } else if (!info->capabilities.stores_data && o.verify) {
    throw std::runtime_error(
        fmt::format("--backend {} reads nothing back (capabilities: stores_data = false), so the "
                    "loaded bytes cannot be verified: add --no-verify to time the loader's own "
                    "overhead, or load through a backend that reads the files",
                    o.backend));
  }
}

bool needs_mpi(const std::string& backend) {
  for (const backends::BackendInfo& info : backends::list_backends()) {
    if (info.name == backend) return info.needs_mpi;
  }
  return false;
}

// Where the checkpoint is kept: the file system, or the objects of an object-store backend (a
// connection of its own, which checks the endpoint, credentials and bucket before any data moves).
std::unique_ptr<CheckpointStore> open_store(const LoadCommandOptions& o) {
  for (const backends::BackendInfo& info : backends::list_backends()) {
    if (info.name == o.backend && info.capabilities.object_store) {
      return std::make_unique<ObjectCheckpointStore>(
          backends::make_backend(o.backend, {}, backend_options(o)));
    }
  }
  return std::make_unique<FileCheckpointStore>();
}

// An object store's CHECKPOINT: its manifest (one GET), or what the path is instead.
Manifest read_object_manifest(CheckpointStore& store, const fs::path& dir) {
  const fs::path path = dir / kManifestName;
  if (const std::optional<std::string> text = store.read_text(path))
    return parse_manifest(*text, path);
  std::string latest;
  if (std::istringstream pointer(store.read_text(dir / "latest").value_or("")); pointer >> latest) {
    throw std::runtime_error(
        fmt::format("{} is a case directory, not a checkpoint: give one of its checkpoints, e.g. "
                    "the latest, {}",
                    dir.string(), (dir / latest).string()));
  }
  throw std::runtime_error(missing_manifest(dir));
}

MemorySpaceKind memory_of(const LoadCommandOptions& o) {
  return parse_memory_space(o.memory).value_or(MemorySpaceKind::host);
}

// The loader's chunk pool (and bounce buffer) lives in host memory, pinned for device destinations.
MemorySpace& pool_space_of(MemorySpaces& spaces, MemorySpaceKind kind) {
  return spaces.get(kind == MemorySpaceKind::cuda ? MemorySpaceKind::pinned
                                                  : MemorySpaceKind::host);
}

// One load's line: "load pipelined into host (4 threads, 33554432 B chunks, 3 in the pool, 3
// reads): <moved> in 0.0123 s = 1.234 GiB/s, cache drop_caches, backend posix, verified", GiB/s of
// `bytes`.
void print_load(std::ostream& out, const LoadCommandOptions& o, const LoadSettings& settings,
                const LoadTiming& t, const std::string& moved, std::uint64_t bytes,
                const std::string& cache, const std::string& problem) {
  const std::string h2d =
      memory_of(o) == MemorySpaceKind::cuda ? fmt::format(" (h2d {:.4f} s)", t.copy_seconds) : "";
  fmt::print(out,
             "load {} into {} ({} threads, {} B chunks, {} in the pool, {} reads{}): {} in {:.4f} "
             "s{} = {:.3f} GiB/s, "
             "cache {}, backend {}, {}\n",
             o.method, o.memory, settings.threads, settings.chunk_bytes, t.pool_chunks, t.reads,
             settings.direct ? ", O_DIRECT" : "", moved, t.seconds, h2d,
             static_cast<double>(bytes) / t.seconds / (1u << 30), cache, o.backend,
             !o.verify         ? "not verified"
             : problem.empty() ? "verified"
                               : problem);
  if (t.decode.stored_bytes > 0) {
    fmt::print(out, "decoded: {} bytes of frames to {} bytes in {:.4f} s ({} threads)\n",
               t.decode.stored_bytes, t.decode.raw_bytes, t.decode.seconds, t.decode.threads);
  }
  // An object store's requests by kind: what its prices are made of.
  if (t.counters.empty()) return;
  std::vector<std::string> counts;
  for (const auto& [name, count] : t.counters) counts.push_back(fmt::format("{} {}", name, count));
  fmt::print(out, "requests: {}\n", fmt::join(counts, ", "));
}

// Before each load: the files out of the page cache; objects are in none of this machine's.
std::string drop_caches(const LoadCommandOptions& o, const CheckpointStore& store,
                        const std::vector<backends::IoPlan>& plans) {
  if (!o.drop_caches || store.objects()) return "none";
  return apply_cache_policy(CachePolicy::drop, plans);
}

void print_median(std::ostream& out, const LoadCommandOptions& o,
                  const std::vector<double>& seconds, std::uint64_t bytes) {
  fmt::print(out, "median {} over {} loads: {:.4f} s = {:.3f} GiB/s\n", o.method, o.repeat,
             median(seconds), static_cast<double>(bytes) / median(seconds) / (1u << 30));
}

// Without --tp: every file of a weights-only checkpoint whole, one after another.
int load_whole_files(const LoadCommandOptions& o, CheckpointStore& store, const fs::path& dir,
                     const Manifest& manifest, std::ostream& out) {
  if (const CompressionSpec& z = manifest.writer.compression; z.enabled()) {
    throw std::runtime_error(fmt::format(
        "{}: its pieces are compressed (strategy.compression = \"{}\"), so its files whole are "
        "frames, not weights; give --tp N to load the decoded TP slices",
        dir.string(), compression_name(z.codec)));
  }
  const FileRanges files = checkpoint_files(store, dir, manifest);
  const LoadSettings settings = settings_of(o);
  MemorySpaces spaces;
  const MemorySpaceKind kind = memory_of(o);
  const std::unique_ptr<Buffer> memory =
      spaces.get(kind).allocate(std::max<std::uint64_t>(destination_bytes(files), 4096));
  MemorySpace& pool_space = pool_space_of(spaces, kind);
  backends::IoPlan plan;
  for (const std::string& path : files.files) plan.files.push_back({.path = path});
  std::vector<double> seconds;
  int status = 0;
  for (int i = 0; i < o.repeat; ++i) {
    const std::string cache = drop_caches(o, store, {plan});
    memory->zero();
    const LoadTiming t = load_files(files, *memory, settings, pool_space, storage_of(o));
    seconds.push_back(t.seconds);
    const std::string problem = o.verify ? verify_loaded(manifest, files, dir, *memory) : "";
    if (!problem.empty()) status = 1;
    print_load(out, o, settings, t,
               fmt::format("{} bytes from {} files", t.bytes, files.files.size()), t.bytes, cache,
               problem);
  }
  print_median(out, o, seconds, files.bytes());
  return status;
}

// The planner's input for --tp, its errors naming --tp or the manifest.
ReshardSpec planned_spec(const LoadCommandOptions& o, const fs::path& dir,
                         const Manifest& manifest) {
  try {
    return load_spec(manifest, o.tp, o.gap_bytes);
  } catch (const workloads::SpecError& e) {
    throw std::runtime_error(
        fmt::format("--tp {}: {} (the checkpoint's model, from its manifest); give --tp one of "
                    "those",
                    o.tp, e.what()));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", (dir / kManifestName).string(), e.what()));
  }
}

// The plans of the inference ranks --rank selects (all by default), placed one after another.
std::vector<RankPlan> planned_ranks(const LoadCommandOptions& o, const fs::path& dir,
                                    const Manifest& manifest, const ReshardSpec& spec) {
  std::vector<std::int64_t> ranks = inference_ranks(spec.reader);
  if (o.rank >= 0) {
    if (o.rank >= o.tp) {
      throw std::runtime_error(
          fmt::format("--rank {} is out of range: --tp {} has inference ranks 0 to {}; give one "
                      "of them, or leave --rank out to load every rank",
                      o.rank, o.tp, o.tp - 1));
    }
    ranks = {o.rank};
  }
  try {
    return load_plans(manifest, spec, ranks, dir);
  } catch (const ReshardError& e) {
    // A writer's ranks.* selection: say which ranks the checkpoint holds, in this command's terms.
    const std::vector<std::int64_t>& written = manifest.layout.ranks;
    const std::int64_t world = manifest.layout.world_size;
    const std::string held = static_cast<std::int64_t>(written.size()) < world
                                 ? fmt::format(
                                       " — this checkpoint holds writer ranks [{}] of {}; with "
                                       "--rank, load an inference rank whose "
                                       "slices those hold",
                                       fmt::join(written, ", "), world)
                                 : "";
    throw std::runtime_error(fmt::format("{}: --tp {}: {}{}", dir.string(), o.tp, e.what(), held));
  }
}

// "plan: --tp 4 (PP 1, DP 1, weights) of a TP 2 × PP 1 × DP 1 checkpoint, inference ranks 0-3 (4 of
// 4): 1234 bytes needed, 1290 bytes read (padding 56 bytes, not stored), 12 requests in 2 files, 56
// bytes of gaps up to 65536 bridged".
void print_plan(std::ostream& out, const LoadCommandOptions& o, const ReshardSpec& spec,
                const std::vector<RankPlan>& plans, const LoadCounts& counts, std::size_t files) {
  const std::string ranks = o.rank >= 0 ? fmt::format("rank {}", o.rank)
                            : o.tp == 1 ? std::string("rank 0")
                                        : fmt::format("ranks 0-{}", o.tp - 1);
  fmt::print(out,
             "plan: --tp {} (PP 1, DP 1, weights) of a TP {} × PP {} × DP {} checkpoint, inference "
             "{} ({} of "
             "{}): {} bytes needed, {} bytes read (padding {} bytes, not stored), {} requests in "
             "{} files, {} "
             "bytes of gaps up to {} bridged\n",
             o.tp, spec.writer.tp, spec.writer.pp, spec.writer.dp, ranks, plans.size(), o.tp,
             counts.bytes_needed, counts.bytes_read, counts.padding_bytes, counts.requests, files,
             counts.bridged_bytes, spec.reader.gap_bytes);
}

// With --tp: the inference ranks' TP slices, planned from the manifest as --phase load plans them
// (load_spec, load_plans), loaded and verified the same way.
int load_planned_slices(const LoadCommandOptions& o, CheckpointStore& store, const fs::path& dir,
                        const Manifest& manifest, std::ostream& out) {
  const ReshardSpec spec = planned_spec(o, dir, manifest);
  const std::vector<RankPlan> plans = planned_ranks(o, dir, manifest, spec);
  const LoadSettings settings = settings_of(o);
  const DataPattern pattern = manifest.pattern;
  MemorySpaces spaces;
  const MemorySpaceKind kind = memory_of(o);
  ProcessBuffer buffer(plans, spaces.get(kind));
  MemorySpace& pool_space = pool_space_of(spaces, kind);
  std::vector<backends::IoPlan> io;
  std::set<std::string> files;
  for (const RankPlan& p : plans) {
    io.push_back(p.io);
    for (const backends::FilePlan& f : p.io.files) files.insert(f.path);
  }
  const LoadCounts counts = load_counts(plans);
  print_plan(out, o, spec, plans, counts, files.size());
  const FramedFiles framed = framed_files(manifest, dir);
  std::vector<double> seconds;
  int status = 0;
  for (int i = 0; i < o.repeat; ++i) {
    const std::string cache = drop_caches(o, store, io);
    const FileRanges ranges = prepare_planned_load(plans, buffer, pattern);
    const LoadTiming t =
        load_planned(plans, ranges, buffer, settings, pool_space, storage_of(o), framed);
    seconds.push_back(t.seconds);
    const std::string problem = o.verify ? verify_plans(plans, buffer, pattern) : "";
    if (!problem.empty()) status = 1;
    print_load(out, o, settings, t,
               fmt::format("{} bytes in {} requests from {} files", counts.bytes_read,
                           counts.requests, files.size()),
               counts.bytes_needed, cache, problem);
  }
  print_median(out, o, seconds, counts.bytes_needed);
  return status;
}

}  // namespace

CLI::App* add_load_command(CLI::App& app, LoadCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "load", "Load a checkpoint's weights into memory as an inference server does");
  cmd->add_option("CHECKPOINT", o.checkpoint,
                  "Checkpoint directory (with ckptbench-manifest.json), raw or safetensors")
      ->required();
  CLI::Option* tp =
      cmd->add_option(
             "--tp", o.tp,
             "Inference TP (PP 1, DP 1): load each rank's TP slices, planned from the manifest "
             "(also from full-state checkpoints); without it, a weights-only checkpoint's files "
             "whole")
          ->check(CLI::PositiveNumber);
  cmd->add_option("--rank", o.rank,
                  "With --tp: load only this inference rank's slices (default: every rank, one "
                  "after another)")
      ->check(CLI::NonNegativeNumber)
      ->needs(tp);
  cmd->add_option("--gap-bytes", o.gap_bytes,
                  "With --tp: file gaps up to this many bytes between one slice's ranges in one "
                  "stored piece are read "
                  "(into scratch, dropped) so the ranges are one request (0: exact ranges only)")
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            if (!value.empty() && value.find_first_not_of("0123456789") == std::string::npos)
              return "";
            return "give a number of bytes, 0 or more (e.g. 65536; 0 reads the exact ranges only), "
                   "not \"" +
                   value + "\"";
          },
          "BYTES"))
      ->needs(tp)
      ->capture_default_str();
  cmd->add_option("--method", o.method,
                  "pipelined (threads into a chunk pool, copies overlapping reads), mmap, or read")
      ->check(CLI::IsMember({std::string(load_method_name(LoadMethod::pipelined)),
                             std::string(load_method_name(LoadMethod::mmap)),
                             std::string(load_method_name(LoadMethod::read))}))
      ->capture_default_str();
  cmd->add_option("--backend", o.backend,
                  "Storage backend the loader reads through, with its option defaults (`ckptbench "
                  "backends` lists "
                  "them; mmap needs one that maps files)")
      ->capture_default_str();
  cmd->add_option("--set", o.sets,
                  "backend.<--backend>.KEY=VALUE: an option of the backend's table, as in a "
                  "campaign (e.g. --set backend.s3.endpoint=http://host:9000); repeatable")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option(
         "--memory", o.memory,
         "Where the weights go: host, pinned or cuda (chunks then go through pinned memory)")
      ->check(CLI::IsMember({"host", "pinned", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--threads", o.settings.threads, "pipelined: reader threads")
      ->check(CLI::Range(1, kMaxLoadThreads))
      ->capture_default_str();
  cmd->add_flag("--direct,!--no-direct", o.settings.direct, "pipelined: O_DIRECT reads");
  cmd->add_option("--chunk-bytes", o.settings.chunk_bytes,
                  "pipelined: bytes per chunk (a multiple of 4096)")
      ->capture_default_str();
  cmd->add_option("--pool-bytes", o.settings.pool_bytes, "pipelined: bytes of the chunk pool")
      ->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "Loads to time (the median is printed last)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag(
      "--drop-caches,!--no-drop-caches", o.drop_caches,
      "Evict the files from the page cache before each load (drop_caches as root, else fadvise)");
  cmd->add_flag("--verify,!--no-verify", o.verify,
                "Check every tensor's bytes after each load (not timed)");
  return cmd;
}

int run_load(const LoadCommandOptions& o, std::ostream& out, std::ostream& err) {
  const fs::path dir = o.checkpoint;
  const std::unique_ptr<CheckpointStore> store = open_store(o);
  if (!store->objects()) check_checkpoint_directory(dir);
  const Manifest manifest =
      store->objects() ? read_object_manifest(*store, dir) : read_manifest(dir);
  check_stored_bytes(dir, manifest, o);
  check_load_backend(o);
  // A backend that needs MPI (a collective one) gets it started, as a one-process job.
  const std::unique_ptr<Comm> mpi = needs_mpi(o.backend) ? make_comm(true) : nullptr;
  try {
    check_manifest(*store, dir, manifest);
    return o.tp > 0 ? load_planned_slices(o, *store, dir, manifest, out)
                    : load_whole_files(o, *store, dir, manifest, out);
  } catch (const DamagedCheckpoint& e) {
    err << "ckptbench: error: damaged checkpoint: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace ckpt::harness
