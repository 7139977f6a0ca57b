// model.weights = "mxfp4" end to end on tests/data/hf/fixtures/small-gpt-oss (2 layers of 4
// experts, hidden 256, expert width 512): a TP 2 safetensors checkpoint whose experts are U8
// blocks and scales, restored verified at TP 2 and resharded to TP 1, loaded by `ckptbench load
// --tp` and --phase load at TP 1 and 2, the bytes saved against the unquantized checkpoint (results
// and report), and a TP split that would cut a 32-value block refused by name before any I/O.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/formats/safetensors_header.hpp"
#include "tests/cli/quantized_run.hpp"

namespace ckpt::integration {
namespace {

const fs::path kSmallGptOss =
    fs::path(CKPT_SOURCE_DIR) / "tests/data/hf/fixtures/small-gpt-oss/config.json";
// Its weights at TP 1: the experts' 1,048,576 + 524,288 values a layer at half a byte and a
// byte of scale per 32, every other tensor (and the experts' biases) in bf16.
constexpr std::uint64_t kMxfp4Bytes = 3511840;
constexpr std::uint64_t kBf16Bytes = 8132128;

class Mxfp4Run : public QuantizedRun {
 protected:
  Mxfp4Run() {
    model_ = kSmallGptOss;
    weights_ = "mxfp4";
  }
};

TEST_F(Mxfp4Run, Tp2SafetensorsHoldU8BlocksAndScalesRestoredReshardedAndLoaded) {
  const std::string tp2 = "[parallel]\ntp = 2\n[strategy]\nformat = \"safetensors\"\n";
  const Outcome out = run(tp2);
  ASSERT_EQ(out.exit_code, 0) << out.describe();
  EXPECT_EQ(read_results(dir_ / "out").at(0).at("verified"), true);
  const harness::SafetensorsHeader header =
      harness::read_safetensors_header(checkpoint() / "model-00002-of-00002.safetensors");
  const std::string p = "model.layers.0.mlp.experts.";
  const std::vector<std::pair<std::string, std::vector<std::uint64_t>>> experts{
      {p + "down_proj_blocks[0:4,0:256,8:16,0:16]", {4, 256, 8, 16}},
      {p + "down_proj_scales[0:4,0:256,8:16]", {4, 256, 8}},
      {p + "gate_up_proj_blocks[0:4,512:1024,0:8,0:16]", {4, 512, 8, 16}},
      {p + "gate_up_proj_scales[0:4,512:1024,0:8]", {4, 512, 8}},
  };
  for (const auto& expert : experts) {
    // Not a structured binding: clang 14 (the sanitizer build) cannot capture one.
    const std::string& name = expert.first;
    const std::vector<std::uint64_t>& shape = expert.second;
    const auto it =
        std::find_if(header.tensors.begin(), header.tensors.end(),
                     [&](const harness::SafetensorsTensor& t) { return t.name == name; });
    ASSERT_NE(it, header.tensors.end()) << name;
    EXPECT_EQ(it->dtype, "U8") << name;
    EXPECT_EQ(it->shape, shape) << name;
  }
  const Outcome restore = run(tp2, {"--phase", "restore"});
  ASSERT_EQ(restore.exit_code, 0) << restore.describe();
  EXPECT_EQ(read_results(dir_ / "out").at(0).at("verified"), true);
  const Outcome reshard = run(tp2 + "[restore]\ntp = 1\n", {"--phase", "restore"});
  ASSERT_EQ(reshard.exit_code, 0) << reshard.describe();
  EXPECT_EQ(read_results(dir_ / "out").at(0).at("verified"), true);
  for (const char* tp : {"1", "2"}) {
    const Outcome loaded = load({"--tp", tp});
    ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
    EXPECT_TRUE(contains(loaded.out, ", verified\n")) << loaded.out;
  }
  EXPECT_TRUE(
      contains(load({"--tp", "1"}).out, ": " + std::to_string(kMxfp4Bytes) + " bytes needed, "));
}

TEST_F(Mxfp4Run, TheBytesSavedAgainstTheUnquantizedCheckpointAreReported) {
  expect_saved(kMxfp4Bytes, kBf16Bytes);
  // The report's quantized-weights table: 4,620,288 of 8,132,128 bytes saved.
  const Outcome report = ckptbench({"report", run_directory(dir_ / "out").string()});
  ASSERT_EQ(report.exit_code, 0) << report.describe();
  EXPECT_TRUE(contains(report.out, "mxfp4      3.35 MiB     7.76 MiB  4.41 MiB    56.8%"))
      << report.out;
  // The inference load at TP 1 and 2 reads every stored byte, blocks and scales, verified.
  expect_loads_at_tp_1_and_2("", kMxfp4Bytes);
}

TEST_F(Mxfp4Run, ASplitThatCutsABlockIsRefusedNamingTheTensor) {
  // An expert width of 96: three 32-value blocks a row of down_proj, which TP 2 would cut.
  nlohmann::json config = nlohmann::json::parse(std::ifstream(kSmallGptOss));
  config["intermediate_size"] = 96;
  model_ = dir_.write("config.json", config.dump());
  const std::string refusal = "tensor model.layers.*.mlp.experts.down_proj_blocks [4, 256, 3, 16]";
  const Outcome write = run("[parallel]\ntp = 2\n");
  EXPECT_EQ(write.exit_code, 2) << write.describe();
  EXPECT_TRUE(contains(write.err, "parallel.tp")) << write.err;
  EXPECT_TRUE(contains(write.err, refusal)) << write.err;
  ASSERT_EQ(run("").exit_code, 0);
  const Outcome reshard = run("[restore]\ntp = 2\n", {"--phase", "restore"});
  EXPECT_EQ(reshard.exit_code, 2) << reshard.describe();
  EXPECT_TRUE(contains(reshard.err, refusal)) << reshard.err;
  const Outcome cli = load({"--tp", "2"});
  EXPECT_EQ(cli.exit_code, 2) << cli.describe();
  EXPECT_TRUE(contains(cli.err, "use tp = 1, 3 for this tensor")) << cli.err;
}

}  // namespace
}  // namespace ckpt::integration
