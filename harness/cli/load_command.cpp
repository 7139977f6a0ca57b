#include "harness/cli/load_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "harness/memory/data_pattern.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/run/cache_policy.hpp"
#include "harness/run/iteration.hpp"
#include "harness/run/manifest.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

DataPattern pattern_of(const nlohmann::json& manifest) {
  const std::string name = manifest.at("data").at("pattern").get<std::string>();
  for (DataPattern p : {DataPattern::random, DataPattern::zeros, DataPattern::bf16}) {
    if (data_pattern_name(p) == name) return p;
  }
  throw std::runtime_error("manifest data.pattern \"" + name + "\" is unknown to this ckptbench");
}

// The checkpoint's files, in the manifest's order, at their actual sizes.
std::vector<LoadFile> checkpoint_files(const fs::path& dir, const nlohmann::json& manifest) {
  const std::string scope = manifest.at("config").at("state").value("scope", "full");
  if (scope != "weights") {
    throw std::runtime_error(fmt::format("{}: holds state.scope = \"{}\"; `ckptbench load` loads weights-only checkpoints "
                                         "(write one with state.scope = \"weights\"; restore full state with --phase restore)",
                                         dir.string(), scope));
  }
  std::vector<std::pair<std::string, std::uint64_t>> sized;
  for (const nlohmann::json& f : manifest.at("files")) {
    const fs::path path = dir / f.at("path").get<std::string>();
    std::error_code ec;
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec) throw std::runtime_error(fmt::format("{}: {} (the checkpoint is incomplete)", path.string(), ec.message()));
    sized.emplace_back(path.string(), size);
  }
  return place_files(sized);
}

// The first tensor whose loaded bytes differ from the pattern, as a message, or "".
// Verification runs in the destination's memory space (device kernels for cuda).
std::string verify_loaded(const nlohmann::json& manifest, const std::vector<LoadFile>& files, const fs::path& dir,
                          const Buffer& memory) {
  // The tensors as placed shards in the destination, so that their pattern runs (a tensor's
  // bytes are a function of its global index: shard_geometry.hpp) come from the one place that
  // makes them for fill and restore.
  RankPlan placed;
  const std::int64_t scale = manifest.value("scale", std::int64_t{1});
  for (const nlohmann::json& t : manifest.at("tensors")) {
    const std::string path = (dir / t.at("file").get<std::string>()).string();
    const auto file = std::find_if(files.begin(), files.end(), [&path](const LoadFile& f) { return f.path == path; });
    if (file == files.end()) return "tensor " + t.at("name").get<std::string>() + ": its file " + path + " was not loaded";
    PlacedShard& ps = placed.shards.emplace_back();
    ps.shard = shard_from_json(t);
    ps.geometry = shard_geometry(ps.shard, scale);
    ps.memory_offset = file->destination_offset + t.at("file_offset").get<std::uint64_t>();
    ps.bytes = t.at("bytes").get<std::uint64_t>();
    ps.data_key = t.at("data_key").get<std::uint64_t>();
  }
  std::vector<std::pair<std::size_t, std::size_t>> owner;
  const std::vector<PatternRange> ranges = shard_pattern_ranges({placed}, {0}, &owner);
  if (ranges.empty()) return "";
  const std::optional<Mismatch> bad = memory.first_mismatch(ranges, pattern_of(manifest));
  if (!bad) return "";
  const std::size_t index = owner[bad->range].second;
  const nlohmann::json& t = manifest.at("tensors").at(index);
  const std::uint64_t shard_byte = ranges[bad->range].offset - placed.shards[index].memory_offset + bad->offset;
  return fmt::format("verification failed: tensor {} at byte {} (file {} offset {})", t.at("name").get<std::string>(),
                     shard_byte, t.at("file").get<std::string>(), t.at("file_offset").get<std::uint64_t>() + shard_byte);
}

}  // namespace

CLI::App* add_load_command(CLI::App& app, LoadCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("load", "Load a weights-only checkpoint into host memory as an inference server does");
  cmd->add_option("CHECKPOINT", o.checkpoint, "Checkpoint directory (with ckptbench-manifest.json), raw or safetensors")
      ->required();
  cmd->add_option("--method", o.method, "pipelined (threads into a chunk pool, copies overlapping reads), mmap, or read")
      ->check(CLI::IsMember({std::string(load_method_name(LoadMethod::pipelined)),
                             std::string(load_method_name(LoadMethod::mmap)),
                             std::string(load_method_name(LoadMethod::read))}))
      ->capture_default_str();
  cmd->add_option("--memory", o.memory, "Where the weights go: host, pinned or cuda (chunks then go through pinned memory)")
      ->check(CLI::IsMember({"host", "pinned", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--threads", o.settings.threads, "pipelined: reader threads")->check(CLI::Range(1, kMaxLoadThreads))->capture_default_str();
  cmd->add_flag("--direct,!--no-direct", o.settings.direct, "pipelined: O_DIRECT reads");
  cmd->add_option("--chunk-bytes", o.settings.chunk_bytes, "pipelined: bytes per chunk (a multiple of 4096)")->capture_default_str();
  cmd->add_option("--pool-bytes", o.settings.pool_bytes, "pipelined: bytes of the chunk pool")->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "Loads to time (the median is printed last)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_flag("--drop-caches,!--no-drop-caches", o.drop_caches,
                "Evict the files from the page cache before each load (drop_caches as root, else fadvise)");
  cmd->add_flag("--verify,!--no-verify", o.verify, "Check every tensor's bytes after each load (not timed)");
  return cmd;
}

int run_load(const LoadCommandOptions& o, std::ostream& out) {
  const fs::path dir = o.checkpoint;
  const nlohmann::json manifest = read_manifest(dir);
  const std::vector<LoadFile> files = checkpoint_files(dir, manifest);
  LoadSettings settings = o.settings;
  settings.method = parse_load_method(o.method).value_or(LoadMethod::pipelined);
  MemorySpaces spaces;
  const MemorySpaceKind kind = parse_memory_space(o.memory).value_or(MemorySpaceKind::host);
  const std::unique_ptr<Buffer> memory = spaces.get(kind).allocate(std::max<std::uint64_t>(destination_bytes(files), 4096));
  MemorySpace& pool_space = spaces.get(kind == MemorySpaceKind::cuda ? MemorySpaceKind::pinned : MemorySpaceKind::host);
  backends::IoPlan plan;
  for (const LoadFile& f : files) plan.files.push_back({.path = f.path});
  std::vector<double> seconds;
  int status = 0;
  for (int i = 0; i < o.repeat; ++i) {
    const std::string cache = o.drop_caches ? apply_cache_policy(CachePolicy::drop, {plan}) : "none";
    memory->zero();
    const LoadTiming t = load_files(files, *memory, settings, pool_space);
    seconds.push_back(t.seconds);
    const std::string problem = o.verify ? verify_loaded(manifest, files, dir, *memory) : "";
    if (!problem.empty()) status = 1;
    const std::string h2d = kind == MemorySpaceKind::cuda ? fmt::format(" (h2d {:.4f} s)", t.copy_seconds) : "";
    fmt::print(out, "load {} into {} ({} threads, {} B chunks, {} in the pool{}): {} bytes from {} files in {:.4f} s{} = "
                    "{:.3f} GiB/s, cache {}, {}\n",
               o.method, o.memory, settings.threads, settings.chunk_bytes, t.pool_chunks, settings.direct ? ", O_DIRECT" : "",
               t.bytes, files.size(), t.seconds, h2d, static_cast<double>(t.bytes) / t.seconds / (1u << 30), cache,
               !o.verify ? "not verified" : problem.empty() ? "verified" : problem);
  }
  std::uint64_t total = 0;
  for (const LoadFile& f : files) total += f.size;
  fmt::print(out, "median {} over {} loads: {:.4f} s = {:.3f} GiB/s\n", o.method, o.repeat, median(seconds),
             static_cast<double>(total) / median(seconds) / (1u << 30));
  return status;
}

}  // namespace ckpt::harness
