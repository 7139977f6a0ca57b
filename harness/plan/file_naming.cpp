#include "harness/plan/file_naming.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "harness/plan/deepspeed_zero12.hpp"
#include "harness/plan/deepspeed_zero3.hpp"

namespace ckpt::harness {
namespace {

std::string megatron_dir(const workloads::ParallelSpec& p, const workloads::RankCoord& c) {
  std::string dir = fmt::format("mp_rank_{:02d}", c.tp);
  if (p.pp > 1) dir += fmt::format("_{:03d}", c.pp);
  if (p.ep > 1) dir += fmt::format("_{:03d}", c.ep);
  return dir;
}

// megatron/training/checkpointing.py: get_checkpoint_name (model_optim_rng.pt) and
// get_distributed_optimizer_checkpoint_name (distrib_optim.pt beside it); the older
// per-DP format put each DP rank's optimizer shard in mp_rank_TT_PPP_DDD/optim.pt.
std::string megatron_file(const Case& c, const workloads::Layout& layout, std::int64_t rank,
                          workloads::StateKind kind) {
  const auto& p = layout.parallel();
  const workloads::RankCoord coord = layout.coord(rank);
  const std::string dir = megatron_dir(p, coord);
  if (kind == workloads::StateKind::weight || p.zero_stage == 0 || p.dp == 1)
    return dir + "/model_optim_rng.pt";
  if (c.megatron_optimizer == MegatronOptimizer::per_dp)
    return dir + fmt::format("_{:03d}/optim.pt", coord.dp);
  return dir + "/distrib_optim.pt";
}

// The global transformer layer a tensor name belongs to ("…layers.N.…"), if any.
std::optional<std::int64_t> layer_of(std::string_view name) {
  constexpr std::string_view marker = "layers.";
  const std::size_t at = name.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::int64_t layer = 0;
  std::size_t i = at + marker.size();
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i)
    layer = layer * 10 + (name[i] - '0');
  return layer;
}

// DeepSpeed's PipelineModule numbers its layer specs globally and saves one file per layer
// and model-parallel rank (pipe/module.py: ckpt_layer_path). We number the specs of a plain
// GPT pipeline: 0 the embedding, 1..L the transformer layers, L+1 the final norm, L+2 an
// untied output layer (a tied one is the embedding module, saved once).
std::int64_t deepspeed_layer_index(const workloads::Layout& layout, const workloads::Shard& shard,
                                   const workloads::RankCoord& c) {
  if (const auto layer = layer_of(shard.name)) return *layer + 1;
  if (c.pp == 0) return 0;
  const std::int64_t layers = layout.model().num_hidden_layers;
  return shard.name.find("norm") != std::string::npos ? layers + 1 : layers + 2;
}

std::string deepspeed_file(const workloads::Layout& layout, const workloads::RankCoord& c,
                           const workloads::Shard& shard) {
  const auto& p = layout.parallel();
  const std::int64_t mp = c.pp * p.tp + c.tp;
  // Without ZeRO, DeepSpeed's mixed-precision optimizer saves its state in the model's file.
  if (shard.state != workloads::StateKind::weight) {
    return p.zero_stage == 0 && p.pp == 1 && p.ep == 1 ? deepspeed_model_states(mp)
                                                       : deepspeed_optimizer_file(c.dp, mp);
  }
  if (p.pp > 1) {
    return fmt::format("layer_{:02d}-model_{:02d}-model_states.pt",
                       deepspeed_layer_index(layout, shard, c), c.tp);
  }
  if (p.zero_stage >= 3 || p.ep > 1) return deepspeed_zero_model_states(c.dp, mp);
  return deepspeed_model_states(mp);
}

std::vector<std::string> writer_thread_files(std::int64_t rank, int threads,
                                             const std::vector<workloads::Shard>& shards) {
  std::vector<std::size_t> order(shards.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&shards](std::size_t a, std::size_t b) {
    return shards[a].bytes > shards[b].bytes;
  });
  std::vector<std::int64_t> bin_bytes(static_cast<std::size_t>(std::max(1, threads)), 0);
  std::vector<std::string> files(shards.size());
  for (const std::size_t i : order) {
    const auto bin = std::min_element(bin_bytes.begin(), bin_bytes.end());
    *bin += shards[i].bytes;
    files[i] = fmt::format("__{}_{}.distcp", rank, bin - bin_bytes.begin());
  }
  return files;
}

}  // namespace

std::string deepspeed_optimizer_file(std::int64_t dp, std::int64_t mp) {
  return fmt::format("bf16_zero_pp_rank_{}_mp_rank_{:02d}_optim_states.pt", dp, mp);
}

std::string deepspeed_model_states(std::int64_t mp) {
  return fmt::format("mp_rank_{:02d}_model_states.pt", mp);
}

std::string deepspeed_zero_model_states(std::int64_t dp, std::int64_t mp) {
  return fmt::format("zero_pp_rank_{}_mp_rank_{:02d}_model_states.pt", dp, mp);
}

std::vector<std::string> shard_files(const Case& c, const workloads::Layout& layout,
                                     std::int64_t rank,
                                     const std::vector<workloads::Shard>& shards) {
  if (c.mapping == Mapping::file_per_rank && c.directory_layout == DirectoryLayout::megatron_dist) {
    return writer_thread_files(rank, c.writer_threads, shards);
  }
  std::vector<std::string> files;
  files.reserve(shards.size());
  for (const workloads::Shard& s : shards) files.push_back(shard_file(c, layout, rank, s));
  return files;
}

std::optional<EngineStateFile> deepspeed_engine_state_file(const Case& c,
                                                           const workloads::Layout& layout,
                                                           std::int64_t rank) {
  const auto& p = layout.parallel();
  const workloads::RankCoord coord = layout.coord(rank);
  if (deepspeed_zero3_files(c, layout)) {
    return EngineStateFile{deepspeed_zero_model_states(coord.dp, coord.tp),
                           deepspeed_zero3_model_states_bytes(layout, rank)};
  }
  if (c.directory_layout != DirectoryLayout::deepspeed || c.mapping != Mapping::file_per_rank ||
      p.pp == 1 || coord.dp != 0) {
    return std::nullopt;
  }
  EngineStateFile f{deepspeed_model_states(coord.pp * p.tp + coord.tp), kEngineStateBaseBytes};
  for (const workloads::Shard& s : layout.shards(rank)) {
    if (s.state == workloads::StateKind::weight)
      f.bytes += s.name.size() + 32 + 4 * s.global_shape.size();
  }
  return f;
}

std::vector<EngineStateFile> deepspeed_recovery_scripts(const Case& c,
                                                        const workloads::Layout& layout,
                                                        std::int64_t rank) {
  if (rank != 0 || !(deepspeed_zero3_files(c, layout) || deepspeed_zero12_files(c, layout)))
    return {};
  return {{"../zero_to_fp32.py", kZeroToFp32ScriptBytes},
          {"../zero_to_torch.py", kZeroToTorchScriptBytes}};
}

bool mapping_shares_files(Mapping mapping) {
  return mapping == Mapping::file_per_node || mapping == Mapping::shared_file;
}

std::string shard_file(const Case& c, const workloads::Layout& layout, std::int64_t rank,
                       const workloads::Shard& shard) {
  switch (c.mapping) {
    case Mapping::file_per_tensor:
      return fmt::format("r{:05d}/{}.bin", rank, shard.name);
    case Mapping::file_per_node:
      return fmt::format("node_{:04d}.bin", rank / c.ranks.gpus_per_node);
    case Mapping::shared_file:
      return "checkpoint.bin";
    case Mapping::file_per_rank:
      break;
  }
  switch (c.directory_layout) {
    case DirectoryLayout::megatron:
      return megatron_file(c, layout, rank, shard.state);
    case DirectoryLayout::deepspeed:
      return deepspeed_file(layout, layout.coord(rank), shard);
    case DirectoryLayout::megatron_dist:  // shard_files() picks the writer thread's file
    case DirectoryLayout::dcp:
      break;
  }
  return fmt::format("__{}_0.distcp", rank);
}

}  // namespace ckpt::harness
