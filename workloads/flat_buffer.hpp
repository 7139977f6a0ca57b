#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "workloads/tensor_catalog.hpp"

namespace ckpt::workloads {

// The tensors of one catalog list that one tensor-parallel rank owns, with their local
// (TP-sliced) element counts and running offsets: the unit a flat buffer repeats per layer.
struct OwnedList {
  std::vector<const TensorDef*> defs;
  std::vector<std::int64_t> local_numel;
  std::vector<std::int64_t> begin;
  std::int64_t total = 0;

  // Local counts divide TP-split dims by tp and fused expert dims by ep.
  static OwnedList build(const std::vector<TensorDef>& defs, std::int64_t tp, std::int64_t ep,
                         bool owns_replicated);
  std::size_t find(std::int64_t offset) const;  // index of the def holding local element `offset`
  std::size_t size() const { return defs.size(); }
};

// Owned lists of every catalog part, for one TP ownership class.
struct OwnedCatalog {
  OwnedList first_stage, expert, last_stage;
  std::vector<OwnedList> layers;  // one per layer template

  static OwnedCatalog build(const TensorCatalog& catalog, const ParallelSpec& parallel,
                            bool owns_replicated);
};

// `copies` consecutive repetitions of a list: a run of identical layers, or of a layer's
// local experts (copy c is expert c % experts_per_layer of layer first_layer + c /
// experts_per_layer).
struct Segment {
  const OwnedList* list = nullptr;
  std::int64_t copies = 0;
  std::int64_t first_layer = -1;       // -1: stage-level tensors (embedding, final norm)
  std::int64_t experts_per_layer = 0;  // 0: not expert tensors
  std::int64_t expert_base = 0;        // global id of this rank's first local expert

  std::int64_t elements() const { return copies * list->total; }
  std::int64_t layer_of(std::int64_t copy) const {
    if (first_layer < 0) return -1;
    return first_layer + (experts_per_layer > 0 ? copy / experts_per_layer : copy);
  }
  std::int64_t expert_of(std::int64_t copy) const {
    return experts_per_layer > 0 ? expert_base + copy % experts_per_layer : -1;
  }
};

// A piece of one tensor inside a flat buffer: elements [lo, hi) of the tensor's local slice.
struct PieceRef {
  const Segment* segment;
  std::int64_t copy;
  std::size_t def;
  std::int64_t lo, hi;

  const TensorDef& tensor() const { return *segment->list->defs[def]; }
};

// The flattened concatenation of the tensors one rank holds for one parameter group (dense or
// expert), in the order ZeRO / Megatron's distributed optimizer partitions them across DP.
class FlatBuffer {
 public:
  void append(const Segment& segment);

  std::int64_t elements() const { return elements_; }
  std::int64_t tensors() const { return tensors_; }
  // Number of tensors with at least one element in [begin, end).
  std::int64_t count_tensors(std::int64_t begin, std::int64_t end) const;

  // Calls visit(PieceRef) for every tensor piece in [begin, end), in buffer order.
  template <typename Visit>
  void walk(std::int64_t begin, std::int64_t end, Visit&& visit) const {
    std::int64_t base = 0;
    for (const Segment& seg : segments_) {
      const std::int64_t seg_end = base + seg.elements();
      if (end <= base) break;
      if (begin < seg_end)
        walk_segment(seg, std::max(begin, base) - base, std::min(end, seg_end) - base, visit);
      base = seg_end;
    }
  }

 private:
  std::int64_t tensor_index(std::int64_t offset) const;

  template <typename Visit>
  static void walk_segment(const Segment& seg, std::int64_t x, std::int64_t stop, Visit& visit) {
    const OwnedList& list = *seg.list;
    std::int64_t copy = x / list.total;
    std::size_t d = list.find(x % list.total);
    while (x < stop) {
      const std::int64_t def_begin = copy * list.total + list.begin[d];
      const std::int64_t hi = std::min(stop, def_begin + list.local_numel[d]);
      visit(PieceRef{&seg, copy, d, x - def_begin, hi - def_begin});
      x = hi;
      if (++d == list.size()) {
        d = 0;
        ++copy;
      }
    }
  }

  std::vector<Segment> segments_;
  std::int64_t elements_ = 0;
  std::int64_t tensors_ = 0;
};

// Elements [begin, end) of partition `index` when `total` elements are split over `parts`
// as evenly as possible (sizes differ by at most one element).
std::pair<std::int64_t, std::int64_t> balanced_partition(std::int64_t total, std::int64_t parts,
                                                         std::int64_t index);

}  // namespace ckpt::workloads
