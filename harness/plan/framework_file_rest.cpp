#include "harness/plan/framework_file_rest.hpp"

#include <algorithm>
#include <optional>

#include "harness/plan/deepspeed_zero0.hpp"
#include "harness/plan/deepspeed_zero12.hpp"
#include "harness/plan/deepspeed_zero3.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/megatron_pt_files.hpp"

namespace ckpt::harness {
namespace {

using FileBytes = PtFileBytes;

std::optional<FileBytes> deepspeed_file_bytes(const workloads::Layout& layout, const Case& c,
                                              std::int64_t rank, const std::string& file) {
  const workloads::RankCoord coord = layout.coord(rank);
  const bool optimizer_file = file == deepspeed_optimizer_file(coord.dp, coord.tp);
  if (deepspeed_zero3_files(c, layout) && optimizer_file) {
    return FileBytes{deepspeed_zero3_optimizer_file_bytes(layout, rank),
                     deepspeed_zero3_optimizer_data_bytes(layout, rank)};
  }
  if (deepspeed_zero0_files(c, layout) && file == deepspeed_model_states(coord.tp)) {
    return FileBytes{deepspeed_zero0_model_states_bytes(layout, rank),
                     deepspeed_zero0_model_states_data_bytes(layout, rank)};
  }
  if (!deepspeed_zero12_files(c, layout)) return std::nullopt;
  if (optimizer_file) {
    return FileBytes{deepspeed_zero12_optimizer_file_bytes(layout, rank),
                     deepspeed_zero12_optimizer_data_bytes(layout, rank)};
  }
  if (file == deepspeed_model_states(coord.tp)) {
    return FileBytes{deepspeed_zero12_model_states_bytes(layout, rank),
                     deepspeed_zero12_model_states_data_bytes(layout, rank)};
  }
  return std::nullopt;
}

std::optional<FileBytes> megatron_file_bytes(const workloads::Layout& layout, const Case& c,
                                             std::int64_t rank, const std::string& file) {
  if (!megatron_pt_files(c, layout)) return std::nullopt;
  if (file.ends_with("/model_optim_rng.pt")) return megatron_model_optim_rng_bytes(layout, c, rank);
  if (file.ends_with("/distrib_optim.pt")) return megatron_distrib_optim_bytes(layout, rank);
  return std::nullopt;
}

}  // namespace

std::uint64_t framework_file_rest(const workloads::Layout& layout, const Case& c, std::int64_t rank,
                                  const std::string& file, std::uint64_t tensor_bytes) {
  std::optional<FileBytes> bytes = deepspeed_file_bytes(layout, c, rank, file);
  if (!bytes) bytes = megatron_file_bytes(layout, c, rank, file);
  if (!bytes) return 0;
  const std::uint64_t target = c.framing ? bytes->whole : bytes->data;
  const auto scale = static_cast<std::uint64_t>(std::max<std::int64_t>(1, c.scale));
  return target > tensor_bytes ? (target - tensor_bytes) / scale : 0;
}

}  // namespace ckpt::harness
