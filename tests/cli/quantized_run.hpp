#pragma once

// A campaign of quantized weights (model.weights) written, restored and loaded by the real
// ckptbench: the fixture of the fp8_block and mxfp4 command-line tests.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {

// One layer, two heads of 128: at TP 2 every split linear weight keeps whole 128 x 128 blocks.
// The vocabulary (1000) pads to 1024 rows at TP 2.
inline std::string fp8_model_toml(int heads) {
  return "name = \"fp8-tiny\"\nhidden_size = 256\nintermediate_size = 512\nnum_hidden_layers = "
         "1\nnum_attention_heads = " +
         std::to_string(heads) + "\nnum_key_value_heads = 2\nvocab_size = 1000\n";
}

class QuantizedRun : public ::testing::Test {
 protected:
  // Runs a campaign of model_ with weights_ and `rest` after its [campaign] table's common keys.
  Outcome run(const std::string& rest, const std::vector<std::string>& extra = {}) {
    const fs::path campaign =
        dir_.write("c.toml", campaign_toml("q", dir_ / "target",
                                           "create_target = true\noverwrite = true\nkeep = true\n"
                                           "iterations = 1\nwarmup = 0\n[model]\nname = \"" +
                                               model_.string() + "\"\nweights = \"" + weights_ +
                                               "\"\n[state]\nscope = \"weights\"\n"
                                               "[cache]\npolicy = \"none\"\n" +
                                               rest));
    std::vector<std::string> args{"run", campaign.string(), "--output", (dir_ / "out").string(),
                                  "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    fs::remove_all(dir_ / "out");
    return ckptbench(args);
  }
  fs::path checkpoint() const { return latest_checkpoint(dir_ / "target" / "q" / "case-0000"); }
  Outcome load(const std::vector<std::string>& more) {
    std::vector<std::string> args{"load", checkpoint().string(), "--no-drop-caches"};
    args.insert(args.end(), more.begin(), more.end());
    return ckptbench(args);
  }

  // Runs --phase load at TP 1 and 2 with `rest`: each result ok, verified, every stored byte
  // (`bytes`) read. Returns the two results.
  std::vector<nlohmann::json> expect_loads_at_tp_1_and_2(const std::string& rest,
                                                         std::uint64_t bytes) {
    const Outcome phase = run(rest + "[load]\ntp = [1, 2]\n", {"--phase", "load"});
    EXPECT_EQ(phase.exit_code, 0) << phase.describe();
    const std::vector<nlohmann::json> results = read_results(dir_ / "out");
    EXPECT_EQ(results.size(), 2u);
    for (const nlohmann::json& r : results) {
      EXPECT_EQ(r.at("status"), "ok") << r.dump();
      EXPECT_EQ(r.at("verified"), true);
      EXPECT_EQ(r.at("load").at("bytes").get<std::uint64_t>(), bytes);
    }
    return results;
  }
  // Writes one checkpoint and checks its results' quantized_weights record.
  void expect_saved(std::uint64_t bytes, std::uint64_t unquantized) {
    ASSERT_EQ(run("").exit_code, 0);
    const nlohmann::json saved = read_results(dir_ / "out").at(0).at("quantized_weights");
    EXPECT_EQ(saved.at("format"), weights_);
    EXPECT_EQ(saved.at("bytes").get<std::uint64_t>(), bytes);
    EXPECT_EQ(saved.at("unquantized_bytes").get<std::uint64_t>(), unquantized);
    EXPECT_EQ(saved.at("saved_bytes").get<std::uint64_t>(), unquantized - bytes);
    EXPECT_NEAR(saved.at("saved_fraction").get<double>(),
                static_cast<double>(unquantized - bytes) / static_cast<double>(unquantized), 1e-12);
  }

  Scratch dir_;
  fs::path model_ = dir_.write("fp8-tiny.toml", fp8_model_toml(2));
  std::string weights_ = "fp8_block";  // model.weights
};

}  // namespace ckpt::integration
