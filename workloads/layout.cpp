#include "workloads/layout.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "workloads/checked_math.hpp"
#include "workloads/dlio_sizing.hpp"
#include "workloads/limits.hpp"
#include "workloads/parallel_validation.hpp"
#include "workloads/spec_error.hpp"
#include "workloads/weight_quantization.hpp"

namespace ckpt::workloads {
namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::string_view state_prefix(StateKind kind) {
  switch (kind) {
    case StateKind::weight:
      return "";
    case StateKind::master:
      return "optimizer.state.fp32_param.";
    case StateKind::exp_avg:
      return "optimizer.state.exp_avg.";
    case StateKind::exp_avg_sq:
      return "optimizer.state.exp_avg_sq.";
  }
  return "";
}

std::vector<StateKind> kinds_for(const StateSpec& state) {
  if (state.scope == StateScope::weights) return {StateKind::weight};
  std::vector<StateKind> kinds{StateKind::weight};
  if (state.master_dtype) kinds.push_back(StateKind::master);
  kinds.push_back(StateKind::exp_avg);
  kinds.push_back(StateKind::exp_avg_sq);
  return kinds;
}

// The slice of a tensor held by TP rank `c.tp` (and, for a fused expert tensor, EP rank `c.ep`).
void set_slice(Shard& shard, const TensorDef& def, const RankCoord& c, const ParallelSpec& p) {
  shard.global_shape = def.shape;
  shard.offset.assign(def.shape.size(), 0);
  shard.extent = def.shape;
  if (def.expert_dim) {
    shard.extent[0] = def.shape[0] / p.ep;
    shard.offset[0] = c.ep * shard.extent[0];
  }
  if (def.split == TpSplit::replicated) return;
  const std::size_t dim = split_dim(def.split);
  shard.extent[dim] = def.shape[dim] / p.tp;
  shard.offset[dim] = c.tp * shard.extent[dim];
}

// Rows of the slice of `def` a rank holds before ZeRO: dim 0 once EP and TP cut it (a 0-d tensor
// is one row).
std::int64_t slice_rows(const TensorDef& def, const ParallelSpec& p) {
  if (def.shape.empty()) return 1;
  std::int64_t rows = def.shape[0];
  if (def.expert_dim) rows /= p.ep;
  if (def.split != TpSplit::replicated && split_dim(def.split) == 0) rows /= p.tp;
  return rows;
}

// Rows [first, last) of chunk `index` of `parts`, as torch.chunk (and so FSDP2) cuts `rows`:
// ceil(rows / parts) rows each, the last chunk shorter, chunks past the end empty.
std::pair<std::int64_t, std::int64_t> chunk_rows(std::int64_t rows, std::int64_t parts,
                                                 std::int64_t index) {
  const std::int64_t size = (rows + parts - 1) / parts;
  const std::int64_t first = std::min(rows, index * size);
  return {first, std::min(rows, first + size)};
}

// Whether every rank of a TP group holds the same chunk of `def` (the same offsets in DCP's
// metadata, so that DCP saves it once): a tensor TP replicates, and an empty chunk of a tensor TP
// splits on dim 0, which torch places at the dimension's end whatever its TP slice.
bool held_by_every_tp_rank(const TensorDef& def, bool empty) {
  if (def.split == TpSplit::replicated) return true;
  return empty && split_dim(def.split) == 0;
}

// Who writes each chunk of a TP group under per-tensor sharding. DCP's save plans an item that
// several ranks hold on one of them (dedup_save_plans): taking the items in the order they are
// first seen, which in a TP group is TP rank 0's state_dict order, it gives each to the holder
// with the fewest bytes planned so far, the lowest rank on a tie, and counts an empty item as
// 1 byte. A chunk TP splits is the holder's own; only TP rank 0's own chunks come before the
// replicas in that order, so only they count against it.
class ReplicaWriters {
 public:
  explicit ReplicaWriters(std::int64_t tp) : planned_(static_cast<std::size_t>(tp), 0) {
    for (std::int64_t rank = 0; rank < tp; ++rank) queue_.insert({0, rank});
  }
  // A chunk of TP rank 0's own (each TP rank holds its own chunk of the tensor).
  void own(std::int64_t bytes) { plan(0, bytes); }
  // A chunk every TP rank holds; returns the TP rank that writes it.
  std::int64_t replica(std::int64_t bytes) {
    const std::int64_t rank = queue_.begin()->second;
    plan(rank, bytes);
    return rank;
  }

 private:
  void plan(std::int64_t rank, std::int64_t bytes) {
    std::int64_t& planned = planned_[static_cast<std::size_t>(rank)];
    queue_.erase({planned, rank});
    planned += std::max<std::int64_t>(bytes, 1);
    queue_.insert({planned, rank});
  }

  std::vector<std::int64_t> planned_;                      // bytes per TP rank
  std::set<std::pair<std::int64_t, std::int64_t>> queue_;  // (bytes planned, TP rank)
};

// Exact arithmetic for the size checks below: every factor is bounded (workloads::limits), so the
// products fit in 128 bits.
__extension__ using Wide = __int128;

Wide wide_numel(const std::vector<TensorDef>& defs) {
  Wide sum = 0;
  for (const TensorDef& def : defs) {
    Wide n = 1;
    for (const std::int64_t d : def.shape) n *= d;
    sum += n;
  }
  return sum;
}

// The model's tensor count stays within limits::kTensors and its checkpoint's size in bytes
// (every state kind, `bytes_per_element` bytes per parameter) fits in signed 64 bits, so that
// no count, size or offset derived from them can overflow. The error names the key to lower
// (layers, or experts for an MoE model) and the largest value of it that fits.
void check_model_size(const TensorCatalog& cat, const ModelSpec& m,
                      std::int64_t bytes_per_element) {
  const std::int64_t layers = m.num_hidden_layers;
  const std::int64_t moe_layers = m.moe_layer_count();
  const std::int64_t experts = cat.fused_experts ? 1 : m.num_local_experts;
  const auto count = [](const std::vector<TensorDef>& defs) {
    return static_cast<Wide>(defs.size());
  };
  // fixed + the layers' own tensors + moe_layers × experts × expert
  struct Part {
    Wide fixed = 0, expert = 0;
    std::vector<Wide> per_template;
  };
  Part tensors{count(cat.first_stage) + count(cat.last_stage), count(cat.expert), {}};
  Part elements{
      wide_numel(cat.first_stage) + wide_numel(cat.last_stage), wide_numel(cat.expert), {}};
  for (const LayerTemplate& t : cat.layer_templates) {
    tensors.per_template.push_back(count(t.tensors));
    elements.per_template.push_back(wide_numel(t.tensors));
  }
  const auto check = [&](const Part& part, Wide limit, const std::string& what) {
    Wide own = 0;
    for (const std::size_t index : cat.template_of_layer) own += part.per_template[index];
    const Wide room = limit - part.fixed - own;
    if (room >= moe_layers * experts * part.expert) return;
    std::string key = "num_hidden_layers";
    Wide largest = 0;
    if (m.is_moe() && part.expert > 0 && room > 0 && room / moe_layers >= part.expert) {
      key = "num_local_experts";
      largest = room / moe_layers / part.expert;
    } else {  // the most leading layers that fit
      Wide total = part.fixed;
      for (std::int64_t layer = 0; layer < layers; ++layer) {
        total += part.per_template[cat.template_of_layer[static_cast<std::size_t>(layer)]] +
                 (m.layer_is_moe(layer) ? experts * part.expert : 0);
        if (total > limit) break;
        largest = layer + 1;
      }
    }
    const std::int64_t value = key == "num_local_experts" ? experts : layers;
    throw SpecError(key, key + " = " + std::to_string(value) + " is too large: " + what +
                             "; the largest " + key + " allowed for this model is " +
                             std::to_string(static_cast<std::int64_t>(largest)));
  };
  check(tensors, limits::kTensors,
        "the model would have more than " + std::to_string(limits::kTensors) + " tensors");
  check(elements, kInt64Max / bytes_per_element,
        "the checkpoint's size in bytes (" + std::to_string(bytes_per_element) +
            " bytes per parameter) overflows 64-bit arithmetic");
}

// Runs of consecutive layers in [first, last) that share a template (`same`), in order.
template <typename Same, typename Visit>
void for_each_run(std::int64_t first, std::int64_t last, Same&& same, Visit&& visit) {
  for (std::int64_t begin = first; begin < last;) {
    std::int64_t end = begin + 1;
    while (end < last && same(begin, end)) ++end;
    visit(begin, end);
    begin = end;
  }
}

}  // namespace

Layout::Layout(const ModelSpec& model, const ParallelSpec& parallel, const StateSpec& state)
    : model_(model.resolved()), parallel_(parallel), state_(state) {
  model_.validate();
  if (state_.sizing == Sizing::dlio) {
    if (state_.weights != WeightFormat::unquantized) {
      throw SpecError("weights",
                      "model.weights = \"" + std::string(weight_format_name(state_.weights)) +
                          "\" lays out tensors of their own dtypes, and model.sizing = \"dlio\" "
                          "counts bytes per parameter by DLIO's formula; set model.sizing = "
                          "\"exact\", or model.weights = \"unquantized\"");
    }
    dlio_ = std::make_shared<const DlioSizing>(model_, parallel_, state_);
    padded_vocab_ = model_.vocab_size;
    pipeline_ = dlio_->pipeline();
    parameters_ = dlio_->parameters();
    kinds_ = kinds_for(state_);
    return;
  }
  validate_parallelism(model_, parallel_);
  // Megatron pads the vocabulary to make-vocab-size-divisible-by × tp; a Hugging Face file
  // holds the tables unpadded, so only a TP split (which must divide the rows) pads them. FSDP2
  // over TP (per-tensor sharding) saves DTensors of the model's own tables, unpadded.
  const bool hf_unpadded =
      state_.effective_naming() == Naming::hf &&
      (parallel_.tp == 1 || parallel_.zero_sharding == ZeroSharding::per_tensor);
  padded_vocab_ = hf_unpadded ? model_.vocab_size
                              : round_up(model_.vocab_size, parallel_.vocab_divisor * parallel_.tp);
  if (hf_unpadded && model_.vocab_size % parallel_.tp != 0) {
    throw SpecError("tp", "vocab_size (" + std::to_string(model_.vocab_size) +
                              ") is not divisible by tp (" + std::to_string(parallel_.tp) +
                              "): under zero_sharding = \"per_tensor\" the vocabulary is not "
                              "padded (FSDP2 saves the model's own tables) and ckptbench splits "
                              "a table into equal TP slices; use a tp that divides vocab_size");
  }
  pipeline_ = PipelineSplit(model_.num_hidden_layers, parallel_);
  TensorCatalog catalog = build_tensor_catalog(model_, state_.effective_naming(), padded_vocab_);
  tensor_dtypes_ = state_.weights != WeightFormat::unquantized;
  if (state_.weights == WeightFormat::fp8_block) quantize_fp8_blocks(catalog);
  if (state_.weights == WeightFormat::mxfp4) quantize_mxfp4_experts(catalog, model_, state_);
  catalog_ = std::make_shared<const TensorCatalog>(std::move(catalog));
  // Before the general check, which would blame a cut scale rather than its weight.
  if (state_.weights == WeightFormat::fp8_block) validate_fp8_blocks(*catalog_, parallel_, state_);
  if (state_.weights == WeightFormat::mxfp4) validate_mxfp4_experts(*catalog_, parallel_);
  validate_tp_splits(*catalog_, parallel_.tp);
  kinds_ = kinds_for(state_);
  // A bound on the bytes of an element: quantized weights' scales are fp32.
  check_model_size(*catalog_, model_,
                   std::accumulate(kinds_.begin(), kinds_.end(), std::int64_t{0},
                                   [&](std::int64_t sum, StateKind kind) {
                                     const std::int64_t own = dtype_bytes(dtype_of(kind));
                                     return sum +
                                            (tensor_dtypes_ ? std::max<std::int64_t>(own, 4) : own);
                                   }));
  parameters_ = build_tensor_catalog(model_, Naming::hf, model_.vocab_size).parameter_count(model_);
  owned_[0] = OwnedCatalog::build(*catalog_, parallel_, true);
  owned_[1] = OwnedCatalog::build(*catalog_, parallel_, false);
}

RankCoord Layout::coord(std::int64_t rank) const {
  if (dlio_) return dlio_->coord(rank);
  if (rank < 0 || rank >= world_size()) {
    throw SpecError("rank", "rank " + std::to_string(rank) + " is outside the world of " +
                                std::to_string(world_size()) + " ranks (0.." +
                                std::to_string(world_size() - 1) + ")");
  }
  RankCoord c;
  c.tp = rank % parallel_.tp;
  c.dp = (rank / parallel_.tp) % parallel_.dp;
  c.pp = rank / (parallel_.tp * parallel_.dp);
  c.ep = c.dp % parallel_.ep;
  c.expert_dp = c.dp / parallel_.ep;
  return c;
}

Dtype Layout::dtype_of(StateKind kind) const {
  return state_.dtype_of(kind);
}

Dtype Layout::dtype_of(StateKind kind, const TensorDef& def) const {
  return kind == StateKind::weight && def.dtype ? *def.dtype : state_.dtype_of(kind);
}

std::int64_t Layout::range_bytes(StateKind kind, const FlatBuffer& buffer, std::int64_t begin,
                                 std::int64_t end) const {
  const char* what = "a rank's size in bytes";
  if (!tensor_dtypes_ || kind != StateKind::weight)
    return checked_mul(end - begin, dtype_bytes(dtype_of(kind)), "num_hidden_layers", what);
  std::int64_t bytes = 0;
  buffer.walk(begin, end, [&](const PieceRef& piece) {
    bytes = checked_add(bytes, (piece.hi - piece.lo) * dtype_bytes(dtype_of(kind, piece.tensor())),
                        "num_hidden_layers", what);
  });
  return bytes;
}

// ZeRO-1/2 (and Megatron's distributed optimizer) partition optimizer state across DP;
// ZeRO-3 also partitions the weights.
bool Layout::partitioned(StateKind kind) const {
  return kind == StateKind::weight ? parallel_.zero_stage >= 3 : parallel_.zero_stage >= 1;
}

FlatBuffer Layout::dense_buffer(const RankCoord& c) const {
  const OwnedCatalog& owned = owned_[c.tp == 0 ? 0 : 1];
  const auto [first, last] = pipeline_.layers_of(c.pp);
  const auto& of_layer = catalog_->template_of_layer;
  const auto template_of = [&](std::int64_t layer) {
    return of_layer[static_cast<std::size_t>(layer)];
  };
  FlatBuffer buffer;
  if (c.pp == 0) buffer.append({&owned.first_stage, 1});
  for_each_run(
      first, last, [&](std::int64_t a, std::int64_t b) { return template_of(a) == template_of(b); },
      [&](std::int64_t begin, std::int64_t end) {
        buffer.append({&owned.layers[template_of(begin)], end - begin, begin});
      });
  if (c.pp == parallel_.pp - 1) buffer.append({&owned.last_stage, 1});
  return buffer;
}

// The experts of each run of consecutive MoE layers in this stage.
FlatBuffer Layout::expert_buffer(const RankCoord& c) const {
  FlatBuffer buffer;
  if (!model_.is_moe()) return buffer;
  const OwnedCatalog& owned = owned_[c.tp == 0 ? 0 : 1];
  const auto [first, last] = pipeline_.layers_of(c.pp);
  const std::int64_t local_experts = model_.num_local_experts / parallel_.ep;
  const auto moe = [&](std::int64_t a, std::int64_t b) {
    return model_.layer_is_moe(a) == model_.layer_is_moe(b);
  };
  for_each_run(first, last, moe, [&](std::int64_t begin, std::int64_t end) {
    if (!model_.layer_is_moe(begin)) return;
    if (catalog_->fused_experts) {  // one copy per layer, each holding this rank's experts
      buffer.append({&owned.expert, end - begin, begin});
    } else {
      buffer.append({&owned.expert, (end - begin) * local_experts, begin, local_experts,
                     c.ep * local_experts});
    }
  });
  return buffer;
}

std::pair<std::int64_t, std::int64_t> Layout::range_of(StateKind kind, const FlatBuffer& buffer,
                                                       bool expert, const RankCoord& c) const {
  const std::int64_t group = expert ? parallel_.expert_dp() : parallel_.dp;
  const std::int64_t index = expert ? c.expert_dp : c.dp;
  if (partitioned(kind)) return balanced_partition(buffer.elements(), group, index);
  return {0, index == 0 ? buffer.elements() : 0};
}

template <typename Visit>
void Layout::for_each_range(const RankCoord& c, Visit&& visit) const {
  const FlatBuffer dense = dense_buffer(c);
  const FlatBuffer experts = expert_buffer(c);
  for (StateKind kind : kinds_) {
    const auto [dense_begin, dense_end] = range_of(kind, dense, false, c);
    visit(kind, dense, dense_begin, dense_end);
    const auto [expert_begin, expert_end] = range_of(kind, experts, true, c);
    visit(kind, experts, expert_begin, expert_end);
  }
}

// Under flat partitioning the pieces of the rank's range of each flat buffer, never empty.
// Under per-tensor sharding every tensor slice's chunk of the rank's DP index (its expert DP
// index for experts), an empty piece (lo == hi) where the rank is past the slice's last row; a
// tensor TP replicates is walked in TP rank 0's buffer by every rank of the TP group and visited
// on the one DCP's deduplication gives it (ReplicaWriters).
template <typename Visit>
void Layout::for_each_piece(const RankCoord& c, Visit&& visit) const {
  if (parallel_.zero_sharding == ZeroSharding::flat) {
    for_each_range(
        c, [&](StateKind kind, const FlatBuffer& buffer, std::int64_t begin, std::int64_t end) {
          buffer.walk(begin, end, [&](const PieceRef& piece) { visit(kind, piece); });
        });
    return;
  }
  ReplicaWriters writers(parallel_.tp);
  const auto chunks = [&](StateKind kind, const FlatBuffer& buffer, std::int64_t group,
                          std::int64_t index) {
    buffer.walk(0, buffer.elements(), [&](const PieceRef& whole) {
      const TensorDef& def = whole.tensor();
      const std::int64_t rows = slice_rows(def, parallel_);
      const std::int64_t row = (whole.hi - whole.lo) / rows;
      const auto [first, last] = chunk_rows(rows, group, index);
      const std::int64_t bytes = (last - first) * row * dtype_bytes(dtype_of(kind, def));
      std::int64_t writer = c.tp;
      if (held_by_every_tp_rank(def, first == last))
        writer = writers.replica(bytes);
      else
        writers.own(bytes);
      if (writer == c.tp)
        visit(kind, PieceRef{whole.segment, whole.copy, whole.def, first * row, last * row});
    });
  };
  const RankCoord lead{0, c.pp, c.dp, c.ep, c.expert_dp};
  const FlatBuffer dense = dense_buffer(lead);
  const FlatBuffer experts = expert_buffer(lead);
  for (StateKind kind : kinds_) {
    chunks(kind, dense, parallel_.dp, c.dp);
    chunks(kind, experts, parallel_.expert_dp(), c.expert_dp);
  }
}

Shard Layout::make_shard(StateKind kind, const PieceRef& piece, const RankCoord& c) const {
  Shard shard;
  const TensorDef& def = piece.tensor();
  const Dtype dtype = dtype_of(kind, def);
  shard.name = std::string(state_prefix(kind)) +
               format_tensor_name(def.pattern, piece.segment->layer_of(piece.copy),
                                  piece.segment->expert_of(piece.copy));
  shard.state = kind;
  shard.dtype = dtype;
  shard.unscaled = def.block_scales;
  set_slice(shard, def, c, parallel_);
  // torch gives an empty shard its dimension's end as offset, whatever TP slice it is of: the
  // slice is then the last one of dim 0, so that the chunk still begins after the slice's rows.
  if (piece.lo == piece.hi && !shard.offset.empty())
    shard.offset[0] = shard.global_shape[0] - shard.extent[0];
  shard.flat_begin = piece.lo;
  shard.flat_end = piece.hi;
  shard.bytes = (piece.hi - piece.lo) * dtype_bytes(dtype);
  return shard;
}

std::vector<Shard> Layout::shards(std::int64_t rank) const {
  if (dlio_) return dlio_->shards(rank);
  const RankCoord c = coord(rank);
  std::vector<Shard> out;
  for_each_piece(c, [&](StateKind kind, const PieceRef& piece) {
    if (piece.lo < piece.hi) out.push_back(make_shard(kind, piece, c));
  });
  return out;
}

std::vector<Shard> Layout::empty_chunks(std::int64_t rank) const {
  std::vector<Shard> out;
  if (dlio_ || parallel_.zero_sharding == ZeroSharding::flat) return out;
  const RankCoord c = coord(rank);
  for_each_piece(c, [&](StateKind kind, const PieceRef& piece) {
    if (piece.lo == piece.hi) out.push_back(make_shard(kind, piece, c));
  });
  return out;
}

RankTotals Layout::totals(std::int64_t rank) const {
  if (dlio_) return dlio_->totals(rank);
  RankTotals totals;
  if (parallel_.zero_sharding == ZeroSharding::per_tensor) {
    for_each_shard_size(rank, [&](std::int64_t bytes) {
      totals.bytes =
          checked_add(totals.bytes, bytes, "num_hidden_layers", "a rank's size in bytes");
      ++totals.tensors;
    });
    return totals;
  }
  for_each_range(coord(rank), [&](StateKind kind, const FlatBuffer& buffer, std::int64_t begin,
                                  std::int64_t end) {
    totals.bytes = checked_add(totals.bytes, range_bytes(kind, buffer, begin, end),
                               "num_hidden_layers", "a rank's size in bytes");
    totals.tensors += buffer.count_tensors(begin, end);
  });
  return totals;
}

void Layout::for_each_shard_size(std::int64_t rank,
                                 const std::function<void(std::int64_t)>& visit) const {
  if (dlio_) return dlio_->for_each_shard_size(rank, visit);
  for_each_piece(coord(rank), [&](StateKind kind, const PieceRef& piece) {
    if (piece.lo < piece.hi)
      visit((piece.hi - piece.lo) * dtype_bytes(dtype_of(kind, piece.tensor())));
  });
}

std::int64_t Layout::checkpoint_bytes() const {
  if (dlio_) return dlio_->checkpoint_bytes();
  const char* what = "the checkpoint's size in bytes";
  std::int64_t bytes = 0;
  for (std::int64_t stage = 0; stage < parallel_.pp; ++stage) {
    for (std::int64_t t = 0; t < std::min<std::int64_t>(parallel_.tp, 2); ++t) {
      const RankCoord c{t, stage, 0, 0, 0};
      const std::int64_t ranks_alike = t == 0 ? 1 : parallel_.tp - 1;
      const FlatBuffer dense = dense_buffer(c);
      const FlatBuffer experts = expert_buffer(c);
      for (StateKind kind : kinds_) {
        const std::int64_t rank_bytes =
            checked_add(range_bytes(kind, dense, 0, dense.elements()),
                        checked_mul(parallel_.ep, range_bytes(kind, experts, 0, experts.elements()),
                                    "num_hidden_layers", what),
                        "num_hidden_layers", what);
        bytes = checked_add(bytes, checked_mul(ranks_alike, rank_bytes, "num_hidden_layers", what),
                            "num_hidden_layers", what);
      }
    }
  }
  return bytes;
}

}  // namespace ckpt::workloads
