#include "harness/loadplan/dataset_load_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/plan/file_naming.hpp"
#include "workloads/dtype.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

using Dims = std::vector<std::int64_t>;

std::int64_t dims_product(const Dims& extent) {
  return std::accumulate(extent.begin(), extent.end(), std::int64_t{1}, std::multiplies<>());
}

// A box of a tensor, in the unscaled coordinates the layout gives.
struct TensorBox {
  Dims offset;
  Dims extent;

  std::int64_t elements() const { return dims_product(extent); }
  bool operator==(const TensorBox&) const = default;
};

std::optional<TensorBox> box_overlap(const TensorBox& a, const TensorBox& b) {
  TensorBox out;
  for (std::size_t d = 0; d < a.offset.size(); ++d) {
    const std::int64_t lo = std::max(a.offset[d], b.offset[d]);
    const std::int64_t hi = std::min(a.offset[d] + a.extent[d], b.offset[d] + b.extent[d]);
    if (hi <= lo) return std::nullopt;
    out.offset.push_back(lo);
    out.extent.push_back(hi - lo);
  }
  return out;
}

std::string box_text(const TensorBox& box) {
  std::vector<std::string> ranges;
  for (std::size_t d = 0; d < box.offset.size(); ++d)
    ranges.push_back(fmt::format("{}:{}", box.offset[d], box.offset[d] + box.extent[d]));
  return fmt::format("[{}]", fmt::join(ranges, ", "));
}

// How one file stores one tensor (backends/hdf5/README.md): its whole slices there, and the
// dataset's form.
struct StoredDataset {
  std::string file;  // relative to the checkpoint directory
  std::vector<const ManifestTensor*> pieces;
  // Slice -> the unscaled flat ranges of it stored here (a whole slice, or ZeRO ranges of it).
  std::map<std::pair<Dims, Dims>, std::vector<std::pair<std::int64_t, std::int64_t>>> held;
  bool local = false;   // a dataset of its one slice's shape (a file of one process)
  bool scaled = false;  // its leading dimension divided by model.scale
};

// The slices the file holds whole (a ZeRO slice only where its ranges there cover it).
std::vector<TensorBox> whole_slices(const StoredDataset& stored) {
  std::vector<TensorBox> slices;
  for (auto [slice, ranges] : stored.held) {
    std::sort(ranges.begin(), ranges.end());
    std::int64_t covered_to = 0;
    for (const auto& [begin, end] : ranges) {
      if (begin > covered_to) break;
      covered_to = std::max(covered_to, end);
    }
    TensorBox box{slice.first, slice.second};
    if (covered_to >= box.elements()) slices.push_back(std::move(box));
  }
  return slices;
}

// Whether a piece moves into a dataset of leading dimension shape0 / scale exactly, as the hdf5
// backend decides it (hdf5::mark_shrinkable): leading shape, offset and extent divide, and at least
// 2 elements stay.
bool divides_exactly(std::int64_t shape0, std::int64_t offset0, std::int64_t extent0,
                     std::int64_t flat_begin, std::int64_t kept, std::int64_t slice_elements,
                     std::int64_t scale) {
  return shape0 % scale == 0 && offset0 % scale == 0 && extent0 % scale == 0 && kept >= 2 &&
         flat_begin / scale + kept <= slice_elements / scale;
}

struct Stored {
  std::map<std::pair<workloads::StateKind, std::string>, std::vector<StoredDataset>> datasets;
  bool scaled_shapes = true;  // backend.hdf5.shapes of the writer
  std::int64_t scale = 1;
};

// The writer's backend.hdf5.shapes from its recorded configuration ("scaled" when absent).
bool writer_scales_shapes(const Manifest& manifest) {
  const nlohmann::json& config = manifest.config;
  if (!config.is_object() || !config.contains("backend")) return true;
  const nlohmann::json& backend = config.at("backend");
  if (!backend.is_object() || !backend.contains("hdf5")) return true;
  const nlohmann::json& hdf5 = backend.at("hdf5");
  if (!hdf5.is_object() || !hdf5.contains("shapes") || !hdf5.at("shapes").is_string()) return true;
  return hdf5.at("shapes").get<std::string>() != "global";
}

void classify(StoredDataset& stored, bool shared_files, const Stored& all) {
  const ManifestTensor& first = *stored.pieces.front();
  stored.local = !shared_files;
  for (const ManifestTensor* t : stored.pieces) {
    stored.local = stored.local && t->shard.offset == first.shard.offset &&
                   t->shard.extent == first.shard.extent &&
                   t->shard.global_shape == first.shard.global_shape;
  }
  stored.scaled = all.scaled_shapes && all.scale > 1 && !first.shard.global_shape.empty() &&
                  !first.shard.unscaled;
  for (const ManifestTensor* t : stored.pieces) {
    const workloads::Shard& s = t->shard;
    if (s.global_shape.empty()) break;
    const auto eb = static_cast<std::int64_t>(workloads::dtype_bytes(s.dtype));
    const std::int64_t shape0 = stored.local ? s.extent[0] : s.global_shape[0];
    const std::int64_t offset0 = stored.local ? 0 : s.offset[0];
    stored.scaled = stored.scaled && divides_exactly(shape0, offset0, s.extent[0], s.flat_begin,
                                                     static_cast<std::int64_t>(t->bytes) / eb,
                                                     dims_product(s.extent), all.scale);
  }
}

Stored stored_datasets(const Manifest& manifest, std::int64_t scale) {
  Stored stored{.scaled_shapes = writer_scales_shapes(manifest), .scale = scale};
  const bool shared = mapping_shares_files(manifest.layout.mapping);
  for (const ManifestTensor& t : manifest.tensors) {
    std::vector<StoredDataset>& files = stored.datasets[{t.shard.state, t.shard.name}];
    const std::string file = t.stored_file();
    auto it = std::find_if(files.begin(), files.end(),
                           [&](const StoredDataset& d) { return d.file == file; });
    if (it == files.end()) it = files.insert(files.end(), StoredDataset{.file = file});
    it->pieces.push_back(&t);
    it->held[{t.shard.offset, t.shard.extent}].emplace_back(t.shard.flat_begin, t.shard.flat_end);
  }
  for (auto& [key, files] : stored.datasets) {
    for (StoredDataset& d : files) classify(d, shared, stored);
  }
  return stored;
}

// The flat index of `inner`'s first element within `outer` (row-major), and whether `inner`'s
// elements follow each other there: every dimension after the first it cuts is whole, and every
// one before that is a single index.
std::optional<std::int64_t> contiguous_start(const TensorBox& inner, const TensorBox& outer) {
  std::size_t cut = 0;  // the last dimension inner does not span whole
  for (std::size_t d = 0; d < outer.extent.size(); ++d) {
    if (inner.extent[d] != outer.extent[d]) cut = d;
  }
  for (std::size_t d = 0; d < cut; ++d) {
    if (inner.extent[d] != 1) return std::nullopt;
  }
  std::int64_t index = 0;
  for (std::size_t d = 0; d < outer.extent.size(); ++d)
    index = index * outer.extent[d] + (inner.offset[d] - outer.offset[d]);
  return index;
}

// One read of a shard: a box of the tensor from one stored dataset.
struct SliceRead {
  const StoredDataset* from = nullptr;
  TensorBox box;            // in the tensor
  TensorBox dataset_slice;  // the box in the dataset's coordinates (local datasets: its slice's)
};

class ShardReads {
 public:
  ShardReads(const PlacedShard& placed, const std::vector<StoredDataset>& files,
             const Stored& stored)
      : placed_(placed),
        files_(files),
        // A shard model.scale leaves whole is stored whole, in a dataset of its global shape.
        scale_(placed.shard.unscaled ? 1 : stored.scale),
        scaled_shapes_(stored.scaled_shapes) {}

  // The pieces that fill the shard's stored part, by file.
  std::vector<std::pair<std::string, backends::DatasetPiece>> pieces() {
    const workloads::Shard& s = placed_.shard;
    const Dims& stored_shape = files_.front().pieces.front()->shard.global_shape;
    if (s.flat_begin != 0 || s.flat_end != dims_product(s.extent))
      refuse("the load planner reads whole slices, and this shard is a flat range of one");
    TensorBox wanted{s.offset, s.extent};
    if (!wanted.offset.empty()) {  // rows past the stored leading dimension are padding
      wanted.extent[0] =
          std::min(wanted.offset[0] + wanted.extent[0], stored_shape[0]) - wanted.offset[0];
      if (wanted.extent[0] <= 0) return {};
    }
    std::vector<std::pair<std::string, backends::DatasetPiece>> out;
    for (const SliceRead& read : reads(wanted))
      out.emplace_back(read.from->file, piece(read, wanted));
    return out;
  }

 private:
  [[noreturn]] void refuse(const std::string& why) const {
    throw ReshardError(
        fmt::format("tensor {} ({}), slice {} of inference rank {}: {}", placed_.shard.name,
                    workloads::state_kind_name(placed_.shard.state),
                    box_text({placed_.shard.offset, placed_.shard.extent}), placed_.rank, why));
  }

  // One read from a dataset of the global shape that holds the whole box, else one per stored
  // slice the box overlaps.
  std::vector<SliceRead> reads(const TensorBox& wanted) const {
    for (const StoredDataset& d : files_) {
      if (d.local) continue;
      std::int64_t covered = 0;
      for (const TensorBox& slice : whole_slices(d)) {
        if (const auto o = box_overlap(slice, wanted)) covered += o->elements();
      }
      if (covered == wanted.elements()) return {{&d, wanted, wanted}};
    }
    std::vector<SliceRead> reads;
    std::int64_t covered = 0;
    std::vector<std::string> files;
    for (const StoredDataset& d : files_) {
      for (const TensorBox& slice : whole_slices(d)) {
        const auto o = box_overlap(slice, wanted);
        // A copy of a part already read (a framework layout stores a TP-replicated tensor on
        // every TP rank) is not read again.
        const auto read_before = [&](const SliceRead& r) { return box_overlap(r.box, *o); };
        if (!o || std::any_of(reads.begin(), reads.end(), read_before)) continue;
        TensorBox in_dataset = *o;
        if (d.local) {
          for (std::size_t k = 0; k < in_dataset.offset.size(); ++k)
            in_dataset.offset[k] -= slice.offset[k];
        }
        reads.push_back({&d, *o, in_dataset});
        covered += o->elements();
        files.push_back(d.file);
      }
    }
    if (covered != wanted.elements()) {
      refuse(fmt::format(
          "its files hold {} of its {} elements as whole slices (the rest in flat ranges of ZeRO "
          "ranks, which no hyperslab reads); write the checkpoint without ZeRO on weights "
          "(parallel.zero_stage below 3) or load it with a raw-bytes backend (posix, uring, mpiio)",
          covered, wanted.elements()));
    }
    for (const SliceRead& read : reads) {
      if (!contiguous_start(read.box, wanted)) {
        refuse(fmt::format(
            "it is stored in {} files ({}) as slices that cut it across its rows, so the part in "
            "each file is no run of the slice's elements; load at the writer's TP or a multiple "
            "of it, or write the checkpoint with files the processes share (strategy.mapping = "
            "\"shared_file\": one dataset of the whole tensor)",
            files.size(), fmt::join(files, ", ")));
      }
    }
    return reads;
  }

  backends::DatasetPiece piece(const SliceRead& read, const TensorBox& wanted) const {
    backends::DatasetPiece piece = dataset_piece(placed_);
    const StoredDataset& d = *read.from;
    const Dims shape =
        d.local ? d.pieces.front()->shard.extent : d.pieces.front()->shard.global_shape;
    piece.global_shape.assign(shape.begin(), shape.end());
    piece.offset.assign(read.dataset_slice.offset.begin(), read.dataset_slice.offset.end());
    piece.extent.assign(read.dataset_slice.extent.begin(), read.dataset_slice.extent.end());
    piece.flat_begin = 0;
    const std::int64_t elements = read.box.elements();
    TensorBox at = read.box;  // its place in the shard, in the tensor's scaled coordinates
    TensorBox in = wanted;
    in.extent = placed_.shard.extent;  // the shard in memory keeps its padding rows
    if (scale_ > 1 && !d.scaled) return unscaled_piece(std::move(piece), read);
    if (scale_ > 1) {
      const auto kept = elements / scale_;
      if (!divides_exactly(shape[0], read.dataset_slice.offset[0], read.box.extent[0], 0, kept,
                           elements, scale_) ||
          (read.box.offset[0] - in.offset[0]) % scale_ != 0) {
        refuse(fmt::format(
            "its dataset in {} is stored with the leading dimension divided by model.scale = {} "
            "(backend.hdf5.shapes = \"scaled\"), and the part {} read from it does not divide by "
            "it; load at a TP whose slices divide by the scale, or write with model.scale = 1",
            d.file, scale_, box_text(read.box)));
      }
      for (TensorBox* box : {&at, &in}) {
        box->offset[0] /= scale_;
        box->extent[0] /= scale_;
      }
    }
    piece.flat_end = static_cast<std::uint64_t>(elements / scale_);
    piece.memory_offset =
        placed_.memory_offset +
        static_cast<std::uint64_t>(*contiguous_start(at, in)) * piece.element_bytes;
    return piece;
  }

  // model.scale > 1 over a dataset kept at its global shape: its pieces hold their first elements
  // only, so only a piece the writer stored whole reads back, as it was written.
  backends::DatasetPiece unscaled_piece(backends::DatasetPiece piece, const SliceRead& read) const {
    // Under shapes = "scaled" the reader would shrink what divides: only "global" reads it back.
    for (const ManifestTensor* t :
         scaled_shapes_ ? std::vector<const ManifestTensor*>{} : read.from->pieces) {
      const TensorBox stored{t->shard.offset, t->shard.extent};
      if (stored == TensorBox{placed_.shard.offset, placed_.shard.extent} && read.box == stored &&
          t->shard.flat_begin == 0) {
        piece.flat_end = t->bytes / piece.element_bytes;
        piece.memory_offset = placed_.memory_offset;
        return piece;
      }
    }
    refuse(fmt::format(
        "its dataset in {} keeps its global shape under model.scale = {} (backend.hdf5.shapes = "
        "\"global\", or a piece that does not divide by the scale), where each stored piece holds "
        "only its first elements: only the writer's own slices read back from it; load at the "
        "writer's TP, or write with backend.hdf5.shapes = \"scaled\" and a model.scale that "
        "divides the slices",
        read.from->file, scale_));
  }

  const PlacedShard& placed_;
  const std::vector<StoredDataset>& files_;
  std::int64_t scale_;
  bool scaled_shapes_;  // backend.hdf5.shapes = "scaled" (the reader shrinks what divides)
};

// The plan's reads as dataset pieces of shared files; its byte requests and scratch go.
void read_datasets(RankPlan& plan, const Stored& stored, const std::filesystem::path& dir) {
  std::map<std::string, std::size_t> file_index;
  plan.io.files.clear();
  plan.reshard.files.clear();
  std::uint64_t read = 0;
  for (const PlacedShard& placed : plan.shards) {
    const auto found = stored.datasets.find({placed.shard.state, placed.shard.name});
    if (found == stored.datasets.end()) continue;  // all padding: the raw planner checked
    for (auto& [file, piece] : ShardReads(placed, found->second, stored).pieces()) {
      const auto [it, added] = file_index.try_emplace(file, plan.io.files.size());
      if (added) {
        plan.io.files.push_back({.path = (dir / file).string(), .shared = true});
        plan.reshard.files.push_back(file);
      }
      read += piece.bytes();
      plan.io.files[it->second].datasets.push_back(std::move(piece));
    }
  }
  if (read != plan.reshard.bytes_needed) {
    throw std::logic_error(fmt::format(
        "dataset load plan of rank {}: its pieces hold {} bytes, the shards need {} stored bytes",
        plan.rank, read, plan.reshard.bytes_needed));
  }
  plan.io.attributes = {{"scale", std::to_string(stored.scaled_shapes ? stored.scale : 1)}};
  plan.reshard.requests.clear();
  plan.reshard.copies.clear();
  plan.reshard.bytes_read = read;
  plan.reshard.buffer_bytes = plan.reshard.scratch_offset;  // no scratch: pieces land in place
  plan.buffer_bytes = plan.reshard.buffer_bytes;
}

}  // namespace

bool plans_datasets(std::string_view writer_backend) {
  return writer_backend == "hdf5";
}

std::vector<RankPlan> dataset_load_plans(const Manifest& manifest, const ReshardSpec& spec,
                                         const std::vector<std::int64_t>& ranks,
                                         const std::filesystem::path& dir) {
  // Placed, padded and checked as raw bytes would be; the byte ranges are then replaced.
  ReshardSpec as_bytes = spec;
  as_bytes.backend.clear();
  as_bytes.reader.gap_bytes = 0;
  std::vector<RankPlan> plans = reshard_plans(manifest, as_bytes, ranks, dir);
  const Stored stored = stored_datasets(manifest, spec.scale);
  for (RankPlan& plan : plans) read_datasets(plan, stored, dir);
  return plans;
}

}  // namespace ckpt::harness
