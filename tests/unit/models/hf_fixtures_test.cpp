// Every fixture under tests/data/hf/fixtures: a config.json and what transformers builds from
// it (expected.json, written by tests/data/hf/make_fixtures.py on the meta device). The layout
// at TP 1 with Hugging Face names must hold exactly those tensors, with those shapes, and the
// same unique parameter count, with the default vocab_divisor (HF files are not padded).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"

namespace ckpt::workloads {
namespace {

namespace fs = std::filesystem;
using Shapes = std::map<std::string, std::vector<std::int64_t>>;

fs::path fixtures_dir() {
  return fs::path(CKPT_SOURCE_DIR) / "tests/data/hf/fixtures";
}

std::vector<fs::path> fixture_dirs() {
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& entry : fs::directory_iterator(fixtures_dir())) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

Layout hf_weights(const fs::path& config, const ParallelSpec& parallel = {}) {
  StateSpec state;
  state.scope = StateScope::weights;
  return Layout(harness::load_model_hf_json(config), parallel, state);
}

// A fixture's HF weights at TP × DP with EP dividing DP.
Layout fixture_at(const std::string& fixture, std::int64_t tp, std::int64_t dp, std::int64_t ep) {
  ParallelSpec parallel;
  parallel.tp = tp;
  parallel.dp = dp;
  parallel.ep = ep;
  return hf_weights(fixtures_dir() / fixture / "config.json", parallel);
}

// The shard of `name` that `rank` writes; fails when the rank writes none.
Shard shard_of(const Layout& layout, std::int64_t rank, const std::string& name) {
  for (const Shard& s : layout.shards(rank)) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "rank " << rank << " writes no " << name;
  return {};
}

std::int64_t bytes_of_every_rank(const Layout& layout) {
  std::int64_t bytes = 0;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    for (const Shard& s : layout.shards(rank)) bytes += s.bytes;
  }
  return bytes;
}

using Dims = std::vector<std::int64_t>;

Shapes laid_out(const Layout& layout) {
  Shapes out;
  for (const Shard& s : layout.shards(0)) out[s.name] = s.global_shape;
  return out;
}

// The generator's digest: FNV-1a 64 over "name:d0,d1\n" in name order.
std::string digest(const Shapes& tensors) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const auto& [name, shape] : tensors) {
    std::string line = name + ":";
    for (std::size_t i = 0; i < shape.size(); ++i)
      line += (i ? "," : "") + std::to_string(shape[i]);
    line += "\n";
    for (const unsigned char c : line) h = (h ^ c) * 0x100000001B3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

TEST(HfFixtures, EveryTensorNameAndShapeAsTransformersWritesThem) {
  const std::vector<fs::path> dirs = fixture_dirs();
  ASSERT_GE(dirs.size(), 30U);
  for (const fs::path& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    const nlohmann::json expected = read_json(dir / "expected.json");
    const Layout layout = hf_weights(dir / "config.json");
    const Shapes ours = laid_out(layout);
    EXPECT_EQ(layout.parameters(), expected.at("parameters").get<std::int64_t>());
    EXPECT_EQ(static_cast<std::int64_t>(ours.size()),
              expected.at("tensor_count").get<std::int64_t>());
    EXPECT_EQ(digest(ours), expected.at("digest").get<std::string>());
    if (!expected.contains("tensors")) continue;
    const auto theirs = expected.at("tensors").get<Shapes>();
    for (const auto& [name, shape] : theirs) {
      const auto it = ours.find(name);
      if (it == ours.end()) {
        ADD_FAILURE() << "missing " << name;
      } else {
        EXPECT_EQ(it->second, shape) << name;
      }
    }
    for (const auto& [name, shape] : ours) EXPECT_TRUE(theirs.count(name)) << "extra " << name;
  }
}

// ckptbench writes every weight in one dtype. transformers keeps the routers of the
// DeepSeek-style MoE families (the gate's weight and its correction bias, by whatever name each
// family saves them), Flint's attention sinks and Zamba's A_log in float32, which docs/models.md
// states; any other fixture with a tensor outside bfloat16 would be a silent difference.
TEST(HfFixtures, OnlyRoutersAndSinksAreKeptInAnotherDtype) {
  const std::vector<std::string> known{"deepseek-v3",
                                       "glm-4.5-air",
                                       "nemotron-h-default",
                                       "small-afmoe",
                                       "small-axk1",
                                       "small-deepseek-v2",
                                       "small-deepseek-v3",
                                       "small-deepseek-v3-biases",
                                       "small-ernie4-5-moe",
                                       "small-ernie4-5-moe-interval",
                                       "small-exaone-moe",
                                       "small-flint",
                                       "small-glm4-moe",
                                       "small-glm4-moe-lite",
                                       "small-hunyuan-moe",
                                       "small-hy-v3",
                                       "small-kolibri1",
                                       "small-lfm2-moe",
                                       "small-nemotron-h",
                                       "small-sarvam-mla",
                                       "small-sarvam-moe",
                                       "small-solar-open",
                                       "small-deepseek-v32",
                                       "small-glm-moe-dsa",
                                       "small-dots1",
                                       "small-zamba",
                                       "small-zamba-biases-untied",
                                       "zamba-7b"};
  std::vector<std::string> found;
  for (const fs::path& dir : fixture_dirs()) {
    const nlohmann::json expected = read_json(dir / "expected.json");
    if (!expected.contains("not_bfloat16")) continue;
    found.push_back(dir.filename().string());
    const auto example = expected.at("not_bfloat16_example").get<std::vector<std::string>>();
    const std::string& name = example.at(0);
    bool router = false;
    for (const char* part :
         {".gate.", ".e_score_correction_bias", ".expert_bias", ".softmax_offset", ".A_log"})
      router = router || name.find(part) != std::string::npos;
    EXPECT_TRUE(router) << name;
    EXPECT_EQ(example.at(1), "float32");
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> sorted = known;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(found, sorted);
}

// gpt-oss keeps each layer's experts in one tensor per matrix: EP hands each rank its block of
// experts along dim 0, TP cuts the expert width (gate_up's last dim, down's middle dim).
TEST(HfFixtures, FusedExpertsSplitAlongTheExpertDimUnderEp) {
  const Layout layout = fixture_at("small-gpt-oss", 2, 2, 2);
  const std::string experts = "model.layers.1.mlp.experts.";
  // Rank 3: tp 1, dp 1, so ep 1: experts 2 and 3, the second half of the width.
  const Shard gate_up = shard_of(layout, 3, experts + "gate_up_proj");
  EXPECT_EQ(gate_up.global_shape, (Dims{4, 256, 1024}));
  EXPECT_EQ(gate_up.offset, (Dims{2, 0, 512}));
  EXPECT_EQ(gate_up.extent, (Dims{2, 256, 512}));
  EXPECT_EQ(gate_up.bytes, 2 * 256 * 512 * 2);
  const Shard down = shard_of(layout, 3, experts + "down_proj");
  EXPECT_EQ(down.offset, (Dims{2, 256, 0}));
  EXPECT_EQ(down.extent, (Dims{2, 256, 256}));
  const Shard bias = shard_of(layout, 1, experts + "gate_up_proj_bias");  // tp 1, ep 0
  EXPECT_EQ(bias.offset, (Dims{0, 512}));
  EXPECT_EQ(bias.extent, (Dims{2, 512}));
  // The experts are written once over the world; the vocabulary is padded to 1024 rows at TP 2
  // (embedding and lm_head: 2 × 24 × 256 more elements than the 4,066,064 parameters).
  EXPECT_EQ(bytes_of_every_rank(layout), (4'066'064 + 2 * 24 * 256) * 2);
  EXPECT_EQ(layout.checkpoint_bytes(), (4'066'064 + 2 * 24 * 256) * 2);
}

// DBRX stacks the experts' rows in 2-D tensors [E·f, h]: EP takes a block of whole experts'
// rows; TP cuts h, as f inside each expert's block is no single box.
TEST(HfFixtures, DbrxExpertRowsSplitByExpertsThenByHidden) {
  const Layout layout = fixture_at("small-dbrx", 2, 2, 2);
  const Shard w2 = shard_of(layout, 3, "transformer.blocks.0.ffn.experts.mlp.w2");
  EXPECT_EQ(w2.global_shape, (Dims{1536, 256}));
  EXPECT_EQ(w2.offset, (Dims{768, 128}));
  EXPECT_EQ(w2.extent, (Dims{768, 128}));
  EXPECT_EQ(bytes_of_every_rank(layout), (3'267'840 + 2 * 24 * 256) * 2);
}

// GPT-2's Conv1D stores [in, out]: column-parallel c_attn and c_fc split dim 1, row-parallel
// c_proj splits dim 0; the biases of column-parallel layers split with them.
TEST(HfFixtures, Conv1dWeightsSplitAlongTheOutputAxis) {
  const Layout layout = fixture_at("small-gpt2", 2, 1, 1);
  const Shard qkv = shard_of(layout, 1, "transformer.h.0.attn.c_attn.weight");
  EXPECT_EQ(qkv.global_shape, (Dims{256, 768}));
  EXPECT_EQ(qkv.offset, (Dims{0, 384}));
  EXPECT_EQ(qkv.extent, (Dims{256, 384}));
  EXPECT_EQ(shard_of(layout, 1, "transformer.h.0.attn.c_attn.bias").extent, Dims{384});
  const Shard proj = shard_of(layout, 1, "transformer.h.1.mlp.c_proj.weight");
  EXPECT_EQ(proj.global_shape, (Dims{1024, 256}));
  EXPECT_EQ(proj.offset, (Dims{512, 0}));
  EXPECT_EQ(proj.extent, (Dims{512, 256}));
  EXPECT_EQ(shard_of(layout, 0, "transformer.h.1.mlp.c_fc.weight").extent, (Dims{256, 512}));
  // Tied: one padded table (1000 → 1024 rows) over the 1,967,104 parameters.
  EXPECT_EQ(bytes_of_every_rank(layout), (1'967'104 + 24 * 256) * 2);
}

// Mamba-2 at TP 2: what d_inner, the heads or the groups size is split; the norms are not.
TEST(HfFixtures, Mamba2MixerSplitsByInnerSizeAndHeads) {
  const Layout layout = fixture_at("small-mamba2", 2, 1, 1);
  const std::string mixer = "backbone.layers.0.mixer.";
  EXPECT_EQ(shard_of(layout, 1, mixer + "in_proj.weight").extent, (Dims{580, 256}));
  EXPECT_EQ(shard_of(layout, 1, mixer + "conv1d.weight").extent, (Dims{320, 1, 4}));
  EXPECT_EQ(shard_of(layout, 1, mixer + "A_log").offset, Dims{4});
  EXPECT_EQ(shard_of(layout, 1, mixer + "out_proj.weight").extent, (Dims{256, 256}));
  EXPECT_EQ(shard_of(layout, 0, "backbone.layers.0.norm.weight").extent, Dims{256});
  EXPECT_EQ(bytes_of_every_rank(layout), (1'375'024 + 2 * 24 * 256) * 2);
}

// Jamba mixes layer kinds: Mamba layers 0 and 2 are MoE, attention layers 1 and 3 dense. Over
// TP 2 × PP 2 × DP 2 (EP 2) each stage holds one of each, every tensor is written once, and the
// experts of a stage's MoE layer are split between the EP ranks.
TEST(HfFixtures, HybridLayerKindsSplitOverPipelineTensorAndExpertRanks) {
  ParallelSpec parallel;
  parallel.tp = parallel.pp = parallel.dp = parallel.ep = 2;
  const Layout layout = hf_weights(fixtures_dir() / "small-jamba" / "config.json", parallel);
  // Rank 5: tp 1, dp 0, pp 1: layers 2 and 3 (without ZeRO, DP rank 0 writes the dense buffer).
  const std::string layer2 = "model.layers.2.";
  EXPECT_EQ(shard_of(layout, 5, layer2 + "mamba.in_proj.weight").extent, (Dims{512, 256}));
  EXPECT_EQ(shard_of(layout, 5, layer2 + "mamba.x_proj.weight").offset, (Dims{0, 256}));
  EXPECT_EQ(shard_of(layout, 5, "model.layers.3.self_attn.k_proj.weight").extent, (Dims{64, 256}));
  // Rank 7: the same stage at dp 1, so ep 1: experts 2 and 3 of layer 2 and nothing else.
  EXPECT_EQ(shard_of(layout, 7, layer2 + "feed_forward.experts.3.down_proj.weight").extent,
            (Dims{256, 256}));
  for (const Shard& s : layout.shards(7))
    EXPECT_EQ(s.name.rfind(layer2 + "feed_forward.experts.", 0), 0U) << s.name;
  EXPECT_EQ(layout.shards(7).size(), 6U);
  // Embedding and lm_head padded from 1000 to 1024 rows at TP 2.
  EXPECT_EQ(bytes_of_every_rank(layout), (5'695'296 + 2 * 24 * 256) * 2);
  EXPECT_EQ(layout.checkpoint_bytes(), (5'695'296 + 2 * 24 * 256) * 2);
}

// Falcon-H1 runs attention and a Mamba-2 mixer side by side in every layer; TP splits both.
TEST(HfFixtures, FalconH1SplitsAttentionAndMixerByHeads) {
  const Layout layout = fixture_at("small-falcon-h1", 2, 1, 1);
  const std::string layer = "model.layers.1.";
  EXPECT_EQ(shard_of(layout, 1, layer + "mamba.in_proj.weight").extent, (Dims{580, 256}));
  EXPECT_EQ(shard_of(layout, 1, layer + "mamba.norm.weight").offset, Dims{256});
  EXPECT_EQ(shard_of(layout, 1, layer + "self_attn.o_proj.weight").extent, (Dims{256, 128}));
  EXPECT_EQ(shard_of(layout, 0, layer + "pre_ff_layernorm.weight").extent, Dims{256});
  EXPECT_EQ(bytes_of_every_rank(layout), (2'560'320 + 2 * 24 * 256) * 2);
}

// Qwen3-Next at TP 2: the gated delta rule splits by value and key heads (conv over q, k, v:
// 2 × 4 × 32 + 8 × 48 = 640 rows; in_proj_qkvz adds z: 1024), its norm of one value head is
// whole (written by TP rank 0); the gated q_proj splits its doubled rows.
TEST(HfFixtures, Qwen3NextSplitsTheDeltaRuleByHeads) {
  const Layout layout = fixture_at("small-qwen3-next", 2, 1, 1);
  const std::string linear = "model.layers.0.linear_attn.";
  EXPECT_EQ(shard_of(layout, 1, linear + "in_proj_qkvz.weight").extent, (Dims{512, 256}));
  EXPECT_EQ(shard_of(layout, 1, linear + "in_proj_ba.weight").offset, (Dims{8, 0}));
  EXPECT_EQ(shard_of(layout, 1, linear + "conv1d.weight").extent, (Dims{320, 1, 4}));
  EXPECT_EQ(shard_of(layout, 0, linear + "norm.weight").extent, Dims{48});
  EXPECT_EQ(shard_of(layout, 1, linear + "out_proj.weight").extent, (Dims{256, 192}));
  const Shard q = shard_of(layout, 1, "model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(q.global_shape, (Dims{512, 256}));
  EXPECT_EQ(q.extent, (Dims{256, 256}));
}

// NemotronH's older configs spell the layer order as one string (M Mamba, - MLP, * attention):
// the same layout as the list.
TEST(HfFixtures, NemotronHPatternStringLaysOutAsItsLayerList) {
  const fs::path dir = fixtures_dir() / "small-nemotron-h-no-moe";
  nlohmann::json config = read_json(dir / "config.json");
  EXPECT_EQ(
      config.at("layers_block_type"),
      nlohmann::json({"linear_attention", "mlp", "linear_attention", "full_attention", "mlp"}));
  config.erase("layers_block_type");
  config["hybrid_override_pattern"] = "M-M*-";
  StateSpec state;
  state.scope = StateScope::weights;
  const Layout from_pattern(harness::parse_model_hf_json(config.dump(), "config.json"), {}, state);
  EXPECT_EQ(laid_out(from_pattern), laid_out(hf_weights(dir / "config.json")));
}

// Zamba at TP 2: the per-head Mamba tensors split by head (4 heads of 64 channels, x_proj
// 8 + 2 × 8 rows), the shared block's attention by head over its 2h-wide input; the block's
// tensors sit in the first hybrid layer (2) only, its norms and each layer's linear are whole.
TEST(HfFixtures, ZambaSplitsMambaHeadsAndKeepsTheSharedBlockOnce) {
  const Layout layout = fixture_at("small-zamba", 2, 1, 1);
  EXPECT_EQ(shard_of(layout, 1, "model.layers.0.mamba.x_proj_weight").extent, (Dims{2, 24, 64}));
  EXPECT_EQ(shard_of(layout, 1, "model.layers.0.mamba.x_proj_weight").offset, (Dims{2, 0, 0}));
  EXPECT_EQ(shard_of(layout, 1, "model.layers.4.mamba_decoder.mamba.A_log").extent,
            (Dims{2, 64, 8}));
  const std::string block = "model.layers.2.shared_transf.";
  EXPECT_EQ(shard_of(layout, 1, block + "self_attn.q_proj.weight").extent, (Dims{128, 256}));
  EXPECT_EQ(shard_of(layout, 0, block + "input_layernorm.weight").extent, Dims{256});
  EXPECT_EQ(shard_of(layout, 0, "model.layers.6.linear.weight").extent, (Dims{128, 128}));
  for (std::int64_t rank = 0; rank < 2; ++rank) {
    for (const Shard& s : layout.shards(rank)) {
      if (s.name.find("shared_transf") != std::string::npos) {
        EXPECT_EQ(s.name.rfind(block, 0), 0U) << s.name;
      }
    }
  }
  EXPECT_EQ(bytes_of_every_rank(layout), layout.checkpoint_bytes());
  // TP 2 pads the tied table from 1000 to 1024 rows of 128.
  EXPECT_EQ(layout.checkpoint_bytes(), (layout.parameters() + 24 * 128) * 2);
}

// Zamba 2 at TP 2: the Mamba-2 in_proj split by rows (z and x 128 each, B and C 2 groups × 16
// each, 4 heads: 324 rows), the shared blocks' attention by head over 2h. Tied, the hybrid layers
// 1, 3, 4, 6 take blocks 0, 1, 0, 1: only layers 1 and 3 hold them, block 0 the adapters of the
// hybrid layers 0 and 2, block 1 those of 1 and 3, each whole on one rank.
TEST(HfFixtures, Zamba2SharedBlocksHoldTheAdaptersOfTheLayersThatRunThem) {
  const Layout layout = fixture_at("small-zamba2", 2, 1, 1);
  EXPECT_EQ(shard_of(layout, 1, "model.layers.0.mamba.in_proj.weight").extent, (Dims{162, 64}));
  EXPECT_EQ(shard_of(layout, 1, "model.layers.6.mamba_decoder.mamba.A_log").extent, Dims{2});
  const std::string first = "model.layers.1.shared_transformer.";
  const std::string second = "model.layers.3.shared_transformer.";
  EXPECT_EQ(shard_of(layout, 1, first + "self_attn.q_proj.weight").extent, (Dims{64, 128}));
  const std::string adapters = "feed_forward.gate_up_proj_adapter_list.";
  EXPECT_EQ(shard_of(layout, 0, first + adapters + "2.0.weight").extent, (Dims{8, 64}));
  EXPECT_EQ(shard_of(layout, 0, second + adapters + "3.1.weight").extent, (Dims{192, 8}));
  EXPECT_EQ(shard_of(layout, 0, second + "self_attn.linear_v_adapter_list.1.0.weight").extent,
            (Dims{8, 128}));
  std::int64_t adapter_tensors = 0;
  for (std::int64_t rank = 0; rank < 2; ++rank) {
    for (const Shard& s : layout.shards(rank)) {
      if (s.name.find("shared_transformer") == std::string::npos) continue;
      EXPECT_TRUE(s.name.rfind(first, 0) == 0 || s.name.rfind(second, 0) == 0) << s.name;
      const bool in_first = s.name.rfind(first, 0) == 0;
      for (const char* index : {".0.", ".1.", ".2.", ".3."}) {
        const std::string list = std::string("_adapter_list") + index;
        if (s.name.find(list) == std::string::npos) continue;
        ++adapter_tensors;
        const bool even = index[1] == '0' || index[1] == '2';
        EXPECT_EQ(even, in_first) << s.name;
      }
    }
  }
  EXPECT_EQ(adapter_tensors, 4 * 4 * 2);  // 4 lists × 4 hybrid layers × 2 matrices
  EXPECT_EQ(bytes_of_every_rank(layout), layout.checkpoint_bytes());
  EXPECT_EQ(layout.checkpoint_bytes(), (layout.parameters() + 24 * 64) * 2);
}

// Gemma 3n at TP 2: the layers that reuse keys and values (2 and 3 of 4) hold no k/v projection
// and no k norm on any rank; the declared extra tensors (AltUp, LAuReL, per-layer inputs, the
// second embedding) are whole, each written once.
TEST(HfFixtures, Gemma3nSharedKvLayersAndDeclaredExtrasUnderTp) {
  const Layout layout = fixture_at("small-gemma3n-text", 2, 1, 1);
  EXPECT_EQ(shard_of(layout, 1, "model.layers.1.self_attn.k_proj.weight").extent, (Dims{64, 256}));
  for (std::int64_t rank = 0; rank < 2; ++rank) {
    for (const Shard& s : layout.shards(rank)) {
      for (const char* part : {"k_proj", "v_proj", "k_norm"}) {
        EXPECT_FALSE(
            s.name.find(part) != std::string::npos &&
            (s.name.rfind("model.layers.2.", 0) == 0 || s.name.rfind("model.layers.3.", 0) == 0))
            << s.name;
      }
    }
  }
  EXPECT_EQ(shard_of(layout, 0, "model.layers.3.altup.prediction_coefs.weight").extent,
            (Dims{9, 3}));
  EXPECT_EQ(shard_of(layout, 0, "model.embed_tokens_per_layer.weight").extent, (Dims{500, 128}));
  EXPECT_EQ(shard_of(layout, 0, "model.altup_unembed_projections.1.weight").extent,
            (Dims{256, 256}));
  EXPECT_EQ(bytes_of_every_rank(layout), layout.checkpoint_bytes());
  EXPECT_EQ(layout.checkpoint_bytes(), (layout.parameters() + 24 * 256) * 2);
}

// Megatron names lay the same tensors out per expert, unfused and untransposed: the same bytes.
TEST(HfFixtures, MegatronNamesCountTheSameBytesForTheNewLayouts) {
  for (const char* fixture : {"small-gpt2",
                              "small-gptj",
                              "small-bloom",
                              "small-opt",
                              "small-gpt-oss",
                              "small-llama4-text",
                              "small-granitemoe",
                              "small-dbrx",
                              "small-mamba",
                              "small-mamba2",
                              "small-falcon-h1",
                              "small-bamba",
                              "small-jamba",
                              "small-jamba-one-expert",
                              "small-granitemoeshared",
                              "small-granitemoehybrid",
                              "small-granitemoehybrid-dense",
                              "small-nemotron-h",
                              "small-zamba",
                              "small-minimax",
                              "small-deepseek-v32",
                              "small-glm-moe-dsa",
                              "small-zamba2",
                              "small-aria-text",
                              "small-jetmoe",
                              "small-trocr",
                              "small-xmod",
                              "small-roc-bert",
                              "small-roformer"}) {
    SCOPED_TRACE(fixture);
    const fs::path config = fixtures_dir() / fixture / "config.json";
    StateSpec state;
    state.scope = StateScope::weights;
    state.naming = Naming::megatron;
    ParallelSpec parallel;
    parallel.vocab_divisor = 1;  // the unpadded vocabulary of the HF layout
    const Layout megatron(harness::load_model_hf_json(config), parallel, state);
    EXPECT_EQ(megatron.checkpoint_bytes(), hf_weights(config).checkpoint_bytes());
    EXPECT_EQ(megatron.checkpoint_bytes(), 2 * megatron.parameters());
  }
}

TEST(HfFixtures, DigestMatchesTheGeneratorsOnAKnownList) {
  // make_fixtures.digest({"a.weight": [2, 3], "b": [4]}) in Python.
  EXPECT_EQ(digest({{"a.weight", {2, 3}}, {"b", {4}}}), "ac354de3043f077d");
  EXPECT_NE(digest({{"a.weight", {2, 3}}}), digest({{"a.weight", {3, 2}}}));
}

}  // namespace
}  // namespace ckpt::workloads
