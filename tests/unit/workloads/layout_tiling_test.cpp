// Property tests over random valid grids: every element of every tensor and state kind is
// written exactly once in the world, the per-rank sums equal checkpoint_bytes, and ZeRO
// partitions within a data-parallel group differ by at most one element.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

struct Interval {
  std::int64_t begin, end;
  bool operator<(const Interval& o) const { return begin < o.begin; }
};

std::int64_t product(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
}

// Global row-major element intervals covered by elements [flat_begin, flat_end) of a slice.
void add_global_intervals(const Shard& s, std::vector<Interval>& out) {
  if (s.global_shape.size() == 1) {
    out.push_back({s.offset[0] + s.flat_begin, s.offset[0] + s.flat_end});
    return;
  }
  const std::int64_t cols = s.global_shape[1];
  const std::int64_t slice_cols = s.extent[1];
  for (std::int64_t x = s.flat_begin; x < s.flat_end;) {
    const std::int64_t row = x / slice_cols;
    const std::int64_t col = x % slice_cols;
    const std::int64_t take = std::min(slice_cols - col, s.flat_end - x);
    const std::int64_t global = (s.offset[0] + row) * cols + s.offset[1] + col;
    out.push_back({global, global + take});
    x += take;
  }
}

bool is_expert(const std::string& name) {
  return name.find(".experts.") != std::string::npos;
}

ModelSpec random_model(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<std::int64_t> values) {
    std::vector<std::int64_t> v(values);
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  ModelSpec m;
  m.name = "random";
  m.num_attention_heads = pick({4, 8, 12});
  m.num_key_value_heads = pick({1, 2, 4});
  m.head_dim = pick({4, 8});
  m.hidden_size = m.num_attention_heads * pick({4, 8});
  m.intermediate_size = pick({24, 48, 96});
  m.num_hidden_layers = pick({1, 2, 3, 4, 6, 8, 12});
  m.vocab_size = pick({100, 257, 1000, 131});
  m.tie_word_embeddings = coin();
  m.norm = coin() ? NormKind::layernorm : NormKind::rmsnorm;
  m.linear_bias = coin() && coin();
  m.qkv_bias = coin();
  m.mlp = coin() ? MlpKind::gated : MlpKind::plain;
  if (coin() && coin()) {
    m.position_embedding = PositionEmbedding::learned;
    m.max_position_embeddings = pick({16, 33});
  }
  m.embedding_norm = coin() && coin();
  if (coin()) {
    m.num_local_experts = pick({2, 4, 8, 12});
    m.num_experts_per_tok = 2;
    m.moe_intermediate_size = pick({0, 16, 24});
    m.n_shared_experts = pick({0, 0, 1, 2});
    m.first_k_dense_replace = std::min<std::int64_t>(pick({0, 0, 1, 2}), m.num_hidden_layers - 1);
    m.moe_router_bias = coin();
  }
  if (coin() && coin()) {
    m.linear_bias = m.qkv_bias = false;
    m.q_lora_rank = pick({0, 12});
    m.kv_lora_rank = pick({8, 16});
    m.qk_nope_head_dim = 8;
    m.qk_rope_head_dim = 4;
    m.v_head_dim = 8;
  }
  // The Hugging Face families' variations: norms and their placement, q/k norms, fused HF
  // matrices, an output bias, a single gated shared expert, the name family.
  if (coin() && coin()) m.norm = NormKind::none;
  m.norm_placement = static_cast<NormPlacement>(pick({0, 1, 2, 3, 4}));
  m.qk_norm = !m.uses_mla() && coin();
  m.fused_qkv = coin();
  m.fused_gate_up = coin();
  m.lm_head_bias = coin() && coin();
  if (m.is_moe() && m.n_shared_experts == 0 && coin()) {
    m.shared_expert_intermediate_size = pick({16, 32});
    m.shared_expert_gate = coin();
  }
  m.hf_names = static_cast<HfNames>(pick({0, 1, 2, 3, 4, 5, 6}));
  return m;
}

ParallelSpec random_parallel(std::mt19937_64& rng, const ModelSpec& m) {
  auto upto = [&](std::int64_t n) {
    return std::uniform_int_distribution<std::int64_t>(1, n)(rng);
  };
  ParallelSpec p;
  p.tp = std::vector<std::int64_t>{1, 2, 4}[upto(3) - 1];
  p.pp = upto(std::min<std::int64_t>(4, m.num_hidden_layers));
  if (m.num_hidden_layers % p.pp != 0 && p.pp >= 3) {
    p.pp_first_stage_layers = 1;
    p.pp_last_stage_layers = 1;
  }
  p.dp = upto(6);
  p.ep = m.is_moe() ? upto(p.dp) : 1;
  p.zero_stage = static_cast<int>(upto(4) - 1);
  p.vocab_divisor = std::vector<std::int64_t>{1, 8, 128}[upto(3) - 1];
  return p;
}

StateSpec random_state(std::mt19937_64& rng) {
  StateSpec s;
  const auto r = std::uniform_int_distribution<int>(0, 5)(rng);
  s.scope = r < 2 ? StateScope::weights : StateScope::full;
  if (r == 2) s.master_dtype.reset();
  if (r == 3) s.naming = Naming::hf;
  if (r == 4) s.optimizer_dtype = Dtype::bf16;
  return s;
}

// Expected weight elements of the whole model: parameters plus the vocabulary padding.
std::int64_t expected_weight_elements(const Layout& layout) {
  const ModelSpec& m = layout.model();
  const std::int64_t tables = m.tie_word_embeddings ? 1 : 2;
  const std::int64_t padding = layout.padded_vocab() - m.vocab_size;
  return layout.parameters() + padding * m.hidden_size * tables + (m.lm_head_bias ? padding : 0);
}

void check_layout(const Layout& layout) {
  const ParallelSpec& p = layout.parallel();
  std::map<std::pair<StateKind, std::string>, std::vector<Interval>> pieces;
  std::map<std::pair<StateKind, std::string>, std::int64_t> numel;
  // (kind, expert?, tp, pp, ep or -1) -> elements per DP member
  std::map<std::tuple<StateKind, bool, std::int64_t, std::int64_t, std::int64_t>,
           std::vector<std::int64_t>>
      groups;
  std::int64_t total_bytes = 0;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    const RankCoord c = layout.coord(rank);
    const std::vector<Shard> shards = layout.shards(rank);
    const RankTotals totals = layout.totals(rank);
    std::int64_t bytes = 0;
    std::map<std::pair<StateKind, bool>, std::int64_t> elements;
    for (const Shard& s : shards) {
      ASSERT_GT(s.elements(), 0) << s.name;
      ASSERT_EQ(s.bytes, s.elements() * dtype_bytes(s.dtype)) << s.name;
      ASSERT_LE(s.flat_end, product(s.extent)) << s.name;
      for (std::size_t d = 0; d < s.global_shape.size(); ++d) {
        ASSERT_LE(s.offset[d] + s.extent[d], s.global_shape[d]) << s.name;
      }
      add_global_intervals(s, pieces[{s.state, s.name}]);
      numel[{s.state, s.name}] = product(s.global_shape);
      elements[{s.state, is_expert(s.name)}] += s.elements();
      bytes += s.bytes;
    }
    ASSERT_EQ(bytes, totals.bytes) << "rank " << rank;
    ASSERT_EQ(static_cast<std::int64_t>(shards.size()), totals.tensors) << "rank " << rank;
    total_bytes += bytes;
    for (StateKind kind : layout.state_kinds()) {
      for (bool expert : {false, true}) {
        groups[{kind, expert, c.tp, c.pp, expert ? c.ep : -1}].push_back(elements[{kind, expert}]);
      }
    }
  }
  ASSERT_EQ(total_bytes, layout.checkpoint_bytes());

  std::map<StateKind, std::int64_t> elements_per_kind;
  for (auto& [key, intervals] : pieces) {
    std::sort(intervals.begin(), intervals.end());
    std::int64_t next = 0;
    for (const Interval& i : intervals) {
      ASSERT_EQ(i.begin, next) << key.second << ": gap or overlap at element " << next;
      next = i.end;
    }
    ASSERT_EQ(next, numel[key]) << key.second << " not covered to its end";
    elements_per_kind[key.first] += numel[key];
  }
  for (StateKind kind : layout.state_kinds()) {
    EXPECT_EQ(elements_per_kind[kind], expected_weight_elements(layout)) << state_kind_name(kind);
  }

  const bool weights_partitioned = p.zero_stage >= 3;
  for (const auto& [key, members] : groups) {
    const auto [kind, expert, tp, pp, ep] = key;
    const bool partitioned = kind == StateKind::weight ? weights_partitioned : p.zero_stage >= 1;
    const auto [lo, hi] = std::minmax_element(members.begin(), members.end());
    if (partitioned) {
      EXPECT_LE(*hi - *lo, 1) << "ZeRO partition imbalance for " << state_kind_name(kind);
    } else {
      // Replicas are written once, by the first member of the group (DP or expert-DP rank 0).
      const auto writers =
          std::count_if(members.begin(), members.end(), [](std::int64_t v) { return v > 0; });
      EXPECT_LE(writers, 1) << state_kind_name(kind);
      if (writers == 1) {
        EXPECT_GT(members.front(), 0) << state_kind_name(kind);
      }
    }
  }
}

TEST(LayoutTiling, RandomGridsTileEveryTensorExactlyOnce) {
  std::mt19937_64 rng(20261129);
  int checked = 0;
  for (int attempt = 0; checked < 300 && attempt < 5000; ++attempt) {
    const ModelSpec model = random_model(rng);
    const ParallelSpec parallel = random_parallel(rng, model);
    const StateSpec state = random_state(rng);
    std::optional<Layout> layout;
    try {
      layout.emplace(model, parallel, state);
    } catch (const SpecError&) {
      continue;  // an impossible combination; the error tests cover those
    }
    SCOPED_TRACE("grid " + std::to_string(checked) + ": tp " + std::to_string(parallel.tp) +
                 " pp " + std::to_string(parallel.pp) + " dp " + std::to_string(parallel.dp) +
                 " ep " + std::to_string(parallel.ep) + " zero " +
                 std::to_string(parallel.zero_stage));
    check_layout(*layout);
    if (HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

TEST(LayoutTiling, ZooModelsAtModestScaleTile) {
  // Real shapes, scaled-down worlds: every zoo-like architecture feature at once.
  ModelSpec mixtral{.name = "mixtral-like",
                    .hidden_size = 64,
                    .intermediate_size = 96,
                    .num_hidden_layers = 4,
                    .num_attention_heads = 8,
                    .num_key_value_heads = 2,
                    .vocab_size = 1000,
                    .num_local_experts = 8,
                    .num_experts_per_tok = 2};
  check_layout(Layout(mixtral, {.tp = 2, .pp = 2, .dp = 4, .ep = 4, .zero_stage = 1}, StateSpec{}));
  check_layout(Layout(mixtral, {.tp = 2, .pp = 4, .dp = 2, .ep = 2, .zero_stage = 3}, StateSpec{}));
}

}  // namespace
}  // namespace ckpt::workloads
