// model.weights = "fp8_block" end to end: a TP 2 safetensors checkpoint's files (every tensor's
// name, dtype, shape and offsets, the file sizes), restored verified; its weights and scales
// loaded by `ckptbench load --tp` at TP 1 and 2, and by --phase load from a raw checkpoint whose
// every weight and scale lie in files of their own, each verified; the bytes saved against the
// unquantized checkpoint; and the splits that would cut a 128 x 128 block, refused by name. With
// model.scale > 1 the weights shrink and their scales stay whole, so that a restore into another
// TP and `ckptbench load --tp` re-cut both.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/formats/safetensors_header.hpp"
#include "tests/cli/quantized_run.hpp"

namespace ckpt::integration {
namespace {

// TP rank 1's tensors at TP 2: embedding and lm_head [512, 256] in bf16, q, k, v [128, 256] and
// o [256, 128] in fp8, gate, up [256, 256] and down [256, 256] in fp8, and their scales in fp32:
// [1, 2] for q, k, v, [2, 1] for o, [2, 2] for the MLP's. TP rank 0 also writes the three norms.
constexpr std::uint64_t kFp8Rank1 = 2 * 262144 + 4 * 32768 + 3 * 65536 + 4 * 8 + 3 * 16;
constexpr std::uint64_t kFp8Norms = 3 * 512;
// The same model's weights at TP 1 (vocabulary unpadded) and unquantized.
constexpr std::uint64_t kFp8Tp1 = 2 * 512000 + kFp8Norms + 4 * 65536 + 3 * 131072 + 40 * 4;
constexpr std::uint64_t kBf16Tp1 = 2 * 512000 + kFp8Norms + 2 * (4 * 65536 + 3 * 131072);

TEST_F(QuantizedRun, Tp2SafetensorsHoldFp8WeightsAndF32ScalesAndLoadVerifiedAtTp1And2) {
  const Outcome out = run("[parallel]\ntp = 2\n[strategy]\nformat = \"safetensors\"\n");
  ASSERT_EQ(out.exit_code, 0) << out.describe();
  const nlohmann::json result = read_results(dir_ / "out").at(0);
  EXPECT_EQ(result.at("verified"), true);
  EXPECT_EQ(result.at("config").at("model").at("weights"), "fp8_block");
  // Rank 1's file: the safetensors package's order (F32, then BF16, then F8_E4M3; by name in
  // each), each tensor's TP slice in its name.
  const std::string layer = "model.layers.0.";
  const std::vector<harness::SafetensorsTensor> rank1{
      {layer + "mlp.down_proj.weight_scale_inv[0:2,2:4]", "F32", {2, 2}, 0, 16},
      {layer + "mlp.gate_proj.weight_scale_inv[2:4,0:2]", "F32", {2, 2}, 16, 32},
      {layer + "mlp.up_proj.weight_scale_inv[2:4,0:2]", "F32", {2, 2}, 32, 48},
      {layer + "self_attn.k_proj.weight_scale_inv[1:2,0:2]", "F32", {1, 2}, 48, 56},
      {layer + "self_attn.o_proj.weight_scale_inv[0:2,1:2]", "F32", {2, 1}, 56, 64},
      {layer + "self_attn.q_proj.weight_scale_inv[1:2,0:2]", "F32", {1, 2}, 64, 72},
      {layer + "self_attn.v_proj.weight_scale_inv[1:2,0:2]", "F32", {1, 2}, 72, 80},
      {"lm_head.weight[512:1024,0:256]", "BF16", {512, 256}, 80, 262224},
      {"model.embed_tokens.weight[512:1024,0:256]", "BF16", {512, 256}, 262224, 524368},
      {layer + "mlp.down_proj.weight[0:256,256:512]", "F8_E4M3", {256, 256}, 524368, 589904},
      {layer + "mlp.gate_proj.weight[256:512,0:256]", "F8_E4M3", {256, 256}, 589904, 655440},
      {layer + "mlp.up_proj.weight[256:512,0:256]", "F8_E4M3", {256, 256}, 655440, 720976},
      {layer + "self_attn.k_proj.weight[128:256,0:256]", "F8_E4M3", {128, 256}, 720976, 753744},
      {layer + "self_attn.o_proj.weight[0:256,128:256]", "F8_E4M3", {256, 128}, 753744, 786512},
      {layer + "self_attn.q_proj.weight[128:256,0:256]", "F8_E4M3", {128, 256}, 786512, 819280},
      {layer + "self_attn.v_proj.weight[128:256,0:256]", "F8_E4M3", {128, 256}, 819280, 852048},
  };
  ASSERT_EQ(kFp8Rank1, 852048u);
  const fs::path file1 = checkpoint() / "model-00002-of-00002.safetensors";
  const harness::SafetensorsHeader header1 = harness::read_safetensors_header(file1);
  ASSERT_EQ(header1.tensors.size(), rank1.size());
  for (std::size_t i = 0; i < rank1.size(); ++i) {
    const harness::SafetensorsTensor& got = header1.tensors[i];
    EXPECT_EQ(got.name, rank1[i].name);
    EXPECT_EQ(got.dtype, rank1[i].dtype) << got.name;
    EXPECT_EQ(got.shape, rank1[i].shape) << got.name;
    EXPECT_EQ(got.begin, rank1[i].begin) << got.name;
    EXPECT_EQ(got.end, rank1[i].end) << got.name;
  }
  EXPECT_EQ(fs::file_size(file1), header1.header_bytes + kFp8Rank1);
  const fs::path file0 = checkpoint() / "model-00001-of-00002.safetensors";
  const harness::SafetensorsHeader header0 = harness::read_safetensors_header(file0);
  EXPECT_EQ(header0.tensors.size(), rank1.size() + 3);  // and the three norms
  EXPECT_EQ(fs::file_size(file0), header0.header_bytes + kFp8Rank1 + kFp8Norms);
  const nlohmann::json index =
      nlohmann::json::parse(read_text(checkpoint() / "model.safetensors.index.json"));
  EXPECT_EQ(index.at("metadata").at("total_size"), 2 * kFp8Rank1 + kFp8Norms);
  // TP 1 loads the vocabulary's 1000 stored rows of the two tables, TP 2 the writer's slices;
  // every weight and every scale verified.
  for (const auto& [tp, needed] : {std::pair{"1", kFp8Tp1}, {"2", 2 * kFp8Rank1 + kFp8Norms}}) {
    const Outcome loaded = load({"--tp", tp});
    ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
    EXPECT_TRUE(contains(loaded.out, ": " + std::to_string(needed) + " bytes needed, "))
        << loaded.out;
    EXPECT_TRUE(contains(loaded.out, ", verified\n")) << loaded.out;
  }
}

TEST_F(QuantizedRun, PhaseLoadReadsEachWeightAndItsScaleFromTheirOwnFiles) {
  ASSERT_EQ(run("[strategy]\nmapping = \"file_per_tensor\"\n").exit_code, 0);
  const nlohmann::json manifest = read_manifest(checkpoint());
  std::map<std::string, std::string> file_of;
  for (const nlohmann::json& t : manifest.at("tensors"))
    file_of[t.at("name").get<std::string>()] = t.at("file").get<std::string>();
  const std::string q = "model.layers.0.self_attn.q_proj.weight";
  ASSERT_TRUE(file_of.contains(q) && file_of.contains(q + "_scale_inv"));
  EXPECT_NE(file_of.at(q), file_of.at(q + "_scale_inv"));
  // Every stored byte, weights and scales; TP 2 pads the vocabulary to 1024 rows, stored nowhere.
  const std::vector<nlohmann::json> results =
      expect_loads_at_tp_1_and_2("[strategy]\nmapping = \"file_per_tensor\"\n", kFp8Tp1);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].at("load").at("padding_bytes").get<std::uint64_t>(), 2 * 24 * 512u);
}

TEST_F(QuantizedRun, TheBytesSavedAgainstTheUnquantizedCheckpointAreReported) {
  expect_saved(kFp8Tp1, kBf16Tp1);
  ASSERT_EQ(kBf16Tp1 - kFp8Tp1, 655200u);
  const Outcome layout = ckptbench({"layout", "--model", model_.string(), "--state", "weights",
                                    "--weights", "fp8_block", "--json"});
  ASSERT_EQ(layout.exit_code, 0) << layout.describe();
  const nlohmann::json j = nlohmann::json::parse(layout.out);
  EXPECT_EQ(j.at("checkpoint_bytes").get<std::uint64_t>(), kFp8Tp1);
  EXPECT_EQ(j.at("unquantized_bytes").get<std::uint64_t>(), kBf16Tp1);
  EXPECT_EQ(j.at("state").at("weights"), "fp8_block");
  const Outcome text = ckptbench(
      {"layout", "--model", model_.string(), "--state", "weights", "--weights", "fp8_block"});
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  EXPECT_TRUE(contains(text.out, "unquantized  2.23 MiB (2,336,256 B): 655,200 B (28.0 %) saved"))
      << text.out;
}

TEST_F(QuantizedRun, ASplitThatCutsABlockIsRefusedNamingTheTensor) {
  // Four heads of 64 and two KV heads: TP 2 gives each rank 64 rows of k_proj, half a block.
  model_ = dir_.write("fp8-heads4.toml", fp8_model_toml(4));
  const Outcome write = run("[parallel]\ntp = 2\n");
  EXPECT_EQ(write.exit_code, 2) << write.describe();
  EXPECT_TRUE(contains(write.err, "parallel.tp")) << write.err;
  EXPECT_TRUE(contains(write.err, "tensor model.layers.*.self_attn.k_proj.weight [128, 256]"))
      << write.err;
  EXPECT_TRUE(contains(write.err, "model.weights = \"unquantized\"")) << write.err;
  const Outcome load_tp = run("[load]\ntp = 2\n", {"--phase", "load"});
  EXPECT_EQ(load_tp.exit_code, 2) << load_tp.describe();
  EXPECT_TRUE(contains(load_tp.err, "load.tp = 2: tensor model.layers.*.self_attn.k_proj.weight"))
      << load_tp.err;
  ASSERT_EQ(run("").exit_code, 0);
  const Outcome cli = load({"--tp", "2"});
  EXPECT_EQ(cli.exit_code, 2) << cli.describe();
  EXPECT_TRUE(contains(cli.err, "k_proj.weight_scale_inv must stay on one rank")) << cli.err;
}

TEST_F(QuantizedRun, AScaledCheckpointReshardsAndLoadsItsWeightsWithWholeScales) {
  const std::vector<std::string> scale4{"--set", "model.scale=4"};
  ASSERT_EQ(run("[parallel]\ntp = 2\n", scale4).exit_code, 0);
  const nlohmann::json manifest = read_manifest(checkpoint());
  std::map<std::string, nlohmann::json> rank1;
  for (const nlohmann::json& t : manifest.at("tensors"))
    if (t.at("rank") == 1) rank1[t.at("name").get<std::string>()] = t;
  // TP rank 1's q_proj rows 128..255 shrink to 32 rows; its scales [1, 2] stay whole.
  const std::string q = "model.layers.0.self_attn.q_proj.weight";
  ASSERT_TRUE(rank1.contains(q) && rank1.contains(q + "_scale_inv"));
  EXPECT_EQ(rank1.at(q).at("bytes"), 32 * 256);
  EXPECT_FALSE(rank1.at(q).contains("unscaled"));
  EXPECT_EQ(rank1.at(q + "_scale_inv").at("bytes"), 2 * 4);
  EXPECT_EQ(rank1.at(q + "_scale_inv").at("unscaled"), true);
  for (const char* tp : {"1", "2"}) {
    const Outcome restore = run("[parallel]\ntp = 2\n[restore]\ntp = " + std::string(tp) + "\n",
                                {"--set", "model.scale=4", "--phase", "restore"});
    ASSERT_EQ(restore.exit_code, 0) << restore.describe();
    const nlohmann::json result = read_results(dir_ / "out").at(0);
    EXPECT_EQ(result.at("status"), "ok") << result.dump();
    EXPECT_EQ(result.at("verified"), true) << tp;
    const Outcome loaded = load({"--tp", tp});
    ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
    EXPECT_TRUE(contains(loaded.out, ", verified\n")) << loaded.out;
  }
}

TEST_F(QuantizedRun, AScaledCheckpointRefusesATargetThatCutsABlockBeforeReading) {
  model_ = dir_.write("fp8-heads4.toml", fp8_model_toml(4));
  ASSERT_EQ(run("", {"--set", "model.scale=4"}).exit_code, 0);
  const Outcome reshard =
      run("[restore]\ntp = 2\n", {"--set", "model.scale=4", "--phase", "restore"});
  EXPECT_EQ(reshard.exit_code, 2) << reshard.describe();
  EXPECT_TRUE(contains(reshard.err, "tensor model.layers.*.self_attn.k_proj.weight [128, 256]"))
      << reshard.err;
  EXPECT_TRUE(contains(reshard.err, "use tp = 1 for this tensor")) << reshard.err;
  EXPECT_TRUE(read_results(dir_ / "out").empty());  // refused before any case ran
  const Outcome cli = load({"--tp", "2"});
  EXPECT_EQ(cli.exit_code, 2) << cli.describe();
  EXPECT_TRUE(contains(cli.err, "k_proj.weight_scale_inv must stay on one rank")) << cli.err;
}

}  // namespace
}  // namespace ckpt::integration
