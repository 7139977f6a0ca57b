#include "workloads/flat_buffer.hpp"

#include "workloads/checked_math.hpp"

namespace ckpt::workloads {

OwnedList OwnedList::build(const std::vector<TensorDef>& defs, std::int64_t tp, std::int64_t ep,
                           bool owns_replicated) {
  OwnedList list;
  for (const TensorDef& def : defs) {
    const bool split = def.split != TpSplit::replicated;
    if (!split && !owns_replicated) continue;
    list.defs.push_back(&def);
    list.begin.push_back(list.total);
    const std::int64_t local = (split ? def.numel() / tp : def.numel()) / (def.expert_dim ? ep : 1);
    list.local_numel.push_back(local);
    list.total += local;
  }
  return list;
}

std::size_t OwnedList::find(std::int64_t offset) const {
  const auto it = std::upper_bound(begin.begin(), begin.end(), offset);
  return static_cast<std::size_t>(it - begin.begin()) - 1;
}

OwnedCatalog OwnedCatalog::build(const TensorCatalog& catalog, const ParallelSpec& parallel,
                                 bool owns_replicated) {
  const std::int64_t tp = parallel.tp;
  const std::int64_t ep = parallel.ep;
  OwnedCatalog owned{OwnedList::build(catalog.first_stage, tp, ep, owns_replicated),
                     OwnedList::build(catalog.expert, tp, ep, owns_replicated),
                     OwnedList::build(catalog.last_stage, tp, ep, owns_replicated),
                     {}};
  for (const LayerTemplate& t : catalog.layer_templates)
    owned.layers.push_back(OwnedList::build(t.tensors, tp, ep, owns_replicated));
  return owned;
}

void FlatBuffer::append(const Segment& segment) {
  if (segment.copies <= 0 || segment.list->total == 0) return;
  segments_.push_back(segment);
  // Layout's size checks keep these within int64; checked all the same, as they come from input.
  const char* what = "a rank's flat buffer";
  elements_ = checked_add(
      elements_, checked_mul(segment.copies, segment.list->total, "num_hidden_layers", what),
      "num_hidden_layers", what);
  tensors_ =
      checked_add(tensors_,
                  checked_mul(segment.copies, static_cast<std::int64_t>(segment.list->size()),
                              "num_hidden_layers", what),
                  "num_hidden_layers", what);
}

std::int64_t FlatBuffer::tensor_index(std::int64_t offset) const {
  std::int64_t base = 0;
  std::int64_t index_base = 0;
  for (const Segment& seg : segments_) {
    const std::int64_t n = static_cast<std::int64_t>(seg.list->size());
    if (offset < base + seg.elements()) {
      const std::int64_t x = offset - base;
      const std::int64_t copy = x / seg.list->total;
      return index_base + copy * n + static_cast<std::int64_t>(seg.list->find(x % seg.list->total));
    }
    base += seg.elements();
    index_base += seg.copies * n;
  }
  return index_base;
}

std::int64_t FlatBuffer::count_tensors(std::int64_t begin, std::int64_t end) const {
  if (end <= begin) return 0;
  return tensor_index(end - 1) - tensor_index(begin) + 1;
}

std::pair<std::int64_t, std::int64_t> balanced_partition(std::int64_t total, std::int64_t parts,
                                                         std::int64_t index) {
  const std::int64_t base = total / parts;
  const std::int64_t extra = total % parts;
  const std::int64_t begin = index * base + std::min(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

}  // namespace ckpt::workloads
