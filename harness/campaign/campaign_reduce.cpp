#include "harness/campaign/campaign_reduce.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

namespace ckpt::harness::schema {
namespace {

constexpr const char* kCodecKey = "strategy.compression";

Compression codec_named(const std::string& name) {
  for (const Compression c : {Compression::none, Compression::zstd, Compression::bytegroup}) {
    if (compression_name(c) == name) return c;
  }
  throw std::logic_error("campaign schema: no compression named " + name);
}

// Frames have data-dependent sizes: the plan's file offsets are known only after compression,
// and a reader must decode whole frames. What needs fixed offsets, typed datasets, raw tensors in
// place or the plan's bytes in device memory cannot carry them.
void check_compression(const Case& c, const CaseValues& v) {
  const std::string is =
      "strategy.compression = \"" + std::string(compression_name(c.compression.codec)) + "\" ";
  const auto refuse = [&](std::string_view key, const std::string& why, const std::string& fix) {
    v.fail(key, is + why + ": " + fix + ", or set strategy.compression = \"none\"");
  };
  if (c.io.direct)
    refuse("backend.direct",
           "writes frames of data-dependent sizes back to back, which O_DIRECT's aligned offsets "
           "and lengths cannot hold",
           "set backend.direct = false");
  if (c.backend == "hdf5")
    refuse("backend.name", "writes frames, not the typed datasets hdf5 stores",
           "use posix, uring, mpiio or null");
  if (c.alignment != 0)
    refuse("strategy.alignment", "packs each file's frames back to back, without padding",
           "set strategy.alignment = 0");
  if (c.format != CheckpointFormat::raw)
    refuse("strategy.format",
           "cannot be read through a safetensors header, which describes raw tensors",
           "set strategy.format = \"raw\"");
  if (c.mapping == Mapping::file_per_node || c.mapping == Mapping::shared_file)
    refuse("strategy.mapping",
           "places each rank's frames where the previous rank's end, which the ranks do not know "
           "of each other",
           "use file_per_rank or file_per_tensor");
  if (c.directory_layout == DirectoryLayout::deepspeed)
    refuse("strategy.layout", "does not lay out DeepSpeed's engine-state files",
           "use dcp, megatron or megatron_dist");
  if (c.memory_space != MemorySpaceKind::host)
    refuse("memory.space", "runs its codec on host memory", "set memory.space = \"host\"");
  if (c.reuse_bytes > 0)
    refuse("memory.reuse_bytes", "needs the whole checkpoint in memory to compress it",
           "set memory.reuse_bytes = 0");
  if (c.restore.reshard)
    refuse("restore.tp",
           "is restored into the writer's layout only (a reshard reads parts of frames)",
           "restore the writer's layout");
  if (c.training.enabled() && c.engine.kind == EngineKind::tiered)
    refuse("engine.name",
           "is not applied by the tiered engine, which copies and sends each process's raw part",
           "use engine.name = \"sync\", \"async\" or \"lazy\"");
  if (c.cache == CachePolicy::read_shift && c.phase == PhaseSelection::both)
    refuse("cache.policy",
           "reads other ranks' frames with read_shift, whose sizes only the manifest holds",
           "use --phase checkpoint then --phase restore, or another cache.policy");
}

// A delta checkpoint stores the blocks the emulated update changed, over a base of the same
// layout: it needs that update applied to every byte it holds, and each reader to read the runs
// over the base bytes it reads.
template <typename Refuse>
void check_delta(const Case& c, const Refuse& refuse) {
  if (c.selective.every > 1 || c.selective.experts > 0)
    refuse(c.selective.every > 1 ? "strategy.selective_every" : "strategy.partial_experts",
           "stores changed blocks of every piece, not a rotating subset of them",
           "set strategy.selective_every = 1 and strategy.partial_experts = 0");
  if (c.selective.block_bytes % 4096 != 0)
    refuse("strategy.delta_block_bytes",
           "needs blocks of whole pages: " + std::to_string(c.selective.block_bytes) +
               " is not a multiple of 4096",
           "set a multiple of 4096");
  if (c.directory_layout == DirectoryLayout::megatron &&
      c.megatron_optimizer == MegatronOptimizer::gathered && c.parallel.zero_stage >= 1 &&
      c.parallel.dp > 1)
    refuse("strategy.megatron_optimizer",
           "updates the state where it is held, and the gathered distributed optimizer's copies "
           "arrive by the gather",
           "set strategy.megatron_optimizer = \"per_dp\"");
  if (c.restore.replicas != ReplicaRead::written)
    refuse("restore.replicas",
           "reads each base piece with the runs over it into the rank that wrote it",
           "set restore.replicas = \"written\"");
}

// Under [training] the loop's checkpoints apply the rotation (or the delta against the base) to the
// plans its flush writes, from a snapshot of the whole state: what flushes other than the plans, or
// parts of them, cannot.
template <typename Refuse>
void check_training_reduce(const Case& c, const Refuse& refuse) {
  if (c.engine.kind == EngineKind::tiered)
    refuse("engine.name",
           "is not applied by the tiered engine, which copies and sends each process's raw part to "
           "its tiers and drains whole parts",
           "use engine.name = \"sync\", \"async\" or \"lazy\"");
  if (c.compression.enabled())
    refuse("strategy.compression",
           "is not combined with compression under [training]: the engines compress the whole "
           "snapshot as it is flushed",
           "set strategy.compression = \"none\", or leave out the [training] table");
}

// A selective checkpoint packs the pieces it holds back to back in files of its own and points at
// earlier checkpoints of the same case directory for the rest: what needs every piece in every
// checkpoint, fixed offsets, or paths other than a file system's cannot carry it.
void check_selective(const Case& c, const CaseValues& v) {
  const bool experts = c.selective.experts > 0;
  const bool delta = c.selective.delta();
  const std::string is =
      experts ? "strategy.partial_experts = " + std::to_string(c.selective.experts) + " "
      : delta ? "strategy.delta_every = " + std::to_string(c.selective.delta_every) + " "
              : "strategy.selective_every = " + std::to_string(c.selective.every) + " ";
  const std::string off = experts ? "set strategy.partial_experts = 0"
                          : delta ? "set strategy.delta_every = 1"
                                  : "set strategy.selective_every = 1";
  const auto refuse = [&](std::string_view key, const std::string& why, const std::string& fix) {
    v.fail(key, is + why + ": " + fix + ", or " + off);
  };
  if (delta) check_delta(c, refuse);
  if (experts && c.selective.every > 1)
    refuse("strategy.selective_every", "rotates the experts, not the layers",
           "set strategy.selective_every = 1");
  if (experts && c.selective.total_experts == 0)
    refuse("model.name", "rotates the routed experts, which " + c.model.name + " has none of",
           "choose a mixture-of-experts model");
  if (experts && c.selective.experts >= c.selective.total_experts)
    refuse("strategy.partial_experts",
           "holds every one of the " + std::to_string(c.selective.total_experts) +
               " routed experts in every checkpoint",
           "set it below " + std::to_string(c.selective.total_experts));
  if (experts && c.state.effective_naming() == workloads::Naming::hf &&
      c.model.expert_storage != workloads::ExpertStorage::per_expert)
    refuse("model.name",
           "rotates experts stored one tensor each, and " + c.model.name +
               " stores its experts fused into one tensor per matrix kind",
           "choose a model whose experts are stored one by one");
  if (c.io.direct)
    refuse("backend.direct",
           "packs the layers it holds back to back, which O_DIRECT's aligned offsets cannot hold",
           "set backend.direct = false");
  if (c.backend == "hdf5" || c.backend == "s3")
    refuse("backend.name",
           "points at files of earlier checkpoint directories, which " + c.backend +
               " does not store as files",
           "use posix, uring, mpiio or null");
  if (c.alignment != 0)
    refuse("strategy.alignment", "packs the layers it holds back to back, without padding",
           "set strategy.alignment = 0");
  if (c.format != CheckpointFormat::raw)
    refuse("strategy.format", "writes raw pieces, not safetensors files of every tensor",
           "set strategy.format = \"raw\"");
  if (c.mapping == Mapping::file_per_node || c.mapping == Mapping::shared_file)
    refuse("strategy.mapping",
           "packs each rank's pieces in its own files, which the ranks of a shared file cannot "
           "do without knowing of each other",
           "use file_per_rank or file_per_tensor");
  if (c.directory_layout == DirectoryLayout::deepspeed)
    refuse("strategy.layout", "does not lay out DeepSpeed's engine-state files",
           "use dcp, megatron or megatron_dist");
  if (c.reuse_bytes > 0)
    refuse("memory.reuse_bytes", "needs the whole state in memory to choose the layers it holds",
           "set memory.reuse_bytes = 0");
  if (c.training.enabled()) check_training_reduce(c, refuse);
}

// strategy.framing: as set, or unset on wherever the files can carry it.
void settle_framing(Case& c, const CaseValues& v) {
  const auto* set = std::get_if<std::string>(&v.value("strategy.framing"));
  const std::optional<FramingRefusal> refusal = framing_refusal(c);
  if (set == nullptr) {
    c.framing = !refusal;
    return;
  }
  c.framing = *set == framing_name(true);
  if (c.framing && refusal) {
    v.fail("strategy.framing", "\"on\" frames torch.save's archives, and " + refusal->key +
                                   " rules them out (" + refusal->why +
                                   "): set strategy.framing = \"off\", or change " + refusal->key);
  }
}

}  // namespace

void fill_reduce(Case& c, const CaseValues& v) {
  CompressionSpec& z = c.compression;
  z.codec = codec_named(v.text(kCodecKey));
  z.level = static_cast<int>(v.integer("strategy.compression_level"));
  z.unit = v.text("strategy.compression_unit") == "chunk" ? CompressionUnit::chunk
                                                          : CompressionUnit::shard;
  z.chunk_bytes = static_cast<std::uint64_t>(v.integer("strategy.compression_chunk_bytes"));
  z.threads = static_cast<int>(v.integer("strategy.compression_threads"));
  if (z.chunk_bytes % 4096 != 0) {
    v.fail("strategy.compression_chunk_bytes",
           std::to_string(z.chunk_bytes) +
               " is not a multiple of 4096 (whole bf16 and fp32 "
               "elements in every frame, pages in memory)");
  }
  if (z.enabled()) check_compression(c, v);
  c.selective.every = v.integer("strategy.selective_every");
  c.selective.experts = v.integer("strategy.partial_experts");
  c.selective.total_experts = c.model.num_local_experts;
  c.selective.delta_every = v.integer("strategy.delta_every");
  c.selective.block_bytes = static_cast<std::uint64_t>(v.integer("strategy.delta_block_bytes"));
  c.selective.changed_per_million = static_cast<std::uint32_t>(
      std::lround(std::get<double>(v.value("strategy.delta_changed_fraction")) * 1e6));
  if (c.selective.enabled()) check_selective(c, v);
  settle_framing(c, v);
}

void drop_unused_reduce_keys(nlohmann::json& config) {
  nlohmann::json& strategy = config["strategy"];
  if (strategy.value("delta_every", 1) == 1) {
    for (const char* key : {"delta_every", "delta_block_bytes", "delta_changed_fraction"})
      strategy.erase(key);
  }
  if (strategy.value("compression", "none") != "none") return;
  for (const char* key : {"compression", "compression_level", "compression_unit",
                          "compression_chunk_bytes", "compression_threads"})
    strategy.erase(key);
}

}  // namespace ckpt::harness::schema
