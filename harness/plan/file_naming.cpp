#include "harness/plan/file_naming.hpp"

#include <fmt/format.h>

namespace ckpt::harness {
namespace {

std::string megatron_file(const workloads::Layout& layout, const workloads::RankCoord& c) {
  const auto& p = layout.parallel();
  std::string dir = fmt::format("mp_rank_{:02d}", c.tp);
  if (p.pp > 1) dir += fmt::format("_{:03d}", c.pp);
  if (p.ep > 1) dir += fmt::format("_{:03d}", c.ep);
  return dir + (c.dp == 0 ? "/model_optim_rng.pt" : fmt::format("/distrib_optim_dp{:03d}.pt", c.dp));
}

std::string deepspeed_file(const workloads::Layout& layout, const workloads::RankCoord& c,
                           workloads::StateKind kind) {
  const auto& p = layout.parallel();
  const std::int64_t mp = c.pp * p.tp + c.tp;
  if (kind != workloads::StateKind::weight) {
    return fmt::format("bf16_zero_pp_rank_{}_mp_rank_{:02d}_optim_states.pt", c.dp, mp);
  }
  if (p.zero_stage >= 3 || p.ep > 1) return fmt::format("zero_pp_rank_{}_mp_rank_{:02d}_model_states.pt", c.dp, mp);
  return fmt::format("mp_rank_{:02d}_model_states.pt", mp);
}

}  // namespace

bool mapping_shares_files(Mapping mapping) {
  return mapping == Mapping::file_per_node || mapping == Mapping::shared_file;
}

std::string shard_file(const Case& c, const workloads::Layout& layout, std::int64_t rank,
                       const workloads::Shard& shard) {
  switch (c.mapping) {
    case Mapping::file_per_tensor: return fmt::format("r{:05d}/{}.bin", rank, shard.name);
    case Mapping::file_per_node: return fmt::format("node_{:04d}.bin", rank / c.ranks.gpus_per_node);
    case Mapping::shared_file: return "checkpoint.bin";
    case Mapping::file_per_rank: break;
  }
  switch (c.directory_layout) {
    case DirectoryLayout::megatron: return megatron_file(layout, layout.coord(rank));
    case DirectoryLayout::deepspeed: return deepspeed_file(layout, layout.coord(rank), shard.state);
    case DirectoryLayout::dcp: break;
  }
  return fmt::format("__{}_0.distcp", rank);
}

}  // namespace ckpt::harness
