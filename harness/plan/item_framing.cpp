#include "harness/plan/item_framing.hpp"

#include <functional>
#include <numeric>

#include "harness/formats/torch_save_size.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/plan/stand_in_text.hpp"

namespace ckpt::harness {
namespace {

// The shape torch.save pickles: the shard's slice when the shard is all of it, else its
// elements in one dimension.
std::vector<std::int64_t> pickled_shape(const ShardGeometry& g) {
  const std::int64_t slice =
      std::accumulate(g.extent.begin(), g.extent.end(), std::int64_t{1}, std::multiplies<>());
  if (g.exact && g.flat_begin == 0 && g.flat_end == slice) return g.extent;
  return {g.elements()};
}

}  // namespace

bool writes_distcp_items(DirectoryLayout layout) {
  return layout == DirectoryLayout::dcp || layout == DirectoryLayout::megatron_dist;
}

bool frames_items(const Case& c) {
  return c.framing && writes_distcp_items(c.directory_layout);
}

ItemFraming archive_framing(const workloads::Shard& shard, std::int64_t scale) {
  const ShardGeometry g = shard_geometry(shard, scale);
  const TorchSaveArchive archive = torch_save_tensor_archive(pickled_shape(g), shard.dtype);
  const std::uint64_t data = archive.storage_offsets.front();
  return {data, archive.bytes - data - g.bytes()};
}

ItemFraming item_framing(const workloads::Shard& shard, const Case& c) {
  return frames_items(c) ? archive_framing(shard, c.scale) : ItemFraming{};
}

std::string framing_text(const workloads::Shard& shard, std::uint64_t bytes, bool before) {
  return stand_in_text("ckptbench stand-in for torch.save's framing " +
                           std::string(before ? "before " : "after ") + shard.name + "\n",
                       bytes);
}

}  // namespace ckpt::harness
