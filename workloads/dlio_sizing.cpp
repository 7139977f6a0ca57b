#include "workloads/dlio_sizing.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "workloads/checked_math.hpp"
#include "workloads/limits.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

// DLIO's transformer has exactly these tensors; a model with others cannot be sized its way.
void require_dlio_model(const ModelSpec& m) {
  std::string unlike;
  if (m.is_moe())
    unlike = "it is a mixture of experts";
  else if (m.mixer != Mixer::attention)
    unlike = "it has state-space layers";
  else if (m.uses_mla())
    unlike = "it uses multi-head latent attention";
  else if (m.norm != NormKind::rmsnorm)
    unlike = "its norms are not RMSNorm";
  else if (m.norm_placement != NormPlacement::pre)
    unlike = "its layers do not have exactly two norms";
  else if (m.qk_norm)
    unlike = "it normalises queries and keys";
  else if (m.lm_head_bias)
    unlike = "its output layer has a bias";
  else if (m.mlp != MlpKind::gated)
    unlike = "its MLP is not gated";
  else if (m.linear_bias || m.qkv_bias)
    unlike = "its linear layers have biases";
  else if (m.tie_word_embeddings)
    unlike = "its embeddings are tied";
  else if (m.position_embedding == PositionEmbedding::learned)
    unlike = "it has learned position embeddings";
  else if (m.embedding_norm)
    unlike = "it has a norm after the embedding";
  else if (m.head_dim != m.hidden_size / m.num_attention_heads)
    unlike = "its head_dim is not hidden_size / num_attention_heads";
  if (unlike.empty()) return;
  throw SpecError(
      "sizing",
      "sizing = \"dlio\" describes DLIO's dense Llama-style transformer only (RMSNorm, "
      "gated MLP, no biases, untied embeddings, head_dim = hidden / heads), but model " +
          m.name + " does not fit: " + unlike + "; use sizing = \"exact\"");
}

void require_dlio_parallelism(const ModelSpec& m, const ParallelSpec& p) {
  require_positive(p.tp, "tp");
  require_positive(p.pp, "pp");
  require_positive(p.dp, "dp");
  require_at_most(p.tp * p.pp, limits::kWorldSize, "tp");
  require_at_most(p.world_size(), limits::kWorldSize, "dp");
  if (p.zero_stage < 0 || p.zero_stage > 3) {
    throw SpecError("zero", "zero must be 0, 1, 2 or 3 (got " + std::to_string(p.zero_stage) + ")");
  }
  if (p.ep != 1) throw SpecError("ep", "sizing = \"dlio\" has no expert parallelism: set ep = 1");
  if (p.pp_first_stage_layers != 0 || p.pp_last_stage_layers != 0) {
    throw SpecError(
        p.pp_first_stage_layers != 0 ? "pp_first_stage_layers" : "pp_last_stage_layers",
        "sizing = \"dlio\" splits layers its own way (the first layers % pp stages hold one "
        "more): leave pp_first_stage_layers and pp_last_stage_layers at 0");
  }
  if (p.pp > m.num_hidden_layers) {
    throw SpecError("pp", "pp (" + std::to_string(p.pp) + ") exceeds num_hidden_layers (" +
                              std::to_string(m.num_hidden_layers) +
                              "): every pipeline stage needs a layer");
  }
}

std::vector<StateKind> optimizer_kinds(const StateSpec& state) {
  if (state.scope == StateScope::weights) return {};
  std::vector<StateKind> kinds;
  if (state.master_dtype) kinds.push_back(StateKind::master);
  kinds.push_back(StateKind::exp_avg);
  kinds.push_back(StateKind::exp_avg_sq);
  return kinds;
}

std::string_view optimizer_prefix(StateKind kind) {
  switch (kind) {
    case StateKind::master:
      return "optimizer.state.fp32_param.";
    case StateKind::exp_avg:
      return "optimizer.state.exp_avg.";
    case StateKind::exp_avg_sq:
      return "optimizer.state.exp_avg_sq.";
    case StateKind::weight:
      break;
  }
  return "";
}

// The six tensors of one DLIO layer, in its order (get_layer_parameters), Megatron's names.
struct LayerTensor {
  const char* name;
  bool tp_split;
};
constexpr LayerTensor kLayerTensors[] = {
    {"input_layernorm.weight", false},
    {"self_attention.linear_qkv.weight", true},
    {"self_attention.linear_proj.weight", true},
    {"pre_mlp_layernorm.weight", false},
    {"mlp.linear_fc1.weight", true},
    {"mlp.linear_fc2.weight", true},
};

}  // namespace

// A tensor the rank writes: `elements` before TP and ZeRO, split by TP or replicated.
struct DlioSizing::Piece {
  StateKind kind;
  std::string_view prefix;  // "decoder.layers." for layer tensors, else the full name
  std::int64_t layer;       // -1 outside the layers
  std::string_view suffix;
  std::vector<std::int64_t> global_shape, offset, extent;
  std::int64_t begin, end;
};

DlioSizing::DlioSizing(const ModelSpec& resolved_model, const ParallelSpec& parallel,
                       const StateSpec& state)
    : model_(resolved_model), parallel_(parallel), state_(state), kinds_(optimizer_kinds(state)) {
  require_dlio_model(model_);
  require_dlio_parallelism(model_, parallel_);
  pipeline_ = PipelineSplit::front_loaded(model_.num_hidden_layers, parallel_.pp);
  // get_num_parameters(): embedding + layers + final norm + output layer, Q and O by hidden.
  const char* what = "DLIO's parameter count";
  const std::int64_t h = model_.hidden_size;
  const std::int64_t kv = model_.head_dim * model_.num_key_value_heads;
  const std::int64_t layer =
      checked_add(checked_mul(h, 2 * h + 2 * kv, "hidden_size", what),
                  checked_mul(3 * h, model_.intermediate_size, "intermediate_size", what) + 2 * h,
                  "hidden_size", what);
  const std::int64_t table = checked_mul(model_.vocab_size, h, "vocab_size", what);
  parameters_ =
      checked_add(checked_mul(layer, model_.num_hidden_layers, "num_hidden_layers", what),
                  checked_add(2 * table, h, "vocab_size", what), "num_hidden_layers", what);
  // Every state kind at 8 bytes per element must still fit (weights + three optimizer kinds).
  checked_mul(parameters_, 32, "num_hidden_layers", "the checkpoint's size in bytes");
}

Dtype DlioSizing::dtype_of(StateKind kind) const {
  return state_.dtype_of(kind);
}

RankCoord DlioSizing::coord(std::int64_t rank) const {
  if (rank < 0 || rank >= parallel_.world_size()) {
    throw SpecError("rank", "rank " + std::to_string(rank) + " is outside the world of " +
                                std::to_string(parallel_.world_size()) + " ranks (0.." +
                                std::to_string(parallel_.world_size() - 1) + ")");
  }
  RankCoord c;
  c.tp = rank % parallel_.tp;
  c.pp = (rank / parallel_.tp) % parallel_.pp;
  c.dp = rank / (parallel_.tp * parallel_.pp);
  c.expert_dp = c.dp;
  return c;
}

template <typename Visit>
void DlioSizing::for_each_piece(const RankCoord& c, Visit&& visit) const {
  const ParallelSpec& p = parallel_;
  const std::int64_t h = model_.hidden_size;
  const bool zero3 = p.zero_stage >= 3;
  const std::int64_t shard = zero3 ? p.dp : 1;
  // A weight of `elements`: TP-split tensors are cut into tp equal parts (floor), each
  // part (and each replicated tensor) into `shard` equal parts under ZeRO-3 (floor).
  const auto weight = [&](std::string_view prefix, std::int64_t layer, std::string_view suffix,
                          std::int64_t elements, bool tp_split) {
    const std::int64_t part = tp_split ? elements / p.tp : elements;
    const std::int64_t mine = part / shard;
    if (mine == 0) return;  // DLIO skips empty tensors
    const std::int64_t begin = zero3 ? c.dp * mine : 0;
    visit(Piece{StateKind::weight,
                prefix,
                layer,
                suffix,
                {tp_split ? part * p.tp : part},
                {tp_split ? c.tp * part : 0},
                {part},
                begin,
                begin + mine});
  };
  if (zero3 || c.dp == 0) {
    const std::int64_t kv = model_.head_dim * model_.num_key_value_heads;
    const std::int64_t f = model_.intermediate_size;
    const std::int64_t layer_elements[] = {h, h * (h + 2 * kv), h * h, h, 2 * f * h, f * h};
    const std::int64_t table = h * model_.vocab_size;
    if (c.pp == 0) weight("embedding.word_embeddings.weight", -1, "", table, true);
    const auto [first, last] = pipeline_.layers_of(c.pp);
    for (std::int64_t layer = first; layer < last; ++layer) {
      for (std::size_t i = 0; i < std::size(kLayerTensors); ++i) {
        weight("decoder.layers.", layer, kLayerTensors[i].name, layer_elements[i],
               kLayerTensors[i].tp_split);
      }
    }
    if (c.pp == p.pp - 1) {
      weight("output_layer.weight", -1, "", table, true);
      weight("decoder.final_layernorm.weight", -1, "", h, false);
    }
  }
  // Optimizer groups: without ZeRO only the first DP replica holds them.
  if (kinds_.empty() || (p.zero_stage == 0 && c.dp > 0)) return;
  const std::int64_t holders = p.zero_stage > 0 ? p.world_size() : p.tp * p.pp;
  const std::int64_t index = c.tp + p.tp * (c.pp + p.pp * c.dp);
  const std::int64_t mine = parameters_ / holders;
  if (mine == 0) return;  // DLIO then writes no optimizer state at all
  const std::int64_t extra = 5 * h;
  for (const StateKind kind : kinds_) {
    visit(Piece{kind,
                optimizer_prefix(kind),
                -1,
                "params",
                {mine * holders},
                {0},
                {mine * holders},
                index * mine,
                (index + 1) * mine});
    visit(Piece{kind,
                optimizer_prefix(kind),
                -1,
                "extra",
                {extra * holders},
                {0},
                {extra * holders},
                index * extra,
                (index + 1) * extra});
  }
}

std::vector<Shard> DlioSizing::shards(std::int64_t rank) const {
  std::vector<Shard> out;
  const RankCoord c = coord(rank);
  for_each_piece(c, [&](Piece&& piece) {
    Shard& s = out.emplace_back();
    s.name = std::string(piece.prefix) +
             (piece.layer >= 0 ? std::to_string(piece.layer) + "." : "") +
             std::string(piece.suffix);
    s.state = piece.kind;
    s.dtype = dtype_of(piece.kind);
    s.global_shape = std::move(piece.global_shape);
    s.offset = std::move(piece.offset);
    s.extent = std::move(piece.extent);
    s.flat_begin = piece.begin;
    s.flat_end = piece.end;
    s.bytes = (piece.end - piece.begin) * dtype_bytes(s.dtype);
  });
  return out;
}

RankTotals DlioSizing::totals(std::int64_t rank) const {
  RankTotals totals;
  for_each_shard_size(rank, [&](std::int64_t bytes) {
    totals.bytes += bytes;
    ++totals.tensors;
  });
  return totals;
}

void DlioSizing::for_each_shard_size(std::int64_t rank,
                                     const std::function<void(std::int64_t)>& visit) const {
  for_each_piece(coord(rank), [&](Piece&& piece) {
    visit((piece.end - piece.begin) * dtype_bytes(dtype_of(piece.kind)));
  });
}

// Every TP rank of a (stage, DP rank) writes the same bytes, and so does every DP rank but
// the first: one representative of each.
std::int64_t DlioSizing::checkpoint_bytes() const {
  const ParallelSpec& p = parallel_;
  std::int64_t total = 0;
  for (std::int64_t stage = 0; stage < p.pp; ++stage) {
    for (std::int64_t d = 0; d < std::min<std::int64_t>(p.dp, 2); ++d) {
      const std::int64_t alike = p.tp * (d == 0 ? 1 : p.dp - 1);
      const std::int64_t rank = p.tp * (stage + p.pp * d);
      total = checked_add(
          total, checked_mul(totals(rank).bytes, alike, "dp", "the checkpoint's size in bytes"),
          "dp", "the checkpoint's size in bytes");
    }
  }
  return total;
}

}  // namespace ckpt::workloads
