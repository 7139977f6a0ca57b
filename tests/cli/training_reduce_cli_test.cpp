// Selective and delta checkpoints under the [training] engines: `ckptbench run --phase checkpoint`
// with the async engine writes, at each of the loop's checkpoints, only the layers due in the
// rotation (or the blocks changed since the base) from the snapshot in the host pool; the manifest
// names, per piece, the checkpoint holding it and (selective) the training iteration of that copy;
// `--phase restore` merges or chains them and verifies every byte of every piece against its
// iteration's state.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// Three checkpoints of the async loop: after iterations 1, 3 and 5.
constexpr const char* kAsyncLoop = R"([training]
iterations = 6
iteration_seconds = 0.01
checkpoint_every = 2
[engine]
name = "async"
)";

// The tiny model with three layers, so that a rotation of three has a layer for every turn.
std::string three_layer_model() {
  std::string model = kTinyModel;
  const std::string two = "num_hidden_layers = 2";
  model.replace(model.find(two), two.size(), "num_hidden_layers = 3");
  return model;
}

Outcome run_loop_phase(const Scratch& dir, const std::string& text, const std::string& phase) {
  return run_campaign_phase(dir, "t.toml", text, phase);
}

std::vector<fs::path> loop_checkpoints(const Scratch& dir) {
  return complete_checkpoints(dir / "target" / "t" / "case-0000");
}

// The loop's record, its three checkpoints committed.
void expect_three_committed(const nlohmann::json& record) {
  const nlohmann::json& checkpoints = record.at("training").at("checkpoints");
  ASSERT_EQ(checkpoints.size(), 3u);
  for (const nlohmann::json& c : checkpoints) EXPECT_TRUE(c.at("committed").get<bool>());
}

// The layer of a tensor name "<module>.layers.N....", 0 outside the layers (which go with it).
int rotation_layer(const std::string& name) {
  const std::string marker = ".layers.";
  const std::size_t at = name.find(marker);
  return at == std::string::npos ? 0 : std::stoi(name.substr(at + marker.size()));
}

// The loop's record after `--phase checkpoint`.
nlohmann::json written_record(const Scratch& dir, const std::string& text) {
  const Outcome written = run_loop_phase(dir, text, "checkpoint");
  EXPECT_EQ(written.exit_code, 0) << written.describe();
  const std::vector<nlohmann::json> records = read_results(dir / "out-checkpoint");
  return records.size() == 1u ? records[0] : nlohmann::json{{"status", "none"}, {"error", ""}};
}

TEST(TrainingReduce, AsyncSelectiveCheckpointsRestoreMergedFromThreeIterations) {
  const Scratch dir;
  const fs::path model = dir.write("tiny3.toml", three_layer_model());
  const std::string text =
      campaign_toml("t", dir / "target",
                    "create_target = true\nkeep = true\n[model]\nname = \"" + model.string() +
                        "\"\n[state]\nscope = \"full\"\n[cache]\npolicy = \"none\"\n[strategy]\n"
                        "selective_every = 3\n" +
                        kAsyncLoop);
  const nlohmann::json record = written_record(dir, text);
  ASSERT_EQ(record.at("status"), "ok") << record.at("error");
  const std::vector<fs::path> kept = loop_checkpoints(dir);
  ASSERT_EQ(kept.size(), 3u);  // the newest points at both earlier ones
  const std::string first = kept[0].filename().string(), second = kept[1].filename().string();
  const nlohmann::json newest = read_manifest(kept[2]);
  EXPECT_EQ(newest.at("training_iteration"), 5);
  // Each checkpoint wrote the layers of its turn (the first, every piece): exact bytes.
  std::uint64_t full = 0;
  std::vector<std::uint64_t> layer_bytes(3, 0);
  for (const nlohmann::json& t : newest.at("tensors")) {
    const int layer = rotation_layer(t.at("name"));
    const auto bytes = t.at("bytes").get<std::uint64_t>();
    full += bytes;
    layer_bytes.at(static_cast<std::size_t>(layer)) += bytes;
    SCOPED_TRACE(t.dump());
    if (layer == 2) {  // held here, at the checkpoint's iteration
      EXPECT_FALSE(t.contains("checkpoint"));
      EXPECT_FALSE(t.contains("iteration"));
    } else {
      EXPECT_EQ(t.at("checkpoint"), layer == 1 ? second : first);
      EXPECT_EQ(t.at("iteration"), layer == 1 ? 3 : 1);
    }
  }
  EXPECT_EQ(record.at("bytes_per_checkpoint"), full);
  const nlohmann::json& z = record.at("selective");
  EXPECT_EQ(z.at("samples").at("written_bytes"),
            nlohmann::json({full, layer_bytes[1], layer_bytes[2]}));
  EXPECT_EQ(z.at("samples").at("chain_length"), nlohmann::json({1, 2, 3}));
  EXPECT_EQ(z.at("samples").at("oldest_needed"), nlohmann::json({first, first, first}));
  EXPECT_EQ(manifest_file_bytes(kept[1]), layer_bytes[1]);
  EXPECT_EQ(manifest_file_bytes(kept[2]), layer_bytes[2]);
  expect_three_committed(record);

  const nlohmann::json read = verified_restore(dir, "t.toml", text);
  const nlohmann::json& r = read.at("selective").at("restore");
  EXPECT_EQ(r.at("checkpoint"), kept[2].filename().string());
  EXPECT_EQ(r.at("read_from"), nlohmann::json({first, second}));
  EXPECT_EQ(r.at("chain_length"), 3);
  EXPECT_EQ(r.at("read_bytes"), full);
}

TEST(TrainingReduce, AsyncDeltaCheckpointsChainToTheirBaseAndRestoreVerified) {
  const Scratch dir;
  const std::string text =
      tiny_full_state_campaign(dir, "t", 1, 0,
                               std::string("[strategy]\ndelta_every = 3\ndelta_block_bytes = 4096\n"
                                           "delta_changed_fraction = 0.25\n") +
                                   kAsyncLoop);
  const nlohmann::json record = written_record(dir, text);
  ASSERT_EQ(record.at("status"), "ok") << record.at("error");
  const std::vector<fs::path> kept = loop_checkpoints(dir);
  ASSERT_EQ(kept.size(), 2u);  // the middle delta went once the newest was kept
  const std::string base = kept[0].filename().string();
  const nlohmann::json newest = read_manifest(kept[1]);
  EXPECT_EQ(newest.at("training_iteration"), 5);
  EXPECT_EQ(read_manifest(kept[0]).at("training_iteration"), 1);
  const std::uint64_t full = record.at("bytes_per_checkpoint");
  const nlohmann::json& z = record.at("selective");
  EXPECT_EQ(z.at("delta_every"), 3);
  EXPECT_EQ(z.at("samples").at("chain_length"), nlohmann::json({1, 2, 3}));
  EXPECT_EQ(z.at("samples").at("oldest_needed"), nlohmann::json({base, base, base}));
  const std::vector<std::uint64_t> bytes = z.at("samples").at("written_bytes");
  ASSERT_EQ(bytes.size(), 3u);
  EXPECT_EQ(bytes[0], full);
  // Differential: the newest holds every block changed since the base, the middle one's too.
  EXPECT_GT(bytes[1], 0u);
  EXPECT_GE(bytes[2], bytes[1]);
  EXPECT_LT(bytes[2], full);
  bool at_base = false;
  EXPECT_EQ(delta_run_bytes(newest, base, at_base), bytes[2]);
  EXPECT_TRUE(at_base);
  EXPECT_EQ(manifest_file_bytes(kept[1]), bytes[2]);
  expect_three_committed(record);

  const nlohmann::json read = verified_restore(dir, "t.toml", text);
  const nlohmann::json& r = read.at("selective").at("restore");
  EXPECT_EQ(r.at("read_from"), nlohmann::json({base}));
  EXPECT_EQ(r.at("chain_length"), 3);
  EXPECT_EQ(r.at("read_bytes"), full + bytes[2]);
}

}  // namespace
}  // namespace ckpt::integration
