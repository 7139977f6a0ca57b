// The declaration of every campaign key (type, default, range or choices, help) and the
// backends' tables, built from their option tables; `convert` checks values against them.
#include <array>
#include <charconv>
#include <climits>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include "backends/registry.hpp"
#include "harness/campaign/campaign_case.hpp"
#include "harness/campaign/campaign_schema.hpp"
#include "harness/spec/case.hpp"
#include "harness/spec/load_settings.hpp"
#include "workloads/limits.hpp"

namespace ckpt::harness::schema {
namespace {

constexpr std::int64_t kIntMax = INT_MAX;  // keys stored in an int
constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

KeySpec required_text(std::string_view table, std::string_view key, std::string_view help) {
  return KeySpec{.table = table, .key = key, .help = help, .kind = Kind::text, .required = true};
}
KeySpec text_key(std::string_view table, std::string_view key, std::string_view help,
                 const char* fallback) {
  return KeySpec{.table = table,
                 .key = key,
                 .help = help,
                 .kind = Kind::text,
                 .fallback = std::string(fallback)};
}
KeySpec bool_key(std::string_view table, std::string_view key, std::string_view help,
                 bool fallback) {
  return KeySpec{
      .table = table, .key = key, .help = help, .kind = Kind::boolean, .fallback = fallback};
}
KeySpec int_key(std::string_view table, std::string_view key, std::string_view help,
                std::int64_t fallback, std::int64_t min, std::int64_t max = kNoMax) {
  return KeySpec{.table = table,
                 .key = key,
                 .help = help,
                 .kind = Kind::integer,
                 .fallback = fallback,
                 .min = min,
                 .max = max};
}
KeySpec size_key(std::string_view table, std::string_view key, std::string_view help,
                 std::int64_t fallback, std::int64_t min = 0) {
  return KeySpec{.table = table,
                 .key = key,
                 .help = help,
                 .kind = Kind::size,
                 .fallback = fallback,
                 .min = min};
}
// `fallback` nullptr: unset by default.
KeySpec choice_key(std::string_view table, std::string_view key, std::string_view help,
                   const char* fallback, std::vector<std::string_view> choices) {
  return KeySpec{.table = table,
                 .key = key,
                 .help = help,
                 .kind = Kind::choice,
                 .fallback = fallback ? Value{std::string(fallback)} : Value{},
                 .choices = std::move(choices)};
}
KeySpec dtype_key(std::string_view table, std::string_view key, std::string_view help,
                  const char* fallback, Kind kind = Kind::dtype) {
  return KeySpec{
      .table = table, .key = key, .help = help, .kind = kind, .fallback = std::string(fallback)};
}
KeySpec number_key(std::string_view table, std::string_view key, std::string_view help,
                   double fallback, std::int64_t min, std::int64_t max = kNoMax) {
  return KeySpec{.table = table,
                 .key = key,
                 .help = help,
                 .kind = Kind::number,
                 .fallback = fallback,
                 .min = min,
                 .max = max};
}
KeySpec rank_list_key(std::string_view table, std::string_view key, std::string_view help) {
  return KeySpec{.table = table,
                 .key = key,
                 .help = help,
                 .kind = Kind::rank_list,
                 .fallback = std::vector<std::int64_t>{},
                 .sweepable = false};
}
KeySpec fixed(KeySpec spec) {
  spec.sweepable = false;
  return spec;
}
KeySpec left_out_at_default(KeySpec spec) {
  spec.recorded_at_default = false;
  return spec;
}

// The backends' own tables, from their option tables (backends/<name>/): the registry's
// listing, these keys and the backends' parsing share that one declaration.
struct BackendSchema {
  std::vector<backends::BackendInfo> infos;
  std::vector<std::string> tables;  // "backend.<name>" of every backend with options
  std::vector<std::string_view> table_views;
};

const BackendSchema& backend_schema() {
  static const BackendSchema schema = [] {
    BackendSchema built;
    built.infos = backends::list_backends();
    for (const backends::BackendInfo& info : built.infos) {
      if (!info.options.empty()) built.tables.push_back("backend." + info.name);
    }
    built.table_views.assign(built.tables.begin(), built.tables.end());
    return built;
  }();
  return schema;
}

std::int64_t default_integer(std::string_view table, const backends::OptionSpec& option) {
  std::int64_t value = 0;
  const std::string& text = option.default_value;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::logic_error(std::string(table) + "." + option.name + ": default \"" + text +
                           "\" is no integer");
  }
  return value;
}

KeySpec backend_key(std::string_view table, const backends::OptionSpec& option) {
  using backends::OptionType;
  const std::string_view key = option.name;
  const std::string_view help = option.help;
  switch (option.type) {
    case OptionType::boolean:
      return bool_key(table, key, help, option.default_value == "true");
    case OptionType::integer:
      return int_key(table, key, help, default_integer(table, option), option.min, option.max);
    case OptionType::size: {
      KeySpec spec = size_key(table, key, help, default_integer(table, option), option.min);
      spec.max = option.max;
      return spec;
    }
    case OptionType::choice:
      return choice_key(
          table, key, help, option.default_value.c_str(),
          std::vector<std::string_view>(option.choices.begin(), option.choices.end()));
    case OptionType::text:
      return text_key(table, key, help, option.default_value.c_str());
    case OptionType::string_map:
      return fixed(KeySpec{.table = table,
                           .key = key,
                           .help = help,
                           .kind = Kind::string_map,
                           .fallback = nlohmann::json::object()});
  }
  throw std::logic_error("backend option of an unknown type");
}

// The [campaign] table.
std::vector<KeySpec> campaign_table_keys() {
  return {
      fixed(
          required_text("campaign", "name",
                        "names the results directory and the checkpoint directory <target>/<name>: "
                        "one path component (no '/', not '.' or '..', at most 200 bytes)")),
      fixed(required_text("campaign", "target",
                          "directory the checkpoints go under (<target>/<name>/case-NNNN/<step>/), "
                          "relative to the working directory; the storage under test")),
      fixed(bool_key("campaign", "create_target",
                     "create the target directory when it is missing (else an error)", false)),
      fixed(bool_key("campaign", "overwrite",
                     "allow a target that holds an older checkpoint of the same case; it stays "
                     "untouched until a new checkpoint is complete, then is removed",
                     false)),
      fixed(bool_key("campaign", "keep",
                     "keep each case's newest checkpoint (named by case-NNNN/latest) after the "
                     "run; always on with --phase checkpoint",
                     false)),
      int_key("campaign", "iterations", "timed checkpoint and restore iterations per case", 3, 1,
              kIntMax),
      int_key("campaign", "warmup", "untimed iterations before the timed ones", 1, 0, kIntMax),
      fixed(choice_key(
          "campaign", "phase",
          "what a run does: write then read back (both), only write and keep (checkpoint), only "
          "read a kept checkpoint in a new process (restore), or load its weights as an inference "
          "server does (load, the [load] keys); --phase overrides",
          "both", {"both", "checkpoint", "restore", "load"})),
      fixed(size_key("campaign", "memory_budget",
                     "buffer bytes per process; a case that needs more is refused before "
                     "allocating, saying how much it needs; 0: no budget",
                     0)),
      fixed(choice_key("campaign", "mpi_io",
                       "MPI-IO implementation of the mpiio and hdf5 backends: romio or ompio asks "
                       "Open MPI for it before MPI starts (OMPI_MCA_io), default leaves the "
                       "library's choice; HDF5 runs best on ROMIO",
                       "default", {"default", "romio", "ompio"})),
  };
}

// What is written: [model], [parallel], [state] and [ranks].
std::vector<KeySpec> model_keys() {
  return {
      required_text("model", "name",
                    "a zoo model (ckptbench models), a model .toml file, or a Hugging Face "
                    "config.json or the directory holding it"),
      int_key("model", "scale",
              "divide every tensor's leading dimension by this, to run a large model's layout with "
              "less data; tensor counts, names and file counts stay those of the full model",
              1, 1),
      choice_key("model", "sizing",
                 "exact: the tensors the framework saves; dlio: DLIO's (MLPerf Storage v2.0's) "
                 "byte counts, rank order and pipeline split",
                 "exact", {"exact", "dlio"}),
      left_out_at_default(choice_key(
          "model", "weights",
          "how the weights are stored: unquantized, every weight in state.weight_dtype; "
          "fp8_block, as DeepSeek-V3 and transformers' fine-grained FP8 store them: each "
          "linear layer's weight in FP8 E4M3 (1 byte) and beside it its float32 "
          "weight_scale_inv, one scale per 128x128 block (embeddings, norms, routers and "
          "lm_head stay in state.weight_dtype); mxfp4, as gpt-oss ships its experts: each "
          "fused expert matrix X as X_blocks (U8, two FP4 E2M1 values a byte, blocks of 32 "
          "values) and X_scales (U8, one E8M0 scale per block), every other tensor in "
          "state.weight_dtype; needs state.scope = \"weights\"",
          "unquantized", {"unquantized", "fp8_block", "mxfp4"})),
      // The parallel sizes must be positive here; whether they suit the model is Layout's call.
      int_key("parallel", "tp", "tensor-parallel size of the modeled job", 1, 1),
      int_key("parallel", "pp", "pipeline-parallel size of the modeled job", 1, 1),
      int_key("parallel", "dp", "data-parallel size of the modeled job", 1, 1),
      int_key("parallel", "ep", "expert-parallel size (subdivides dp) of the modeled job", 1, 1),
      int_key("parallel", "zero",
              "ZeRO stage 0-3: 1 and 2 partition the optimizer state over dp, 3 also the weights",
              0, 0, kIntMax),
      left_out_at_default(choice_key(
          "parallel", "zero_sharding",
          "how ZeRO-3 cuts the state over dp: flat, one buffer of a rank's tensors cut "
          "into dp ranges (DeepSpeed, FSDP1); per_tensor, every tensor cut on dim 0 into "
          "dp chunks as torch.chunk cuts it, one DCP item each (FSDP2); per_tensor needs "
          "zero = 3 and strategy.layout = \"dcp\"",
          "flat", {"flat", "per_tensor"})),
      int_key("parallel", "vocab_divisor",
              "the vocabulary is padded to a multiple of this times tp (Megatron's)", 128, 1),
      int_key("parallel", "pp_first_stage_layers",
              "layers of the first pipeline stage for an uneven split (0: even split)", 0, 0),
      int_key("parallel", "pp_last_stage_layers",
              "layers of the last pipeline stage for an uneven split (0: even split)", 0, 0),
      choice_key("state", "scope",
                 "weights only, or full training state: weights, fp32 master copy and Adam's "
                 "exp_avg and exp_avg_sq",
                 "full", {"full", "weights"}),
      choice_key("state", "naming",
                 "tensor names: Megatron-core's or Hugging Face's; unset: megatron for full state, "
                 "hf for weights",
                 nullptr, {"megatron", "hf"}),
      dtype_key("state", "weight_dtype", "element type of the weights", "bf16"),
      dtype_key("state", "master_dtype",
                "element type of the master copy of the weights; none drops it", "fp32",
                Kind::dtype_or_none),
      dtype_key("state", "optimizer_dtype",
                "element type of the optimizer state (exp_avg, exp_avg_sq)", "fp32"),
      choice_key("ranks", "select",
                 "which modeled ranks this run writes: all, the ranks of ranks.list, or one node's "
                 "share (ranks.node)",
                 "all", {"all", "list", "node"}),
      rank_list_key("ranks", "list",
                    "the modeled ranks to write with select = \"list\" (at most 1,048,576 entries, "
                    "the largest world)"),
      // Bounded by the largest world, so that node × gpus_per_node cannot overflow.
      int_key("ranks", "node",
              "with select = \"node\": the node whose ranks [node×G, (node+1)×G) are written, G = "
              "gpus_per_node",
              0, 0, workloads::limits::kWorldSize - 1),
      int_key("ranks", "gpus_per_node",
              "ranks per node (G): for select = \"node\", file_per_node files and the read_shift "
              "cache policy",
              8, 1, workloads::limits::kWorldSize),
  };
}

// How it is written: [strategy], [backend], [data], [memory] and [cache].
std::vector<KeySpec> strategy_keys() {
  return {
      choice_key("strategy", "mapping",
                 "files of a checkpoint: one per rank, one per tensor, one per node (its ranks at "
                 "offsets) or one shared file (N-to-1)",
                 "file_per_rank",
                 {"file_per_rank", "file_per_tensor", "file_per_node", "shared_file"}),
      choice_key(
          "strategy", "layout",
          "directory and file names as the framework writes them: torch.distributed.checkpoint, "
          "Megatron-LM, DeepSpeed, or Megatron's torch_dist (see ckptbench layout --files)",
          "dcp", {"dcp", "megatron", "deepspeed", "megatron_dist"}),
      choice_key(
          "strategy", "megatron_optimizer",
          "layout megatron with ZeRO >= 1: gathered (DP rank 0 writes distrib_optim.pt with the DP "
          "group's shards, gathered over MPI) or per_dp (each DP rank's shard in its own optim.pt)",
          "gathered", {"gathered", "per_dp"}),
      int_key(
          "strategy", "writer_threads",
          "layout megatron_dist: .distcp files per rank, one per Megatron-core writer thread: 2 "
          "up to core 0.16, 1 from 0.17",
          2, 1, 64),
      size_key(
          "strategy", "alignment",
          "align every shard's file offset to this many bytes (the padding is recorded); 0: packed",
          0),
      size_key("strategy", "chunk_bytes",
               "split extents larger than this into requests of this size; 0: no split", 0),
      size_key("strategy", "coalesce_bytes",
               "merge consecutive small shards of a file into one request of up to this many "
               "bytes; 0: off",
               0),
      choice_key(
          "strategy", "format",
          "raw (the shards' bytes alone) or safetensors files (header, tensors back to back, "
          "index); safetensors takes only the default mapping, no alignment and no O_DIRECT",
          "raw", {"raw", "safetensors"}),
      choice_key("strategy", "framing",
                 "torch.save's framing, as the frameworks write their files: on, each item of a "
                 ".distcp file is the whole zip archive torch.save writes for its tensor (about "
                 "1.6 KB around the bytes) and each .pt file torch.save's archive of its "
                 "tensors; off, the tensors' bytes alone; unset: on for raw files without "
                 "compression, selective or delta checkpoints, dlio sizing, hdf5 or "
                 "memory.reuse_bytes, off otherwise",
                 nullptr, {"on", "off"}),
      // save_pretrained's default max_shard_size in transformers 5 ("50GB"; 5 GB before).
      size_key("strategy", "max_shard_bytes",
               "safetensors with state.scope = \"weights\": tensor bytes per "
               "model-NNNNN-of-NNNNN.safetensors file, as save_pretrained's max_shard_size "
               "(transformers 5's default; 5000000000 for transformers 4's)",
               kMaxShardBytesDefault, 1),
      choice_key("strategy", "compression",
                 "lossless compression of every stored piece: none, zstd, or bytegroup (bf16/fp32 "
                 "exponent bytes apart from the mantissas, each plane zstd-coded; ZipNN); the "
                 "manifest records stored and logical bytes, restore decompresses and verifies",
                 "none", {"none", "zstd", "bytegroup"}),
      int_key("strategy", "compression_level",
              "zstd level of strategy.compression: 1 (fastest) to 22 (smallest, slow)", 3, 1, 22),
      choice_key("strategy", "compression_unit",
                 "strategy.compression frames: one per shard, or one per compression_chunk_bytes "
                 "of each shard",
                 "shard", {"shard", "chunk"}),
      size_key("strategy", "compression_chunk_bytes",
               "compression_unit = chunk: raw bytes per frame (a multiple of 4096)",
               std::int64_t{4} << 20, 4096),
      left_out_at_default(int_key(
          "strategy", "selective_every",
          "selective checkpoints: checkpoint t holds the layers whose index modulo N is t "
          "modulo N (tensors outside the layers with layer 0), so every layer is saved every N "
          "checkpoints; the manifest names the earlier checkpoint holding each other layer's "
          "newest copy, and a restore merges them. 1: every checkpoint is full",
          1, 1, 1024)),
      left_out_at_default(int_key(
          "strategy", "partial_experts",
          "partial-expert checkpoints: checkpoint t holds k of the E routed experts of every "
          "MoE layer, the next k after the previous checkpoint's (wrapping), and every other "
          "tensor; the manifest names the earlier checkpoint holding each other expert's "
          "newest copy, and a restore merges them. 0: every expert in every checkpoint",
          0, 0, 1 << 20)),
      int_key("strategy", "delta_every",
              "delta checkpoints: a full checkpoint, then N - 1 that hold only the blocks "
              "(delta_block_bytes) the emulated training update changed since it; the manifest "
              "names the full one (the base) and the runs each piece changed, and a restore reads "
              "the base whole plus those runs. 1: every checkpoint is full",
              1, 1, 1024),
      size_key("strategy", "delta_block_bytes",
               "strategy.delta_every: the blocks of each tensor's bytes the update changes and a "
               "delta stores (a multiple of 4096)",
               std::int64_t{64} << 10, 4096),
      number_key("strategy", "delta_changed_fraction",
                 "strategy.delta_every: the share of each tensor's blocks the emulated training "
                 "update between two checkpoints changes (a block's new bytes have the pattern's "
                 "statistics)",
                 0.05, 0, 1),
      int_key("strategy", "compression_threads",
              "codec threads per process: compression before the write, decompression after the "
              "restore's read",
              1, 1, 256),
      text_key(
          "backend", "name",
          "storage backend: posix, uring, mpiio, hdf5, gds, null, skeleton (ckptbench backends)",
          "posix"),
      bool_key("backend", "direct",
               "O_DIRECT: bypass the page cache (buffers and offsets aligned to direct_alignment)",
               false),
      choice_key("backend", "sync", "flush after writing, inside the timed checkpoint", "fsync",
                 {"none", "fsync", "fdatasync"}),
      bool_key("backend", "fallocate", "reserve every file's size before writing", false),
      int_key("backend", "threads", "I/O threads per process", 1, 1, kIntMax),
      int_key("backend", "queue_depth", "requests in flight per thread (uring; posix takes only 1)",
              1, 1, kIntMax),
      bool_key("backend", "sqpoll",
               "uring: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL)", false),
      size_key("backend", "direct_alignment",
               "the alignment O_DIRECT needs, for buffers, offsets and lengths", 4096, 1),
      choice_key(
          "data", "pattern",
          "the data written: random (incompressible), bf16 (values distributed like trained "
          "weights), trained (each tensor's bf16 or fp32 values with the exponent and "
          "mantissa statistics of trained weights, fp32 master or Adam exp_avg / exp_avg_sq: "
          "compresses like a real checkpoint) or zeros",
          "random", {"random", "zeros", "bf16", "trained"}),
      int_key("data", "seed",
              "seeds the deterministic data: contents are a function of seed, state kind, tensor "
              "and element",
              1, 0),
      bool_key("data", "verify",
               "check every restored byte against the regenerated data (timed apart)", true),
      choice_key(
          "memory", "space",
          "where shards live: host, pinned (cudaMallocHost; mlock'ed host memory without a GPU), "
          "cuda (device memory) or kokkos (a Kokkos::View of the default execution space)",
          "host", {"host", "pinned", "cuda", "kokkos"}),
      size_key("memory", "staging_bytes",
               "device memory through a backend that cannot address it: size of each pinned "
               "staging chunk (copies pipelined with the I/O)",
               std::int64_t{64} << 20, 4096),
      int_key("memory", "staging_buffers", "number of pinned staging chunks", 2, 1, 64),
      size_key("memory", "reuse_bytes",
               "0: each process holds its whole share (distinct data); > 0: fio's and IOR's "
               "footprint, one buffer of this many bytes every request reuses (needs "
               "data.verify = false, host memory, raw format; the files hold no checkpoint data)",
               0),
      choice_key(
          "cache", "policy",
          "before each restore: drop (/proc/sys/vm/drop_caches; fadvise when not root), fadvise "
          "(POSIX_FADV_DONTNEED), read_shift (each rank restores another node's files) or none",
          "drop", {"drop", "fadvise", "read_shift", "none"}),
  };
}

// The emulated training loop: [training] and [engine].
std::vector<KeySpec> training_keys() {
  return {
      // [training] and [engine] (harness/engine): training.iterations = 0 keeps the loop off.
      int_key("training", "iterations",
              "iterations of the emulated training loop; 0: off (the plain bandwidth benchmark). "
              "On, the loop's checkpoints replace campaign.iterations and warmup",
              0, 0, kIntMax),
      number_key("training", "iteration_seconds",
                 "compute and update time of one iteration, in seconds", 1.0, 0, 3600),
      number_key("training", "update_fraction",
                 "the tail of each iteration in which the update rewrites every shard with that "
                 "iteration's state",
                 0.2, 0, 1),
      int_key("training", "checkpoint_every", "a checkpoint is due after every N-th update", 1, 1,
              kIntMax),
      choice_key("training", "compute",
                 "what the compute time does: sleep, spin (a busy core) or gpu (a busy kernel on a "
                 "stream of its own; needs a CUDA device)",
                 "sleep", {"sleep", "spin", "gpu"}),
      choice_key("engine", "name",
                 "checkpoint engine: sync (the loop stops for write, sync and commit), async "
                 "(stops only to copy into the host pool; a thread flushes), lazy (the copy too "
                 "runs during the next compute) or tiered (as async, to the node-local tier, "
                 "replicated to peers, drained to the backend every tiers.drain_every-th); all "
                 "but sync need training.iterations",
                 "sync", {"sync", "async", "lazy", "tiered"}),
      size_key("engine", "host_pool_bytes",
               "bound of the host pool async and lazy copy into; below one process's checkpoint "
               "(at least 8 KiB) the pool is a ring of chunks the flush streams through; 0: one "
               "whole checkpoint",
               0),
  };
}

// The tiered engine's nodes, cliques and tiers: [tiers].
std::vector<KeySpec> tier_keys() {
  return {
      int_key("tiers", "processes_per_node",
              "processes per (emulated) node, consecutive ranks; 0: the MPI launch's "
              "(OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, PMI_LOCAL_SIZE); set it to emulate "
              "several nodes on one machine",
              0, 0, kIntMax),
      text_key("tiers", "local_dir",
               "engine.name = \"tiered\": the node-local tier's directory (tmpfs or a local "
               "disk); {node} stands for the node's number and is needed when several emulated "
               "nodes share a machine",
               ""),
      size_key("tiers", "local_bytes",
               "a node's local tier capacity, which must hold 2 checkpoints x tiers.replicas parts "
               "per process; 0: the free space of its file system",
               0),
      int_key("tiers", "replicas",
              "copies (F) of each process's part in its clique {p, p+J, ..., p+(F-1)J}, its own "
              "included; 1: no peers",
              2, 1, 64),
      int_key("tiers", "clique_stride",
              "processes (J) between clique members, the failure blast radius; 0: "
              "tiers.processes_per_node; J x F must divide the process count and J must reach "
              "another node",
              0, 0, kIntMax),
      KeySpec{.table = "tiers",
              .key = "chunk_bytes",
              .help = "one point-to-point message of the exchange with peers (at most 1 GiB); each "
                      "exchange holds 2 received chunks in memory at once",
              .kind = Kind::size,
              .fallback = std::int64_t{4} << 20,
              .min = 4096,
              .max = std::int64_t{1} << 30},
      int_key("tiers", "drain_every",
              "every K-th checkpoint of the tiered engine also goes to the backend (the remote "
              "tier); K = 1: every one",
              1, 1, kIntMax),
      left_out_at_default(choice_key(
          "tiers", "local_backend",
          "engine.name = \"tiered\": the backend every part file of the node-local tier "
          "is written and read through (each synced before it is named); the remote tier "
          "stays backend.name",
          kDefaultLocalTierBackend,
          {std::begin(kLocalTierBackends), std::end(kLocalTierBackends)})),
      left_out_at_default(bool_key(
          "tiers", "memory",
          "engine.name = \"tiered\": each process also keeps its part of the newest "
          "complete checkpoint in its host memory, and with tiers.replicas > 1 the parts of "
          "its clique's peers it received (tiers.replicas parts per process, counted in "
          "campaign.memory_budget): the first tier a surviving process recovers from, and "
          "where a lost peer's part is sent from without a read",
          false)),
      rank_list_key("tiers", "lost_nodes",
                    "engine.name = \"tiered\": after the loop (or in a --phase restore job) "
                    "these nodes' processes and local tiers are lost and every rank recovers "
                    "from the nearest tier holding its part (own node, a peer's, the backend); "
                    "empty: the usual restore"),
  };
}

// Reading back and what is measured: [restore], [load] and [measure].
std::vector<KeySpec> read_keys() {
  return {
      // [restore] (harness/loadplan): 0, -1 or no value keep the writer's parallel.*, state.scope
      // and ranks.* — a plain restore of the writer's layout.
      int_key("restore", "tp",
              "--phase restore into another tensor parallelism (resharding); 0: the writer's", 0,
              0),
      int_key("restore", "pp", "restore's pipeline parallelism; 0: the writer's", 0, 0),
      int_key("restore", "dp", "restore's data parallelism; 0: the writer's", 0, 0),
      int_key("restore", "ep", "restore's expert parallelism; 0: the writer's", 0, 0),
      int_key("restore", "zero",
              "restore's ZeRO stage: the optimizer state re-partitioned over restore.dp; -1: the "
              "writer's",
              -1, -1, kIntMax),
      choice_key(
          "restore", "state",
          "weights restores only the weights of a full checkpoint; unset: the writer's state.scope",
          nullptr, {"full", "weights"}),
      choice_key("restore", "select", "the restore's ranks, as ranks.select; unset: the writer's",
                 nullptr, {"all", "list", "node"}),
      rank_list_key("restore", "list", "the restore's ranks with restore.select = \"list\""),
      int_key("restore", "node", "the restore's node with restore.select = \"node\"", 0, 0),
      choice_key("restore", "read",
                 "exact: only the bytes each new rank needs, adjacent ranges coalesced; "
                 "whole_items: every stored piece an overlap touches read whole, torch.save's "
                 "framing around it included (strategy.framing), as DCP's reader (bytes read "
                 "exceed bytes needed)",
                 "exact", {"exact", "whole_items"}),
      left_out_at_default(choice_key(
          "restore", "replicas",
          "the restore under DP or TP: written: each rank reads what it wrote; read: each "
          "DP replica also reads the state it holds replicated (from DP rank 0's files), "
          "each TP rank the TP-replicated tensors stored once (from TP rank 0's), every "
          "rank its own copy; cooperative: each stored piece read once by one process "
          "holding it, sent to the others over MPI (--phase restore; also a resharded "
          "restore, restore.tp and the like set)",
          "written", {"written", "read", "cooperative"})),
      size_key(
          "restore", "gap_bytes",
          "exact reads: pieces one new shard needs from one stored piece at most this many bytes "
          "apart are one request, the gaps read and dropped (amplification); 0: exact ranges only",
          0),
      // [load] (the load phase, LoadPhase): defaults from LoadSettings and kLoadGapBytes, as
      // `ckptbench load`'s; load.tp = 0 loads into the checkpoint's parallel.tp.
      choice_key("load", "method",
                 "how the weights are loaded through backend.name's backend: pipelined (reader "
                 "threads into a bounded chunk pool, copies overlapping reads), mmap (mapped and "
                 "copied, page faults included; backends that map files) or read (buffered reads; "
                 "a collective backend's one method: each process's ranges in one read)",
                 load_method_name(LoadSettings{}.method).data(),
                 {load_method_name(LoadMethod::pipelined), load_method_name(LoadMethod::mmap),
                  load_method_name(LoadMethod::read)}),
      int_key("load", "threads", "pipelined: reader threads", LoadSettings{}.threads, 1,
              kMaxLoadThreads),
      bool_key("load", "direct", "pipelined: O_DIRECT reads of whole blocks",
               LoadSettings{}.direct),
      size_key("load", "chunk_bytes", "pipelined: chunk size, a multiple of 4096",
               static_cast<std::int64_t>(LoadSettings{}.chunk_bytes), 4096),
      size_key("load", "pool_bytes", "pipelined: bound of the chunk pool, at least one chunk",
               static_cast<std::int64_t>(LoadSettings{}.pool_bytes), 4096),
      int_key("load", "tp",
              "inference tensor parallelism (PP 1, DP 1, weights only), planned from the manifest; "
              "must suit the model; 0: the checkpoint's parallel.tp",
              0, 0),
      size_key("load", "gap_bytes",
               "a rank's ranges in one stored piece at most this many bytes apart in the file are "
               "one request, the gaps read and dropped; 0: exact ranges only",
               static_cast<std::int64_t>(kLoadGapBytes)),
      left_out_at_default(
          bool_key("load", "cooperative",
                   "each stored range read once, by one of the processes loading it, and sent over "
                   "MPI to the others (bytes from storage vs over the interconnect in replicas); "
                   "false: every process reads all it loads",
                   false)),
      fixed(bool_key("measure", "calibration",
                     "a plain write(2) + sync and read(2) of the case's bytes around every "
                     "iteration, the same-run peer ckptbench gate divides by; about doubles the "
                     "run time; not with [training]",
                     false)),
      // Off by default so that bandwidth runs pay nothing (no clock reads, no histograms).
      bool_key("measure", "latency",
               "per-request latency histograms per phase (posix, uring): p50, p99, p99.9 and max "
               "in the results and the report",
               false),
  };
}

// [mlperf]: the case declares an MLPerf Storage checkpointing workload (check_mlperf checks it
// against the rules before any I/O and labels the result).
std::vector<KeySpec> mlperf_keys() {
  return {
      fixed(choice_key("mlperf", "model",
                       "the MLPerf Storage checkpointing workload this case runs; set, the rules "
                       "checker refuses what the rules forbid before any I/O (also --dry-run) and "
                       "labels the result closed, open or non-compliant; unset: no MLPerf run",
                       nullptr, {"llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"})),
      fixed(choice_key("mlperf", "accelerator_type",
                       "the simulated accelerator, whose memory (b200 180 GiB, mi355 288 GiB) "
                       "times the job's ranks must hold the whole checkpoint",
                       "b200", {"b200", "mi355"})),
      fixed(bool_key("mlperf", "subset",
                     "subset mode (node-local storage): one host of 8 ranks writes its share "
                     "(ranks.select = \"node\", gpus_per_node = 8); llama3-8b only",
                     false)),
      fixed(choice_key("mlperf", "division",
                       "closed: the rules' process count; open: data parallelism may grow, the "
                       "world in multiples of TP x PP",
                       "closed", {"closed", "open"})),
  };
}

// Every key but the backends' own, in documentation order. Each key has one declaration above:
// type, default, range or choices, and help; docs/campaign-keys.md is generated from them
// (`ckptbench keys --markdown`, ci/update-docs.sh).
std::vector<KeySpec> general_keys() {
  std::vector<KeySpec> keys;
  for (std::vector<KeySpec> (*group)() : {campaign_table_keys, model_keys, strategy_keys,
                                          training_keys, tier_keys, read_keys, mlperf_keys}) {
    std::vector<KeySpec> part = group();
    keys.insert(keys.end(), std::make_move_iterator(part.begin()),
                std::make_move_iterator(part.end()));
  }
  return keys;
}

std::vector<KeySpec> build_keys() {
  std::vector<KeySpec> keys = general_keys();
  const BackendSchema& schema = backend_schema();
  std::size_t table = 0;
  for (const backends::BackendInfo& info : schema.infos) {
    if (info.options.empty()) continue;
    for (const backends::OptionSpec& option : info.options)
      keys.push_back(backend_key(schema.table_views[table], option));
    ++table;
  }
  return keys;
}

constexpr std::array<std::string_view, 17> kTables{
    "campaign", "model",   "parallel", "state",   "ranks",    "strategy",
    "backend",  "data",    "memory",   "cache",   "training", "engine",
    "tiers",    "restore", "load",     "measure", "mlperf"};

}  // namespace

std::span<const KeySpec> keys() {
  static const std::vector<KeySpec> kKeys = build_keys();
  return kKeys;
}

std::span<const std::string_view> tables() {
  return kTables;
}

std::span<const std::string_view> backend_tables() {
  return backend_schema().table_views;
}

}  // namespace ckpt::harness::schema
