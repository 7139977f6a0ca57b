#include "harness/spec/case.hpp"

#include "harness/memory/checksum.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// These strings are the values a campaign file accepts; the parser matches against them.

std::string_view mapping_name(Mapping mapping) {
  switch (mapping) {
    case Mapping::file_per_tensor:
      return "file_per_tensor";
    case Mapping::file_per_rank:
      return "file_per_rank";
    case Mapping::file_per_node:
      return "file_per_node";
    case Mapping::shared_file:
      return "shared_file";
  }
  return "file_per_rank";
}

std::string_view directory_layout_name(DirectoryLayout layout) {
  switch (layout) {
    case DirectoryLayout::dcp:
      return "dcp";
    case DirectoryLayout::megatron:
      return "megatron";
    case DirectoryLayout::deepspeed:
      return "deepspeed";
    case DirectoryLayout::megatron_dist:
      return "megatron_dist";
  }
  return "dcp";
}

std::string_view megatron_optimizer_name(MegatronOptimizer format) {
  return format == MegatronOptimizer::per_dp ? "per_dp" : "gathered";
}

std::string_view checkpoint_format_name(CheckpointFormat format) {
  return format == CheckpointFormat::safetensors ? "safetensors" : "raw";
}

std::string_view data_pattern_name(DataPattern pattern) {
  switch (pattern) {
    case DataPattern::random:
      return "random";
    case DataPattern::zeros:
      return "zeros";
    case DataPattern::bf16:
      return "bf16";
    case DataPattern::trained:
      return "trained";
  }
  return "random";
}

std::string_view cache_policy_name(CachePolicy policy) {
  switch (policy) {
    case CachePolicy::none:
      return "none";
    case CachePolicy::drop:
      return "drop";
    case CachePolicy::fadvise:
      return "fadvise";
    case CachePolicy::read_shift:
      return "read_shift";
  }
  return "drop";
}

std::string_view replica_read_name(ReplicaRead read) {
  switch (read) {
    case ReplicaRead::written:
      return "written";
    case ReplicaRead::read:
      return "read";
    case ReplicaRead::cooperative:
      return "cooperative";
  }
  return "written";
}

std::string_view phase_name(PhaseSelection phase) {
  switch (phase) {
    case PhaseSelection::checkpoint:
      return "checkpoint";
    case PhaseSelection::restore:
      return "restore";
    case PhaseSelection::both:
      return "both";
    case PhaseSelection::load:
      return "load";
  }
  return "both";
}

std::string_view rank_select_name(RankSelect select) {
  switch (select) {
    case RankSelect::all:
      return "all";
    case RankSelect::list:
      return "list";
    case RankSelect::node:
      return "node";
  }
  return "all";
}

// Where the checkpoints go (campaign.target) is not part of what is measured: the same case
// run against another directory keeps its hash, so results compare across targets. Nor are the
// option tables of backends the case does not use: a backend added to ckptbench (its defaults
// appear in every config) leaves the hashes, and so the gate baselines, of existing cases alone.
std::string config_hash(const Case& c) {
  nlohmann::json hashed = c.config;
  if (hashed.contains("campaign") && hashed["campaign"].is_object())
    hashed["campaign"].erase("target");
  if (hashed.contains("backend") && hashed["backend"].is_object()) {
    nlohmann::json& backend = hashed["backend"];
    const auto name = backend.find("name");
    const std::string used =
        name != backend.end() && name->is_string() ? name->get<std::string>() : "";
    for (auto it = backend.begin(); it != backend.end();) {
      if (it->is_object() && it.key() != used)
        it = backend.erase(it);
      else
        ++it;
    }
  }
  return checksum_hex(checksum64(hashed.dump()));
}

Case load_source(const Case& c) {
  Case source = c;
  source.index = c.load.source_index;
  return source;
}

RestoreSpec inference_layout(const workloads::ModelSpec& model,
                             const workloads::ParallelSpec& writer,
                             const workloads::StateSpec& state, std::int64_t tp,
                             std::uint64_t gap_bytes) {
  RestoreSpec r;
  r.reshard = true;
  r.read = ReshardRead::exact;
  r.gap_bytes = gap_bytes;
  r.parallel.tp = tp;
  r.parallel.vocab_divisor = writer.vocab_divisor;
  r.state = state;
  r.state.naming = state.effective_naming();  // the checkpoint's tensor names
  r.state.scope = workloads::StateScope::weights;
  r.ranks = RankSelection{};  // every inference rank
  const workloads::Layout layout(model, r.parallel,
                                 r.state);  // throws SpecError when tp does not suit
  return r;
}

std::string deepspeed_pipeline_refusal(std::int64_t zero_stage, const std::string& zero_key,
                                       const std::string& pp_key) {
  return "\"deepspeed\" with " + pp_key + " > 1 cannot use " + zero_key + " = " +
         std::to_string(zero_stage) +
         ": DeepSpeed's PipelineEngine refuses it (\"ZeRO-2 and ZeRO-3 are incompatible with "
         "pipeline "
         "parallelism\", deepspeed/runtime/pipe/engine.py) — set " +
         zero_key + " = 0 or 1, or " + pp_key + " = 1";
}

std::string_view framing_name(bool on) {
  return on ? "on" : "off";
}

std::optional<FramingRefusal> framing_refusal(const Case& c) {
  if (c.format != CheckpointFormat::raw)
    return FramingRefusal{"strategy.format", "safetensors files hold no torch.save archives"};
  if (c.backend == "hdf5")
    return FramingRefusal{"backend.name", "hdf5 stores typed datasets, not torch.save archives"};
  if (c.compression.enabled())
    return FramingRefusal{"strategy.compression",
                          "a compressed checkpoint stores ckptbench's frames, not archives"};
  if (c.selective.enabled()) {
    const char* key = c.selective.delta()       ? "strategy.delta_every"
                      : c.selective.experts > 0 ? "strategy.partial_experts"
                                                : "strategy.selective_every";
    return FramingRefusal{key,
                          "selective and delta checkpoints pack ckptbench's pieces, not "
                          "archives"};
  }
  if (c.state.sizing == workloads::Sizing::dlio)
    return FramingRefusal{"model.sizing", "DLIO's sizing writes MLPerf Storage's byte counts"};
  if (c.reuse_bytes > 0)
    return FramingRefusal{"memory.reuse_bytes",
                          "one reused buffer cannot hold each file's framing bytes"};
  return std::nullopt;
}

std::string per_tensor_sharding_refusal(const Case& c, const std::string& layout_key,
                                        const std::string& sharding_key) {
  if (c.parallel.zero_sharding != workloads::ZeroSharding::per_tensor ||
      c.directory_layout == DirectoryLayout::dcp)
    return "";
  const std::string layout(directory_layout_name(c.directory_layout));
  const char* framework = c.directory_layout == DirectoryLayout::deepspeed
                              ? "DeepSpeed's files, whose ZeRO partitions one flat buffer per rank"
                              : "Megatron's files, whose distributed optimizer partitions flat "
                                "buffers";
  return "\"per_tensor\" is FSDP2's sharding, which torch.distributed.checkpoint saves (" +
         layout_key + " = \"dcp\"); " + layout_key + " = \"" + layout + "\" writes " + framework +
         ": set " + layout_key + " = \"dcp\", or " + sharding_key + " = \"flat\"";
}

bool deepspeed_zero3_files(DirectoryLayout layout, Mapping mapping,
                           const workloads::ParallelSpec& parallel,
                           const workloads::StateSpec& state) {
  return layout == DirectoryLayout::deepspeed && mapping == Mapping::file_per_rank &&
         parallel.zero_stage >= 3 && parallel.ep == 1 &&
         state.scope == workloads::StateScope::full && state.master_dtype.has_value() &&
         state.sizing == workloads::Sizing::exact;
}

}  // namespace ckpt::harness
