// strategy.selective_every and strategy.partial_experts end to end: `ckptbench run --phase
// checkpoint` writes a rotating subset of the layers (of the experts) per checkpoint and keeps the
// earlier checkpoints the newest points at; the manifest names, per piece, the checkpoint holding
// its newest copy; `--phase restore` merges them (from three checkpoints) and verifies every byte,
// and `ckptbench report` shows them; a restore whose earlier checkpoint is missing a manifest or
// has a short file is refused (exit 2) naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The tiny model with three layers, so that a rotation of three has a layer for every turn.
std::string three_layers() {
  std::string model = kTinyModel;
  const std::string two = "num_hidden_layers = 2";
  model.replace(model.find(two), two.size(), "num_hidden_layers = 3");
  return model;
}

std::string selective_campaign(const Scratch& dir, int warmup) {
  const fs::path model = dir.write("tiny3.toml", three_layers());
  return campaign_toml("s", dir / "target",
                       "create_target = true\nkeep = true\niterations = 3\nwarmup = " +
                           std::to_string(warmup) + "\n[model]\nname = \"" + model.string() +
                           "\"\n[state]\nscope = \"full\"\n[cache]\npolicy = \"none\"\n"
                           "[strategy]\nselective_every = 3\n");
}

// `ckptbench run` of `text` with --phase `phase` (its part before a "-": "checkpoint-again"), its
// results under out-<phase>.
Outcome run_phase(const Scratch& dir, const std::string& text, const std::string& phase) {
  const fs::path file = dir.write("s.toml", text);
  return ckptbench({"run", file.string(), "--output", (dir / ("out-" + phase)).string(), "--phase",
                    phase.substr(0, phase.find('-'))});
}

// The case's complete checkpoints, oldest first.
std::vector<fs::path> checkpoints(const Scratch& dir) {
  return complete_checkpoints(dir / "target" / "s" / "case-0000");
}

// Bytes of the pieces a checkpoint holds itself (its entries without `checkpoint`).
std::uint64_t own_bytes(const nlohmann::json& manifest) {
  std::uint64_t bytes = 0;
  for (const nlohmann::json& t : manifest.at("tensors"))
    if (!t.contains("checkpoint")) bytes += t.at("bytes").get<std::uint64_t>();
  return bytes;
}

// The layer of a tensor name "<module>.layers.N....", -1 outside the layers.
int layer_of(const std::string& name) {
  const std::string marker = ".layers.";
  const std::size_t at = name.find(marker);
  return at == std::string::npos ? -1 : std::stoi(name.substr(at + marker.size()));
}

TEST(SelectiveRun, RestoreMergesTheNewestCopyOfEachLayerFromThreeCheckpoints) {
  const Scratch dir;
  const std::string text = selective_campaign(dir, 1);
  const Outcome written = run_phase(dir, text, "checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const std::vector<nlohmann::json> records = read_results(dir / "out-checkpoint");
  ASSERT_EQ(records.size(), 1u);
  const nlohmann::json& z = records[0].at("selective");
  // The warm-up checkpoint went at once: the first timed one is full, the next two hold layer 2,
  // then layer 0 with the tensors outside the layers.
  const std::vector<fs::path> kept = checkpoints(dir);
  ASSERT_EQ(kept.size(), 3u);
  const std::uint64_t full = records[0].at("bytes_per_checkpoint");
  EXPECT_EQ(z.at("full_bytes"), full);
  const auto& bytes = z.at("samples").at("written_bytes");
  ASSERT_EQ(bytes.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_EQ(bytes[k].get<std::uint64_t>(), own_bytes(read_manifest(kept[k]))) << k;
  EXPECT_EQ(bytes[0].get<std::uint64_t>(), full);
  EXPECT_LT(bytes[1].get<std::uint64_t>() + bytes[2].get<std::uint64_t>(), full);
  const std::string first = kept[0].filename().string(), second = kept[1].filename().string();
  EXPECT_EQ(z.at("samples").at("oldest_needed"), nlohmann::json({first, first, first}));
  // The newest manifest: layer 1 from the first, layer 2 from the second, the rest its own.
  const std::map<int, std::string> source_of_layer = {{-1, ""}, {0, ""}, {1, first}, {2, second}};
  const nlohmann::json newest = read_manifest(kept[2]);  // kept alive across the loop
  for (const nlohmann::json& t : newest.at("tensors")) {
    const std::string name = t.at("name");
    SCOPED_TRACE(name);
    EXPECT_EQ(t.value("checkpoint", ""), source_of_layer.at(layer_of(name)));
  }

  const Outcome restored = run_phase(dir, text, "restore");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const std::vector<nlohmann::json> reads = read_results(dir / "out-restore");
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].at("status"), "ok") << reads[0].at("error");
  EXPECT_EQ(reads[0].at("verified"), true);
  const nlohmann::json& r = reads[0].at("selective").at("restore");
  EXPECT_EQ(r.at("checkpoint"), kept[2].filename().string());
  EXPECT_EQ(r.at("read_from"), nlohmann::json({first, second}));
  EXPECT_EQ(r.at("oldest_needed"), first);
  EXPECT_NE(restored.out.find("also reading " + first + ", " + second), std::string::npos)
      << restored.out;
  // `ckptbench report` of the restore: the checkpoints it merged.
  const Outcome report = ckptbench({"report", run_directory(dir / "out-restore").string()});
  ASSERT_EQ(report.exit_code, 0) << report.describe();
  EXPECT_NE(report.out.find("Selective checkpoints"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find(kept[2].filename().string() + " + " + first + " + " + second),
            std::string::npos)
      << report.out;
}

TEST(SelectiveRun, ARestoreWhoseEarlierCheckpointIsShortOrIncompleteIsRefusedNamingIt) {
  const Scratch dir;
  const std::string text = selective_campaign(dir, 0);
  ASSERT_EQ(run_phase(dir, text, "checkpoint").exit_code, 0);
  const std::vector<fs::path> kept = checkpoints(dir);
  ASSERT_EQ(kept.size(), 3u);
  // A file of the second checkpoint cut short.
  const nlohmann::json files = read_manifest(kept[1]).at("files");
  ASSERT_FALSE(files.empty());
  const fs::path data = kept[1] / files[0].at("path").get<std::string>();
  fs::resize_file(data, fs::file_size(data) - 1);
  Outcome o = run_phase(dir, text, "restore");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_NE(o.err.find("needs earlier checkpoint " + kept[1].string()), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("its file " + files[0].at("path").get<std::string>() + " has"),
            std::string::npos)
      << o.err;
  // The first checkpoint without its manifest (incomplete).
  fs::remove(kept[0] / kManifest);
  o = run_phase(dir, text, "restore");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_NE(o.err.find("needs earlier checkpoint " + kept[0].string()), std::string::npos) << o.err;
}

// Bytes of the frames a compressed checkpoint holds itself (its entries without `checkpoint`).
std::uint64_t own_stored_bytes(const nlohmann::json& manifest) {
  std::uint64_t bytes = 0;
  for (const nlohmann::json& t : manifest.at("tensors"))
    if (!t.contains("checkpoint")) bytes += t.at("stored_bytes").get<std::uint64_t>();
  return bytes;
}

TEST(SelectiveRun, CompressedLayersAreMergedFromThreeCheckpointsAndDecoded) {
  const Scratch dir;
  const std::string text = selective_campaign(dir, 0) + "compression = \"zstd\"\n";
  ASSERT_EQ(run_phase(dir, text, "checkpoint").exit_code, 0);
  const std::vector<fs::path> kept = checkpoints(dir);
  ASSERT_EQ(kept.size(), 3u);
  const nlohmann::json z = read_results(dir / "out-checkpoint").at(0).at("selective");
  const auto& bytes = z.at("samples").at("written_bytes");
  ASSERT_EQ(bytes.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k)  // the frames each one wrote
    EXPECT_EQ(bytes[k].get<std::uint64_t>(), own_stored_bytes(read_manifest(kept[k]))) << k;

  const Outcome restored = run_phase(dir, text, "restore");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir / "out-restore").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("selective").at("restore").at("read_from"),
            nlohmann::json({kept[0].filename().string(), kept[1].filename().string()}));
  // It read the frames of the three: what the three wrote of the pieces the third points at.
  EXPECT_EQ(r.at("selective").at("restore").at("read_bytes"),
            r.at("compression").at("stored_bytes"));
}

// The tiny model as a mixture of four routed experts per layer.
const std::string kFourExperts =
    std::string(kTinyModel) + "num_local_experts = 4\nnum_experts_per_tok = 2\n";

TEST(SelectiveRun, PartialExpertsRestoreTheOtherExpertsFromTheCheckpointBefore) {
  const Scratch dir;
  const fs::path model = dir.write("moe.toml", kFourExperts);
  const std::string text = campaign_toml(
      "s", dir / "target",
      "create_target = true\nkeep = true\niterations = 2\nwarmup = 0\n[model]\nname = \"" +
          model.string() +
          "\"\n[state]\nscope = \"full\"\n[cache]\npolicy = \"none\"\n"
          "[strategy]\npartial_experts = 2\n");
  ASSERT_EQ(run_phase(dir, text, "checkpoint").exit_code, 0);
  const std::vector<fs::path> kept = checkpoints(dir);
  ASSERT_EQ(kept.size(), 2u);
  const std::string first = kept[0].filename().string();
  // The second checkpoint holds experts 2 and 3 and every other tensor; 0 and 1 are the first's.
  const nlohmann::json manifest = read_manifest(kept[1]);
  std::uint64_t carried = 0, all = 0;
  for (const nlohmann::json& t : manifest.at("tensors")) {
    const std::string name = t.at("name");
    const std::size_t at = name.rfind("experts.");
    const bool early = at != std::string::npos &&
                       (name.substr(at + 8, 2) == "0." || name.substr(at + 8, 2) == "1.");
    SCOPED_TRACE(name);
    EXPECT_EQ(t.value("checkpoint", ""), early ? first : "");
    all += t.at("bytes").get<std::uint64_t>();
    if (early) carried += t.at("bytes").get<std::uint64_t>();
  }
  EXPECT_GT(carried, 0u);
  const nlohmann::json z = read_results(dir / "out-checkpoint").at(0).at("selective");
  EXPECT_EQ(z.at("experts"), 2);
  EXPECT_EQ(z.at("samples").at("written_bytes"), nlohmann::json({all, all - carried}));

  const Outcome restored = run_phase(dir, text, "restore");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir / "out-restore").at(0);
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("selective").at("restore").at("read_from"), nlohmann::json({first}));
  // Another writing run supersedes the kept checkpoint and the earlier one it points at.
  std::string again = text;
  again.replace(again.find("keep = true"), 11, "keep = true\noverwrite = true");
  const Outcome o = run_phase(dir, again, "checkpoint-again");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const std::vector<fs::path> now = checkpoints(dir);
  ASSERT_EQ(now.size(), 2u);
  EXPECT_GT(now[0].filename(), kept[1].filename());
}

}  // namespace
}  // namespace ckpt::integration
