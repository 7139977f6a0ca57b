#pragma once

// A checkpoint's self-description, ckptbench-manifest.json: a typed Manifest with one writer
// (manifest_json) and one reader (read_manifest, parse_manifest), the only
// code that knows the file's JSON. Everything else reads the struct's fields.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/delta_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

inline constexpr const char* kManifestName = "ckptbench-manifest.json";
inline constexpr const char* kManifestFormat = "ckptbench-manifest";
// 2: checksums and hashes are XXH3_64, named by the manifest's checksum_algorithm.
// 3: checkpoint_hash covers the tensor list as well as the configuration (manifest_hash).
// 4: checkpoint_hash covers training_iteration too (the state the checkpoint holds).
// 5: a tensor may carry `unscaled` (FP8 block scales kept whole under model.scale), `iteration`
//    (a selective piece whose copy an earlier training iteration wrote) and a fourth element per
//    delta run (a compressed run's stored bytes). A version 4 manifest lacks them and is read as
//    before; an older ckptbench refuses version 5 as newer rather than calling it damaged.
inline constexpr int kManifestVersion = 5;
// The oldest version this ckptbench reads: its checkpoint_hash covers what this one checks.
inline constexpr int kOldestReadManifestVersion = 4;

// One stored piece of a tensor: what the writer's layout gave (unscaled), where its bytes lie.
struct ManifestTensor {
  workloads::Shard shard;
  std::int64_t rank = 0;  // the modeled rank that wrote it
  std::int64_t holder =
      -1;            // Megatron's distributed optimizer: the DP rank it came from; -1: `rank`
  std::string file;  // relative to the checkpoint directory
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  std::uint64_t bytes = 0;  // stored bytes (the shard's, divided by the scale)
  std::uint64_t data_key = 0;
  std::string checksum;  // XXH3_64 of the stored bytes, hex
  // strategy.compression: the bytes of the piece's frames at file_offset (`bytes` is what they
  // decode to); 0: stored raw.
  std::uint64_t stored_bytes = 0;
  // strategy.selective_every: the directory name of the earlier checkpoint of the same case
  // directory that holds the piece's newest copy (`file` and `file_offset` are that
  // checkpoint's); "": this checkpoint holds it.
  std::string checkpoint;
  // [training] with strategy.selective_every or partial_experts: the training iteration whose state
  // the earlier checkpoint `checkpoint` holds of the piece (the loop updates every piece, so a copy
  // left there is older than this checkpoint's state); nullopt: the manifest's training_iteration.
  std::optional<std::int64_t> iteration;
  // strategy.delta_every: the piece's bytes that changed since its base (the earlier checkpoint
  // `checkpoint`, which holds the piece whole at `file`, `file_offset`), stored as `delta` runs in
  // this checkpoint's file `delta_file`; the piece is the base's bytes with those runs over them.
  // "": no runs of its own (an unchanged piece's base bytes are its bytes).
  std::string delta_file;
  std::vector<DeltaRun> delta;

  // The training iteration whose state the piece holds, in a manifest of `manifest_iteration`
  // (Manifest::iteration).
  std::int64_t iteration_in(std::int64_t manifest_iteration) const {
    return iteration.value_or(manifest_iteration);
  }
  // Bytes the piece takes in its file.
  std::uint64_t file_bytes() const { return stored_bytes > 0 ? stored_bytes : bytes; }
  // The piece's file relative to this checkpoint's directory: `file`, or the sibling checkpoint's
  // "../<checkpoint>/<file>".
  std::string stored_file() const {
    return checkpoint.empty() ? file : "../" + checkpoint + "/" + file;
  }
};

struct ManifestFile {
  std::string path;  // relative to the checkpoint directory
  std::uint64_t min_size = 0;
};

// How the writer laid the checkpoint out.
struct ManifestLayout {
  std::int64_t world_size = 1;
  std::vector<std::int64_t> ranks;  // the modeled ranks written
  std::int64_t scale = 1;           // model.scale
  Mapping mapping = Mapping::file_per_rank;
  DirectoryLayout directory_layout = DirectoryLayout::dcp;
};

// The parts of the writer's configuration that read paths plan from, typed. The whole
// configuration stays in Manifest::config, which the checkpoint hash covers.
struct ManifestWriter {
  std::string backend;  // backend.name
  std::string model;    // model.name
  workloads::ParallelSpec parallel;
  workloads::StateSpec state;  // state.* and model.sizing
  CheckpointFormat format = CheckpointFormat::raw;
  std::uint64_t alignment = 0;    // strategy.alignment
  std::uint64_t chunk_bytes = 0;  // strategy.chunk_bytes
  // model.scale, data.pattern, data.seed as configured (the manifest records them again, for
  // regeneration; the two must agree).
  std::int64_t scale = 1;
  DataPattern pattern = DataPattern::random;
  std::uint64_t seed = 0;
  CompressionSpec compression;  // strategy.compression*: absent keys are "none"
  SelectiveSpec selective;      // strategy.selective_every: absent is 1
  bool framing = false;         // strategy.framing in effect: absent is off
};

struct Manifest {
  int version = kManifestVersion;
  std::string campaign;
  std::int64_t case_index = 0;
  std::int64_t step = 0;
  // The training iteration whose state the checkpoint holds; nullopt outside [training] (the
  // state before any update).
  std::optional<std::int64_t> training_iteration;
  std::string config_hash;
  std::string checkpoint_hash;  // manifest_hash of the configuration, iteration and tensor list
  nlohmann::json config;        // the writer's whole expanded configuration
  ManifestWriter writer;
  ManifestLayout layout;
  DataPattern pattern = DataPattern::random;  // data.pattern
  std::uint64_t seed = 0;                     // data.seed
  std::vector<ManifestFile> files;
  std::vector<ManifestTensor> tensors;

  // The iteration that seeds regenerated bytes: training_iteration, or -1.
  std::int64_t iteration() const { return training_iteration.value_or(-1); }
};

// The entries of one process's ranks: tensor -> file, offset, shape, dtype, checksum.
std::vector<ManifestTensor> manifest_tensors(
    const std::vector<RankPlan>& plans, const std::vector<std::vector<std::uint64_t>>& checksums);

// The whole manifest of a checkpoint (written by process 0 once every process succeeded), its
// files and checkpoint_hash derived from `tensors`.
Manifest make_manifest(const Case& c, std::int64_t world_size,
                       const std::vector<std::int64_t>& ranks, std::vector<ManifestTensor> tensors,
                       std::int64_t step,
                       std::optional<std::int64_t> training_iteration = std::nullopt);

// The writer: the manifest as the file holds it.
nlohmann::json manifest_json(const Manifest& manifest);
// The tensor list as the file holds it (what checkpoint_hash covers, and what processes send
// process 0 for the commit).
nlohmann::json manifest_tensors_json(const std::vector<ManifestTensor>& tensors);

// Writes `dir`/ckptbench-manifest.json by temp file + fsync + rename + directory fsync: a
// checkpoint without its manifest is incomplete. Throws std::runtime_error naming the path.
void commit_manifest(const std::filesystem::path& dir, const Manifest& manifest);

// The reader. Reads and checks a checkpoint's manifest. Throws std::runtime_error when it is
// missing ("incomplete checkpoint"), unreadable, not a ckptbench manifest, of another version
// (named, with what to do), or a field is missing, mistyped or out of bounds: the text is untrusted
// JSON (parse_untrusted_json), bounded before it is parsed, and every field is typed and bounded
// (byte counts and offsets below 2^50, each tensor inside a listed file) —
// "…: damaged manifest: `tensors[3].bytes`: …".
Manifest read_manifest(const std::filesystem::path& dir);
// What read_manifest says of checkpoint `dir` without a manifest.
std::string missing_manifest(const std::filesystem::path& dir);
// The same for a manifest's text; `path` names it in the messages.
Manifest parse_manifest(std::string_view text, const std::filesystem::path& path);
// Tensor entries as manifest_tensors_json wrote them (one process's, sent to process 0).
std::vector<ManifestTensor> parse_manifest_tensors(std::string_view text);

// Whether a file name a manifest gives stays inside its checkpoint (relative, no "..").
bool inside_checkpoint(const std::string& file);
// Whether a `checkpoint` a tensors entry names is a plain directory name of the case directory
// (not empty, no "/", not "." or "..").
bool sibling_checkpoint_name(const std::string& name);
// XXH3_64 hex digest of what decides a checkpoint's bytes and placement (model, parallelism, state,
// ranks, strategy, data pattern and seed, O_DIRECT alignment): a restore needs the same.
std::string checkpoint_hash(const Case& c);
// The same of a checkpoint's recorded `config` (its manifest's). Throws nlohmann::json's
// exceptions for a config that is not a configuration's object.
std::string checkpoint_hash(const nlohmann::json& config);
// What of the above differs between a checkpoint's recorded `config` (its manifest's) and case
// `c`: "parallel.tp = 8, this campaign has parallel.tp = 4 (and model.scale: 64 vs 128)"; ""
// when nothing does.
std::string checkpoint_difference(const nlohmann::json& recorded_config, const Case& c);

// Writes a small text file atomically (temp + fsync + rename).
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace ckpt::harness
