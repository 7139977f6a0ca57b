#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "workloads/layout.hpp"

namespace ckpt::workloads {

// DLIO's checkpoint size formula (dlio_benchmark/checkpointing/base_checkpointing.py), which
// MLPerf Storage v2.0's checkpointing workloads publish. It departs from what Megatron or
// DeepSpeed save by known terms, reproduced here so that a run writes the same bytes:
// - rank order tp fastest, then pp, then dp; layers split with the first layers % pp stages
//   holding one more;
// - no vocabulary padding; the embedding and the (always untied) output layer each
//   hidden × vocab / tp; Q and O sized by hidden × hidden whatever head_dim is;
// - every norm on every TP rank (hidden elements, not split);
// - sizes are floor-divided by tp, then (ZeRO-3) by dp, each tensor on its own;
// - optimizer state: per optimizer state kind, parameters / (ranks that hold it) plus
//   5 × hidden elements, where parameters is DLIO's own count (parameters() below);
// - ZeRO 0: only the first DP replica writes; ZeRO 1/2: weights from DP rank 0, optimizer
//   state from every rank; ZeRO 3: everything from every rank.
// Describes dense Llama-style models only (RMSNorm, gated MLP, no biases, untied, no MoE or
// MLA); the constructor throws SpecError("sizing", ...) for any other.
class DlioSizing {
 public:
  DlioSizing(const ModelSpec& resolved_model, const ParallelSpec& parallel, const StateSpec& state);

  const PipelineSplit& pipeline() const { return pipeline_; }
  std::int64_t parameters() const { return parameters_; }
  RankCoord coord(std::int64_t rank) const;
  std::vector<Shard> shards(std::int64_t rank) const;
  RankTotals totals(std::int64_t rank) const;
  void for_each_shard_size(std::int64_t rank, const std::function<void(std::int64_t)>& visit) const;
  std::int64_t checkpoint_bytes() const;

 private:
  struct Piece;  // one shard before its name is spelled out
  Dtype dtype_of(StateKind kind) const;
  template <typename Visit>
  void for_each_piece(const RankCoord& c, Visit&& visit) const;

  ModelSpec model_;
  ParallelSpec parallel_;
  StateSpec state_;
  std::vector<StateKind> kinds_;
  PipelineSplit pipeline_;
  std::int64_t parameters_ = 0;
};

}  // namespace ckpt::workloads
