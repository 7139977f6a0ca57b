#include "harness/spec/case.hpp"

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

}  // namespace ckpt::harness
