#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/comm/mpi_io_choice.hpp"
#include "harness/memory/data_pattern_kind.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/memory/staging.hpp"
#include "harness/spec/engine_spec.hpp"
#include "harness/spec/load_settings.hpp"
#include "harness/spec/mlperf_spec.hpp"
#include "harness/spec/reduce_spec.hpp"
#include "harness/spec/reshard_read.hpp"
#include "workloads/model_spec.hpp"
#include "workloads/parallel_spec.hpp"

namespace ckpt::harness {

// How a rank's shards map onto files (the dimension Gossman et al. studied).
enum class Mapping { file_per_tensor, file_per_rank, file_per_node, shared_file };
// Directory and file names mirroring a framework's checkpoint layout.
enum class DirectoryLayout { dcp, megatron, deepspeed, megatron_dist };
// Megatron's distributed-optimizer files: gathered onto DP rank 0 (distrib_optim.pt, every
// release since 2023) or one per DP rank (mp_rank_TT_PPP_DDD/optim.pt, the older format).
enum class MegatronOptimizer { gathered, per_dp };
// What the checkpoint files hold: the shards' bytes alone (raw), or safetensors files with a header
// each (SafetensorsFiles and safetensors_name name them).
enum class CheckpointFormat { raw, safetensors };
// What happens between checkpoint and restore so that restore does not read the page cache.
enum class CachePolicy { none, drop, fadvise, read_shift };
// load: an inference server's weight loading of an existing checkpoint ([load], LoadPhase).
enum class PhaseSelection { checkpoint, restore, both, load };
enum class RankSelect { all, list, node };

// Which modeled ranks of the training job this run emulates.
struct RankSelection {
  RankSelect select = RankSelect::all;
  std::vector<std::int64_t> list;  // select = list
  std::int64_t node = 0;  // select = node: ranks [node × gpus_per_node, (node + 1) × gpus_per_node)
  std::int64_t gpus_per_node = 8;  // also defines nodes for file_per_node and read_shift
};

// [restore]: the parallelism, state and ranks a restore reads the checkpoint into, when they
// differ from the writer's (parallel.*, state.*, ranks.*, which must still describe the
// checkpoint). reshard is false when the restore uses the writer's layout (the plain restore).
struct RestoreSpec {
  bool reshard = false;
  workloads::ParallelSpec parallel;
  workloads::StateSpec state;
  RankSelection ranks;
  ReshardRead read = ReshardRead::exact;
  std::uint64_t gap_bytes =
      0;  // restore.gap_bytes: exact reads bridge file gaps up to this (read and dropped)
  ReplicaRead replicas = ReplicaRead::written;  // restore.replicas (the same-layout restore)
};

// load.gap_bytes's and `ckptbench load --gap-bytes`'s default: an inference load's exact reads
// bridge file gaps up to this (inference.gap_bytes; read into scratch and dropped, as
// restore.gap_bytes). 64 KiB makes the strided row halves of a row-parallel tensor at another TP
// one read each (the README's load section has the figures); it changes nothing where the ranges
// have no gaps (the writer's TP, merged slices).
inline constexpr std::uint64_t kLoadGapBytes = std::uint64_t{64} << 10;

// [load] (the load phase): how an inference server loads the checkpoint's weights. `inference`
// is the layout it loads into: TP load.tp (the checkpoint's parallel.tp when 0), PP 1, DP 1,
// weights only, every rank, exact ranges bridging gaps up to load.gap_bytes — planned by the
// resharding planner like a restore.
struct LoadSpec {
  LoadSettings
      settings;  // load.method, threads, direct, chunk_bytes, pool_bytes (defaults: LoadSettings)
  RestoreSpec inference;
  // load.cooperative: each stored range read once, by one process, and sent over MPI to the others
  // that load it (plan_piece_exchange); false: every process reads all it loads.
  bool cooperative = false;
  // The case whose directory holds the checkpoint to load: the first case of the campaign that
  // differs from this one in [load] keys only, so that a sweep over load.* loads one checkpoint.
  std::int64_t source_index = 0;
};

// One fully resolved case of a campaign: every value final, validated, immutable once built.
struct Case {
  std::string campaign;
  std::string source;                               // campaign file (or "<text>")
  std::int64_t index = 0;                           // position in the campaign's expansion
  nlohmann::json swept = nlohmann::json::object();  // dotted key -> value, list-valued keys only
  nlohmann::json config =
      nlohmann::json::object();  // every key of this case with defaults, nested tables

  std::string model_argument;  // model.name as written
  workloads::ModelSpec model;
  workloads::ParallelSpec parallel;
  workloads::StateSpec state;
  std::int64_t scale = 1;  // model.scale: tensor sizes divided by this
  RankSelection ranks;
  RestoreSpec restore;  // [restore] (harness/loadplan)
  LoadSpec load;        // [load] (the load phase)

  Mapping mapping = Mapping::file_per_rank;
  DirectoryLayout directory_layout = DirectoryLayout::dcp;
  MegatronOptimizer megatron_optimizer = MegatronOptimizer::gathered;
  int writer_threads = 2;  // megatron_dist: files per rank (__{rank}_{n}.distcp)
  CheckpointFormat format = CheckpointFormat::raw;  // strategy.format
  std::uint64_t max_shard_bytes = 0;  // strategy.max_shard_bytes: safetensors weights files
  std::uint64_t alignment = 0;        // 0: none
  std::uint64_t chunk_bytes = 0;      // 0: do not split
  std::uint64_t coalesce_bytes = 0;   // 0: do not coalesce
  CompressionSpec compression;        // strategy.compression*
  SelectiveSpec selective;            // strategy.selective_every
  // strategy.framing in effect: each item of a .distcp file is the whole archive torch.save
  // writes for it (harness/plan/item_framing), each .pt file torch.save's archive of its tensors.
  bool framing = false;

  std::string backend = "posix";
  backends::IoSettings io;
  backends::BackendOptions backend_options;  // the chosen backend's [backend.<name>] table, as text

  DataPattern data = DataPattern::random;
  std::uint64_t seed = 1;
  bool verify = true;
  CachePolicy cache = CachePolicy::drop;

  MemorySpaceKind memory_space = MemorySpaceKind::host;  // where the shards live
  StagingSettings staging;        // device memory for backends that cannot address it
  std::uint64_t reuse_bytes = 0;  // memory.reuse_bytes: > 0, one small buffer every request reuses

  int iterations = 3;
  int warmup = 1;
  PhaseSelection phase = PhaseSelection::both;
  std::filesystem::path target;  // directory the checkpoints go under
  bool create_target = false;
  bool overwrite = false;                             // allow a target holding an older checkpoint
  bool keep = false;                                  // keep the last checkpoint after the case
  std::uint64_t memory_budget = 0;                    // bytes per process; 0: no limit
  MpiIoChoice mpi_io = MpiIoChoice::library_default;  // set before MPI starts (run_command)

  bool calibrate = false;            // measure.calibration (Calibration)
  TrainingSpec training;             // [training]: off unless training.iterations > 0
  EngineSpec engine;                 // [engine]: which checkpoint engine runs in the loop
  std::optional<MlperfSpec> mlperf;  // [mlperf]: set when mlperf.model is
};

std::string_view mapping_name(Mapping mapping);
std::string_view directory_layout_name(DirectoryLayout layout);
std::string_view megatron_optimizer_name(MegatronOptimizer format);
std::string_view checkpoint_format_name(CheckpointFormat format);
std::string_view data_pattern_name(DataPattern pattern);
std::string_view cache_policy_name(CachePolicy policy);
std::string_view phase_name(PhaseSelection phase);
std::string_view rank_select_name(RankSelect select);

// XXH3_64 hex digest of a case's expanded configuration, without campaign.target.
std::string config_hash(const Case& c);

// The case as it wrote the checkpoint the load phase reads: its index is load.source_index (the
// first case that differs in [load] keys only), so its case directory holds that checkpoint.
Case load_source(const Case& c);

// The inference layout of TP `tp` over a checkpoint of `model` written with `writer` and `state`:
// PP 1, DP 1, the writer's vocab_divisor, weights only under the checkpoint's tensor names, every
// rank, exact ranges bridging file gaps up to `gap_bytes` (load.gap_bytes, --gap-bytes). Throws
// workloads::SpecError (key "tp") when `tp` does not suit the model.
RestoreSpec inference_layout(const workloads::ModelSpec& model,
                             const workloads::ParallelSpec& writer,
                             const workloads::StateSpec& state, std::int64_t tp,
                             std::uint64_t gap_bytes);

// Why the deepspeed layout refuses ZeRO-2/3 with pipeline parallelism (DeepSpeed's own reason),
// naming the keys to change.
std::string deepspeed_pipeline_refusal(std::int64_t zero_stage,
                                       const std::string& zero_key = "parallel.zero",
                                       const std::string& pp_key = "parallel.pp");

// Why the case's strategy.layout refuses parallel.zero_sharding = "per_tensor" (only DCP saves
// FSDP2's per-tensor chunks; the other frameworks partition flat buffers), or "" when it does not.
std::string per_tensor_sharding_refusal(const Case& c,
                                        const std::string& layout_key = "strategy.layout",
                                        const std::string& sharding_key = "parallel.zero_sharding");

// Why the case's files cannot carry torch.save's framing (strategy.framing): the key that rules
// it out and why, or nullopt where they can (a framework layout's raw files of whole tensors).
struct FramingRefusal {
  std::string key;
  std::string why;
};
std::optional<FramingRefusal> framing_refusal(const Case& c);

// strategy.framing's value for `on` (Case::framing): "on" or "off".
std::string_view framing_name(bool on);

// Whether the deepspeed layout writes DeepSpeed's ZeRO-3 files for this job (no bf16 weights: the
// fp32 partition in each rank's optimizer file is their only copy; the file sizes are
// DeepSpeed's): ZeRO-3, one file per rank, the full state with a master copy, no expert
// parallelism, exact sizing. Other ZeRO-3 jobs keep the weights in the model_states files.
bool deepspeed_zero3_files(DirectoryLayout layout, Mapping mapping,
                           const workloads::ParallelSpec& parallel,
                           const workloads::StateSpec& state);

}  // namespace ckpt::harness
