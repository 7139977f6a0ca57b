#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workloads/dtype.hpp"
#include "workloads/flat_buffer.hpp"
#include "workloads/model_spec.hpp"
#include "workloads/parallel_spec.hpp"
#include "workloads/pipeline_split.hpp"
#include "workloads/tensor_catalog.hpp"

namespace ckpt::workloads {

class DlioSizing;

// One piece of one tensor that one rank writes. The slice (offset, extent) is the rank's
// tensor-parallel part of the global tensor; [flat_begin, flat_end) is the element range of
// that slice (row-major) the rank writes — the whole slice unless ZeRO partitions the state.
struct Shard {
  std::string name;
  StateKind state = StateKind::weight;
  Dtype dtype = Dtype::bf16;
  std::vector<std::int64_t> global_shape;
  std::vector<std::int64_t> offset;
  std::vector<std::int64_t> extent;
  std::int64_t flat_begin = 0;
  std::int64_t flat_end = 0;
  std::int64_t bytes = 0;
  // model.scale leaves this shard whole: the block scales of FP8 weights, whose rows count
  // 128-row blocks of their weight, so that shrinking them would cut blocks the scaled weight
  // keeps; whole, they are re-cut with their weight at every TP the full model allows.
  bool unscaled = false;

  std::int64_t elements() const { return flat_end - flat_begin; }
};

struct RankCoord {
  std::int64_t tp = 0, pp = 0, dp = 0;
  std::int64_t ep = 0;         // expert-parallel rank: dp % ep_size
  std::int64_t expert_dp = 0;  // rank among replicas of the same experts: dp / ep_size
};

struct RankTotals {
  std::int64_t bytes = 0;
  std::int64_t tensors = 0;  // shards written
};

// The checkpoint layout of a training job: which shards every rank writes. Each element of
// every tensor and state kind is written exactly once in the whole world: replicas across
// data parallelism are written by DP rank 0 (or partitioned under ZeRO), replicas across
// tensor parallelism (norms, row-parallel biases, routers) by TP rank 0, or under per-tensor
// sharding by the TP rank DCP's deduplication picks (the least loaded so far).
// Construction validates the combination and throws SpecError naming the key to change.
// With state.sizing = dlio every query answers with DLIO's formula instead (DlioSizing):
// its rank order, its shards and byte counts, its parameter count.
class Layout {
 public:
  Layout(const ModelSpec& model, const ParallelSpec& parallel, const StateSpec& state);

  const ModelSpec& model() const { return model_; }
  const ParallelSpec& parallel() const { return parallel_; }
  const StateSpec& state() const { return state_; }
  std::int64_t world_size() const { return parallel_.world_size(); }
  std::int64_t parameters() const { return parameters_; }
  std::int64_t padded_vocab() const { return padded_vocab_; }
  const std::vector<StateKind>& state_kinds() const { return kinds_; }
  const PipelineSplit& pipeline() const { return pipeline_; }

  RankCoord coord(std::int64_t rank) const;
  // Whether every DP replica holds all of `kind` (DP rank 0 alone writes it), not a ZeRO part.
  bool replicated_across_dp(StateKind kind) const { return !partitioned(kind); }
  // How many TP ranks of a TP group, from TP rank 0 on, may write a TP-replicated chunk: TP rank 0
  // alone, or under per-tensor sharding any of them (DCP's deduplication spreads them).
  std::int64_t tp_ranks_writing_replicas() const {
    return parallel_.zero_sharding == ZeroSharding::per_tensor ? parallel_.tp : 1;
  }

  // The shards `rank` writes, in O(shards of that rank).
  std::vector<Shard> shards(std::int64_t rank) const;
  // The chunks of `rank` that hold no rows under per-tensor sharding (a tensor slice of fewer
  // rows than DP ranks, cut as torch.chunk cuts it), with flat_begin == flat_end: DCP lists each
  // as a chunk of its tensor and writes an item for it, though it has no data. None when flat.
  std::vector<Shard> empty_chunks(std::int64_t rank) const;
  // Bytes and shard count of `rank` without building its shards: O(log tensors), or O(shards of
  // the rank) when the weights are quantized (their tensors' dtypes differ) or ZeRO-3 shards
  // per tensor.
  RankTotals totals(std::int64_t rank) const;
  // Calls `visit(bytes)` for every shard of `rank`, without building names.
  void for_each_shard_size(std::int64_t rank, const std::function<void(std::int64_t)>& visit) const;
  // Bytes the whole world writes for one checkpoint, in O(pipeline stages).
  std::int64_t checkpoint_bytes() const;

 private:
  Dtype dtype_of(StateKind kind) const;
  // The dtype `def` is stored in as state `kind`: its own (a quantized weight, its scales) or
  // the state's.
  Dtype dtype_of(StateKind kind, const TensorDef& def) const;
  // Bytes of elements [begin, end) of `buffer` in state `kind`.
  std::int64_t range_bytes(StateKind kind, const FlatBuffer& buffer, std::int64_t begin,
                           std::int64_t end) const;
  bool partitioned(StateKind kind) const;
  std::pair<std::int64_t, std::int64_t> range_of(StateKind kind, const FlatBuffer& buffer,
                                                 bool expert, const RankCoord& c) const;
  FlatBuffer dense_buffer(const RankCoord& c) const;
  FlatBuffer expert_buffer(const RankCoord& c) const;
  template <typename Visit>
  void for_each_range(const RankCoord& c, Visit&& visit) const;
  // visit(kind, PieceRef) for each piece of `c`'s shards, under the case's ZeroSharding.
  template <typename Visit>
  void for_each_piece(const RankCoord& c, Visit&& visit) const;
  Shard make_shard(StateKind kind, const PieceRef& piece, const RankCoord& c) const;

  ModelSpec model_;
  ParallelSpec parallel_;
  StateSpec state_;
  std::int64_t padded_vocab_ = 0;
  std::int64_t parameters_ = 0;
  PipelineSplit pipeline_;
  std::shared_ptr<const TensorCatalog> catalog_;  // shared: owned_ points into it
  std::vector<StateKind> kinds_;
  bool tensor_dtypes_ = false;  // some weights have a dtype of their own (TensorDef::dtype)
  OwnedCatalog owned_[2];       // [0]: TP rank 0 (owns replicated tensors); [1]: other TP ranks
  std::shared_ptr<const DlioSizing> dlio_;  // set for sizing = dlio
};

}  // namespace ckpt::workloads
