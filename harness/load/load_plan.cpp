#include "harness/load/load_plan.hpp"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "harness/common/elapsed.hpp"
#include "harness/models/model_zoo.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/run/iteration.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

// The enumerator of `all` that `name` gives `text`; throws naming the manifest key.
template <typename E, std::size_t N>
E named(const nlohmann::json& text, std::string_view key, const std::array<E, N>& all, std::string_view (*name)(E)) {
  const std::string value = text.get<std::string>();
  for (const E e : all) {
    if (name(e) == value) return e;
  }
  throw std::runtime_error(fmt::format("{} = \"{}\" is unknown to this ckptbench", key, value));
}

// The writer's parallel.* as its manifest's config records them.
workloads::ParallelSpec recorded_parallel(const nlohmann::json& parallel) {
  workloads::ParallelSpec p;
  p.tp = parallel.at("tp").get<std::int64_t>();
  p.pp = parallel.at("pp").get<std::int64_t>();
  p.dp = parallel.at("dp").get<std::int64_t>();
  p.ep = parallel.at("ep").get<std::int64_t>();
  p.zero_stage = parallel.at("zero").get<int>();
  p.vocab_divisor = parallel.at("vocab_divisor").get<std::int64_t>();
  p.pp_first_stage_layers = parallel.at("pp_first_stage_layers").get<std::int64_t>();
  p.pp_last_stage_layers = parallel.at("pp_last_stage_layers").get<std::int64_t>();
  return p;
}

// The writer's state.* (and model.sizing) as its manifest's config records them.
workloads::StateSpec recorded_state(const nlohmann::json& config) {
  using workloads::Naming;
  using workloads::Sizing;
  using workloads::StateScope;
  const nlohmann::json& state = config.at("state");
  workloads::StateSpec s;
  s.scope = named(state.at("scope"), "state.scope", std::array{StateScope::weights, StateScope::full},
                  workloads::state_scope_name);
  if (const auto naming = state.find("naming"); naming != state.end() && !naming->is_null()) {
    s.naming = named(*naming, "state.naming", std::array{Naming::megatron, Naming::hf}, workloads::naming_name);
  }
  s.weight_dtype = workloads::parse_dtype(state.at("weight_dtype").get<std::string>());
  const std::string master = state.at("master_dtype").get<std::string>();
  s.master_dtype = master == "none" ? std::nullopt : std::optional(workloads::parse_dtype(master));
  s.optimizer_dtype = workloads::parse_dtype(state.at("optimizer_dtype").get<std::string>());
  s.sizing = named(config.at("model").at("sizing"), "model.sizing", std::array{Sizing::exact, Sizing::dlio},
                   workloads::sizing_name);
  return s;
}

workloads::ModelSpec recorded_model(const nlohmann::json& config) {
  const std::string name = config.at("model").at("name").get<std::string>();
  try {
    return load_model_argument(name);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("model.name = \"{}\" (the writer's, in the manifest's config) cannot be "
                                         "loaded: {} — a relative model file resolves against the working directory, "
                                         "so run from where the checkpoint was written",
                                         name, e.what()));
  }
}

}  // namespace

Case load_source(const Case& c) {
  Case source = c;
  source.index = c.load.source_index;
  return source;
}

RestoreSpec inference_layout(const workloads::ModelSpec& model, const workloads::ParallelSpec& writer,
                             const workloads::StateSpec& state, std::int64_t tp, std::uint64_t gap_bytes) {
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
  const workloads::Layout layout(model, r.parallel, r.state);  // throws SpecError when tp does not suit
  return r;
}

ReshardSpec load_spec(const Case& c) {
  ReshardSpec spec = reshard_spec(c);
  spec.reader = c.load.inference;
  spec.direct_alignment = 0;
  return spec;
}

ReshardSpec load_spec(const nlohmann::json& manifest, std::int64_t tp, std::uint64_t gap_bytes) {
  ReshardSpec spec;
  workloads::StateSpec state;
  try {
    const nlohmann::json& config = manifest.at("config");
    spec.writer = recorded_parallel(config.at("parallel"));
    state = recorded_state(config);
    spec.scale = manifest.value("scale", std::int64_t{1});  // as the stored pieces are scaled
    spec.seed = manifest.at("data").at("seed").get<std::uint64_t>();
    spec.alignment = config.at("strategy").at("alignment").get<std::uint64_t>();
    spec.chunk_bytes = config.at("strategy").at("chunk_bytes").get<std::uint64_t>();
    spec.shared_files = mapping_shares_files(
        named(manifest.at("mapping"), "mapping",
              std::array{Mapping::file_per_rank, Mapping::file_per_tensor, Mapping::file_per_node, Mapping::shared_file},
              mapping_name));
    spec.backend = config.at("backend").at("name").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("the manifest's config lacks what planning needs ({}): written by another "
                                         "ckptbench version, or damaged",
                                         e.what()));
  }
  spec.model = recorded_model(manifest.at("config"));
  spec.reader = inference_layout(spec.model, spec.writer, state, tp, gap_bytes);
  return spec;
}

std::vector<std::int64_t> inference_ranks(const RestoreSpec& layout) {
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(layout.parallel.world_size()));
  std::iota(ranks.begin(), ranks.end(), std::int64_t{0});
  return ranks;
}

std::vector<RankPlan> load_plans(const nlohmann::json& manifest, const ReshardSpec& spec,
                                 const std::vector<std::int64_t>& ranks, const std::filesystem::path& dir) {
  return reshard_plans(manifest, spec, ranks, dir);
}

std::vector<LoadFile> load_ranges(const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& offsets) {
  std::vector<LoadFile> ranges;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const ReadRequest& r : plans[p].reshard.requests) {
      ranges.push_back({.path = plans[p].io.files[r.file].path,
                        .size = r.length,
                        .destination_offset = offsets[p] + r.memory_offset,
                        .file_offset = r.file_offset});
    }
  }
  return ranges;
}

LoadCounts load_counts(const std::vector<RankPlan>& plans) {
  LoadCounts counts;
  for (const RankPlan& p : plans) {
    counts.bytes_needed += p.reshard.bytes_needed;
    counts.bytes_read += p.reshard.bytes_read;
    counts.padding_bytes += p.reshard.padding_bytes;
    counts.requests += p.reshard.requests.size();
  }
  // The plans are exact and unaligned (load_spec): what they read beyond the needed bytes is the
  // bridged gaps.
  counts.bridged_bytes = counts.bytes_read - counts.bytes_needed;
  return counts;
}

std::vector<LoadFile> prepare_planned_load(const std::vector<RankPlan>& plans, ProcessBuffer& buffer,
                                           DataPattern pattern) {
  buffer.zero();
  const std::vector<std::uint64_t> offsets = buffer_offsets(plans, buffer);
  fill_reshard_padding(plans, offsets, buffer.memory(), pattern);
  return load_ranges(plans, offsets);
}

LoadTiming load_planned(const std::vector<RankPlan>& plans, const std::vector<LoadFile>& ranges,
                        ProcessBuffer& buffer, const LoadSettings& settings, MemorySpace& pool_space,
                        const LoadStorage& storage) {
  // The loader's own clock: from its first open to the last byte in place (its chunk pool is
  // allocated and touched before it), then the scatter of strided rows.
  LoadTiming timing;
  if (!ranges.empty()) timing = load_files(ranges, buffer.memory(), settings, pool_space, storage);
  const auto scatter = Clock::now();
  apply_reshard_copies(plans, buffer_offsets(plans, buffer), buffer.memory());
  timing.seconds += seconds_since(scatter);
  return timing;
}

}  // namespace ckpt::harness
