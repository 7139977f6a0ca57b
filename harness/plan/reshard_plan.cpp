#include "harness/plan/reshard_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "harness/common/align.hpp"

namespace ckpt::harness {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string tensor_text(const NeededShard& s) {
  return fmt::format("tensor {} ({})", s.name, workloads::state_kind_name(s.state));
}

bool same_trailing_shape(const ShardGeometry& a, const ShardGeometry& b) {
  if (a.global_shape.size() != b.global_shape.size() || a.element_bytes != b.element_bytes)
    return false;
  return std::equal(a.global_shape.begin() + (a.global_shape.empty() ? 0 : 1), a.global_shape.end(),
                    b.global_shape.begin() + (b.global_shape.empty() ? 0 : 1));
}

std::int64_t elements_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

void check_compatible(const NeededShard& need, const StoredPiece& piece) {
  if (!piece.geometry.exact || !need.geometry.exact) {
    throw std::runtime_error(fmt::format(
        "{}: model.scale does not shrink it exactly (leading dimension {} of shape {}, slice "
        "offset {} extent {}), so "
        "its scaled pieces cannot be resharded; choose a model.scale that divides the leading "
        "dimensions of every "
        "tensor slice (a power of two such as 16 or 64), or restore with the writer's layout",
        tensor_text(need), piece.geometry.global_shape.empty() ? 0 : piece.geometry.global_shape[0],
        shape_text(piece.geometry.global_shape), shape_text(piece.geometry.offset),
        shape_text(piece.geometry.extent)));
  }
  if (!same_trailing_shape(need.geometry, piece.geometry)) {
    throw std::runtime_error(fmt::format(
        "{}: the checkpoint stores shape {} ({} bytes an element), this layout needs {} ({} bytes "
        "an element); only the "
        "leading dimension may differ — restore the model and state dtypes the checkpoint was "
        "written with",
        tensor_text(need), shape_text(piece.geometry.global_shape), piece.geometry.element_bytes,
        shape_text(need.geometry.global_shape), need.geometry.element_bytes));
  }
}

// The first needed element no stored piece covers (`covered`: global intervals), or -1. Gaps at
// or beyond `stored_elements` are padding, appended to `padding` in buffer bytes.
std::int64_t first_uncovered(const std::vector<GlobalRun>& runs,
                             std::vector<std::pair<std::int64_t, std::int64_t>> covered,
                             std::int64_t stored_elements, const NeededShard& need,
                             std::size_t index, std::vector<PaddingRun>& padding) {
  std::sort(covered.begin(), covered.end());
  const auto eb = static_cast<std::uint64_t>(need.geometry.element_bytes);
  std::size_t c = 0;
  for (const GlobalRun& run : runs) {
    std::int64_t at = run.global;
    const std::int64_t end = run.global + run.elements;
    while (at < end) {
      while (c < covered.size() && covered[c].second <= at) ++c;
      if (c < covered.size() && covered[c].first <= at) {
        at = std::min(end, covered[c].second);
        continue;
      }
      const std::int64_t gap_end = c < covered.size() ? std::min(end, covered[c].first) : end;
      if (at < stored_elements) return at;
      padding.push_back(
          {need.memory_offset + static_cast<std::uint64_t>(run.local + (at - run.global)) * eb,
           static_cast<std::uint64_t>(gap_end - at) * eb, static_cast<std::uint64_t>(at) * eb, 0,
           index});
      at = gap_end;
    }
  }
  return -1;
}

// Runs [first, last) of consecutive overlaps (in file order: intersect's order) whose gap in the
// stored piece is at most `gap_bytes`.
std::vector<std::pair<std::size_t, std::size_t>> gap_groups(const std::vector<Overlap>& overlaps,
                                                            std::uint64_t eb,
                                                            std::uint64_t gap_bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  std::size_t first = 0;
  for (std::size_t k = 1; k <= overlaps.size(); ++k) {
    if (k < overlaps.size()) {
      const auto gap = static_cast<std::uint64_t>(overlaps[k].stored - overlaps[k - 1].stored -
                                                  overlaps[k - 1].elements);
      if (gap * eb <= gap_bytes) continue;
    }
    groups.emplace_back(first, k);
    first = k;
  }
  return groups;
}

// Scratch space after the shards, handed out aligned.
class Scratch {
 public:
  Scratch(std::uint64_t start, std::uint64_t alignment) : end_(start), alignment_(alignment) {}
  std::uint64_t place(std::uint64_t length) {
    const std::uint64_t at = align_up(end_, alignment_);
    end_ = at + length;
    return at;
  }
  std::uint64_t end() const { return end_; }

 private:
  std::uint64_t end_;
  std::uint64_t alignment_;
};

// read = exact: each group of overlaps (gap_groups) with more than one member is one read into
// scratch, scattered by copies (the rows of a row-parallel half: one request instead of one per
// row); a lone overlap is read in place. gap_bytes = 0 and overlaps that do not all follow each
// other in the file: a request per overlap.
void plan_exact(const std::vector<Overlap>& overlaps, const StoredPiece& piece,
                const NeededShard& need, std::size_t file, std::uint64_t gap_bytes,
                Scratch& scratch, std::vector<ByteRange>& requests,
                std::vector<BufferCopy>& copies) {
  const auto eb = static_cast<std::uint64_t>(need.geometry.element_bytes);
  const auto groups = gap_groups(overlaps, eb, gap_bytes);
  const auto in_place = [&](const Overlap& o) {
    requests.push_back({file, piece.file_offset + static_cast<std::uint64_t>(o.stored) * eb,
                        need.memory_offset + static_cast<std::uint64_t>(o.needed) * eb,
                        static_cast<std::uint64_t>(o.elements) * eb});
  };
  if (gap_bytes == 0 && groups.size() != 1) {
    for (const Overlap& o : overlaps) in_place(o);
    return;
  }
  for (const auto& [first, last] : groups) {
    if (last - first == 1) {
      in_place(overlaps[first]);
      continue;
    }
    const Overlap& head = overlaps[first];
    const Overlap& tail = overlaps[last - 1];
    const auto length = static_cast<std::uint64_t>(tail.stored + tail.elements - head.stored) * eb;
    const std::uint64_t at = scratch.place(length);
    for (std::size_t k = first; k < last; ++k) {
      copies.push_back({at + static_cast<std::uint64_t>(overlaps[k].stored - head.stored) * eb,
                        need.memory_offset + static_cast<std::uint64_t>(overlaps[k].needed) * eb,
                        static_cast<std::uint64_t>(overlaps[k].elements) * eb});
    }
    requests.push_back(
        {file, piece.file_offset + static_cast<std::uint64_t>(head.stored) * eb, at, length});
  }
}

// backend.direct: every request not aligned to `alignment` in file offset, length and memory
// offset is read aligned outward into scratch. Its bytes reach their place by a copy (shard
// destination) or by moving the copies that read the scratch region it replaces.
void align_requests(RankReadPlan& plan, std::uint64_t alignment, Scratch& scratch) {
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>>
      moved;  // old start -> (length, new start)
  for (ByteRange& r : plan.requests) {
    if (r.file_offset % alignment == 0 && r.length % alignment == 0 &&
        r.memory_offset % alignment == 0)
      continue;
    const std::uint64_t lo = r.file_offset / alignment * alignment;
    const std::uint64_t length = align_up(r.file_offset + r.length, alignment) - lo;
    const std::uint64_t at = scratch.place(length);
    const std::uint64_t data = at + (r.file_offset - lo);
    if (r.memory_offset >= plan.scratch_offset) {
      moved[r.memory_offset] = {r.length, data};
    } else {
      plan.copies.push_back({data, r.memory_offset, r.length});
    }
    r = {r.file, lo, at, length};
  }
  if (moved.empty()) return;
  for (BufferCopy& c : plan.copies) {
    auto it = moved.upper_bound(c.from);
    if (it == moved.begin()) continue;
    --it;
    if (c.from < it->first + it->second.first) c.from = it->second.second + (c.from - it->first);
  }
}

// Sorts requests into file order; with `merge`, merges those that continue each other in the
// file and in memory.
std::vector<ByteRange> coalesce(std::vector<ByteRange> requests, bool merge) {
  std::sort(requests.begin(), requests.end(), [](const ByteRange& a, const ByteRange& b) {
    return std::tie(a.file, a.file_offset) < std::tie(b.file, b.file_offset);
  });
  std::vector<ByteRange> out;
  for (const ByteRange& r : requests) {
    if (merge && !out.empty() && out.back().file == r.file &&
        out.back().file_offset + out.back().length == r.file_offset &&
        out.back().memory_offset + out.back().length == r.memory_offset) {
      out.back().length += r.length;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

std::vector<Overlap> intersect(const ShardGeometry& needed, const ShardGeometry& stored) {
  const std::vector<GlobalRun> a = global_runs(needed);
  const std::vector<GlobalRun> b = global_runs(stored);
  std::vector<Overlap> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].global, b[j].global);
    const std::int64_t a_end = a[i].global + a[i].elements;
    const std::int64_t b_end = b[j].global + b[j].elements;
    const std::int64_t hi = std::min(a_end, b_end);
    if (lo < hi) {
      const Overlap next{a[i].local + (lo - a[i].global), b[j].local + (lo - b[j].global), hi - lo};
      if (!out.empty() && out.back().needed + out.back().elements == next.needed &&
          out.back().stored + out.back().elements == next.stored) {
        out.back().elements += next.elements;
      } else {
        out.push_back(next);
      }
    }
    if (a_end <= b_end) ++i;
    if (b_end <= a_end) ++j;
  }
  return out;
}

RankReadPlan plan_rank_reads(const std::vector<NeededShard>& needed, const StoredPieces& stored,
                             ReshardRead mode, std::uint64_t shards_bytes, std::uint64_t alignment,
                             const ReadShaping& shaping) {
  const std::uint64_t align = std::max<std::uint64_t>({1, alignment, shaping.direct_alignment});
  RankReadPlan plan;
  std::map<std::string, std::size_t> file_index;
  const auto file_of = [&](const std::string& file) {
    const auto [it, inserted] = file_index.try_emplace(file, plan.files.size());
    if (inserted) plan.files.push_back(file);
    return it->second;
  };
  plan.scratch_offset = align_up(shards_bytes, align);
  Scratch scratch(plan.scratch_offset, align);
  std::map<const StoredPiece*, std::uint64_t>
      scratch_of;  // whole_items: each stored piece read once
  std::vector<ByteRange> requests;
  for (std::size_t index = 0; index < needed.size(); ++index) {
    const NeededShard& need = needed[index];
    if (const std::optional<StoredPiece>& piece = need.stored_as) {
      const std::uint64_t granule = std::max<std::uint64_t>(1, shaping.whole_piece_granule);
      requests.push_back({file_of(piece->file), piece->file_offset, need.memory_offset,
                          align_up(need.geometry.bytes(), granule)});
      plan.bytes_needed += need.geometry.bytes();
      continue;
    }
    const auto found = stored.find({need.state, need.name});
    if (found == stored.end()) {
      throw std::runtime_error(
          fmt::format("{}: the checkpoint stores no piece of it — restore.* asks for state the "
                      "checkpoint was not written with "
                      "(see its manifest), or the writer's ranks selection left this tensor out",
                      tensor_text(need)));
    }
    const auto eb = static_cast<std::uint64_t>(need.geometry.element_bytes);
    std::vector<std::pair<std::int64_t, std::int64_t>> covered;
    std::int64_t stored_elements = 0;
    for (const StoredPiece& piece : found->second) {
      check_compatible(need, piece);
      stored_elements = std::max(stored_elements, elements_of(piece.geometry.global_shape));
      const std::vector<Overlap> overlaps = intersect(need.geometry, piece.geometry);
      if (overlaps.empty()) continue;
      for (const GlobalRun& run : global_runs(piece.geometry)) {
        // Coverage in global elements, for the completeness check below.
        for (const Overlap& o : overlaps) {
          const std::int64_t lo = std::max(o.stored, run.local);
          const std::int64_t hi = std::min(o.stored + o.elements, run.local + run.elements);
          if (lo < hi)
            covered.emplace_back(run.global + (lo - run.local), run.global + (hi - run.local));
        }
      }
      const std::size_t file = file_of(piece.file);
      if (mode == ReshardRead::whole_items) {
        const auto [it, first] = scratch_of.try_emplace(&piece, 0);
        if (first) {
          const std::uint64_t item =
              piece.framing_before + piece.geometry.bytes() + piece.framing_after;
          const std::uint64_t at = scratch.place(item);
          requests.push_back({file, piece.file_offset - piece.framing_before, at, item});
          it->second = at + piece.framing_before;  // where the piece's own bytes landed
        }
        for (const Overlap& o : overlaps) {
          plan.copies.push_back({it->second + static_cast<std::uint64_t>(o.stored) * eb,
                                 need.memory_offset + static_cast<std::uint64_t>(o.needed) * eb,
                                 static_cast<std::uint64_t>(o.elements) * eb});
        }
      } else {
        plan_exact(overlaps, piece, need, file, shaping.gap_bytes, scratch, requests, plan.copies);
      }
    }
    const std::size_t padding_before = plan.padding.size();
    const std::int64_t missing = first_uncovered(global_runs(need.geometry), covered,
                                                 stored_elements, need, index, plan.padding);
    if (missing >= 0) {
      throw std::runtime_error(fmt::format(
          "{}: global element {} (flat {}) is stored in no piece of the checkpoint — its writer's "
          "ranks selection "
          "(ranks.*) did not write every rank this restore's ranks (restore.ranks.*) need; write "
          "the whole job or "
          "select restore ranks whose shards the written ranks hold",
          tensor_text(need), global_index_text(need.geometry.global_shape, missing), missing));
    }
    std::uint64_t padding = 0;
    for (std::size_t p = padding_before; p < plan.padding.size(); ++p)
      padding += plan.padding[p].bytes;
    plan.padding_bytes += padding;
    plan.bytes_needed += need.geometry.bytes() - padding;
  }
  plan.requests = coalesce(std::move(requests), shaping.merge_adjacent);
  if (shaping.direct_alignment > 1) {
    align_requests(plan, shaping.direct_alignment, scratch);
    std::stable_sort(plan.requests.begin(), plan.requests.end(),
                     [](const ByteRange& a, const ByteRange& b) {
                       return std::tie(a.file, a.file_offset) < std::tie(b.file, b.file_offset);
                     });
  }
  for (const ByteRange& r : plan.requests) plan.bytes_read += r.length;
  plan.buffer_bytes = align_up(scratch.end(), align);
  return plan;
}

}  // namespace ckpt::harness
