// The one commit and the typed manifest, through the binary: a [training] checkpoint in
// safetensors format gets the same model.safetensors.index.json as a written one (each engine's
// commit is the write phase's), the manifest's checkpoint_hash covers its training_iteration,
// a manifest of an older version is refused by every read path with what to do, and a dry run
// refuses a manifest whose tensor list was changed with the words the read itself uses.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The JSON header of a safetensors file (8-byte little-endian length, then the text).
nlohmann::json safetensors_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char word[8] = {};
  in.read(reinterpret_cast<char*>(word), 8);
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | word[i];
  std::string text(length, '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  return nlohmann::json::parse(text);
}

void write_manifest(const fs::path& checkpoint, const nlohmann::json& manifest) {
  std::ofstream(checkpoint / kManifest, std::ios::trunc) << manifest.dump();
}

class CheckpointCommit : public ::testing::Test {
 protected:
  // A kept TP 2 weights-only checkpoint of the tiny model, then `more`.
  fs::path campaign(const std::string& name, const std::string& more) {
    return dir_.write(name + ".toml",
                      campaign_toml("cc", dir_ / "target",
                                    "create_target = true\noverwrite = true\nkeep = true\n"
                                    "iterations = 1\nwarmup = 0\n[model]\nname = \"" +
                                        model_.string() +
                                        "\"\nscale = 2\n[parallel]\ntp = 2\n[state]\nscope = "
                                        "\"weights\"\n[cache]\npolicy = \"none\"\n" +
                                        more));
  }
  Outcome run(const fs::path& file, const std::string& phase, std::vector<std::string> more = {}) {
    std::vector<std::string> args{
        "run",     file.string(), "--output", (dir_ / ("out-" + std::to_string(runs_++))).string(),
        "--phase", phase,         "-q"};
    args.insert(args.end(), more.begin(), more.end());
    return ckptbench(args);
  }
  Outcome load(const fs::path& checkpoint) {
    return ckptbench({"load", checkpoint.string(), "--no-drop-caches"});
  }
  fs::path checkpoint() const { return latest_checkpoint(dir_ / "target" / "cc" / "case-0000"); }

  static constexpr const char* kTraining =
      "[training]\niterations = 2\niteration_seconds = 0.01\ncheckpoint_every = 1\n";

  Scratch dir_;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  int runs_ = 0;
};

TEST_F(CheckpointCommit, TrainingSafetensorsCheckpointsGetACorrectIndexForSyncAndAsync) {
  for (const std::string engine : {"sync", "async"}) {
    SCOPED_TRACE("engine.name = " + engine);
    const fs::path file = campaign("t", std::string("[strategy]\nformat = \"safetensors\"\n") +
                                            kTraining + "[engine]\nname = \"" + engine + "\"\n");
    const Outcome written = run(file, "checkpoint");
    ASSERT_EQ(written.exit_code, 0) << written.describe();
    const fs::path kept = checkpoint();
    const nlohmann::json manifest = read_manifest(kept);
    EXPECT_EQ(manifest.at("training_iteration"), 1);
    ASSERT_TRUE(fs::exists(kept / "model.safetensors.index.json"));
    const nlohmann::json index =
        nlohmann::json::parse(read_text(kept / "model.safetensors.index.json"));

    // The files the index names are exactly the safetensors files written.
    std::set<std::string> written_files;
    for (const auto& entry : fs::directory_iterator(kept)) {
      if (entry.path().extension() == ".safetensors")
        written_files.insert(entry.path().filename().string());
    }
    EXPECT_EQ(written_files, (std::set<std::string>{"model-00001-of-00002.safetensors",
                                                    "model-00002-of-00002.safetensors"}));
    const nlohmann::json& weight_map = index.at("weight_map");
    std::set<std::string> indexed_files;
    std::map<std::string, std::size_t> per_file;
    for (const auto& [name, f] : weight_map.items()) {
      indexed_files.insert(f.get<std::string>());
      ++per_file[f.get<std::string>()];
      // Each tensor is in the header of the file the index names.
      EXPECT_TRUE(safetensors_header(kept / f.get<std::string>()).contains(name))
          << name << " in " << f;
    }
    EXPECT_EQ(indexed_files, written_files);
    // One entry per tensor of the manifest, in its file; total_size is their bytes.
    std::map<std::string, std::size_t> manifest_per_file;
    std::uint64_t total = 0;
    for (const nlohmann::json& t : manifest.at("tensors")) {
      ++manifest_per_file[t.at("file").get<std::string>()];
      total += t.at("bytes").get<std::uint64_t>();
    }
    EXPECT_EQ(per_file, manifest_per_file);
    EXPECT_EQ(index.at("metadata").at("total_size"), total);

    const Outcome loaded = load(kept);
    EXPECT_EQ(loaded.exit_code, 0) << loaded.describe();
    EXPECT_TRUE(contains(loaded.out, ", verified\n")) << loaded.out;
  }
}

// The training iteration decides the bytes a read regenerates: a manifest whose
// training_iteration was changed is damaged (exit 1), not verified against another state.
TEST_F(CheckpointCommit, ChangedTrainingIterationIsRefusedByItsCheckpointHash) {
  const fs::path file = campaign("t", kTraining);
  ASSERT_EQ(run(file, "checkpoint").exit_code, 0);
  const fs::path kept = checkpoint();
  nlohmann::json manifest = read_manifest(kept);
  ASSERT_EQ(manifest.at("training_iteration"), 1);
  manifest["training_iteration"] = 0;
  write_manifest(kept, manifest);
  const std::string damage = (kept / kManifest).string() + ": checkpoint_hash: ";
  const Outcome loaded = load(kept);
  EXPECT_EQ(loaded.exit_code, 1) << loaded.describe();
  EXPECT_TRUE(contains(loaded.err, "ckptbench: error: damaged checkpoint: " + damage))
      << loaded.err;
  EXPECT_TRUE(contains(loaded.err, "training iteration")) << loaded.err;
  const Outcome restored = run(file, "restore");
  EXPECT_EQ(restored.exit_code, 1) << restored.describe();
  EXPECT_TRUE(contains(restored.err, "damaged checkpoint: " + damage)) << restored.err;
  // Without the field, the same.
  manifest.erase("training_iteration");
  write_manifest(kept, manifest);
  EXPECT_EQ(load(kept).exit_code, 1);
}

// Version 3 manifests (checkpoint_hash without the training iteration) are refused by every read
// path with one message naming the file and what to do.
TEST_F(CheckpointCommit, PreviousManifestVersionIsRefusedWithWhatToDo) {
  const fs::path file = campaign("w", "");
  ASSERT_EQ(run(file, "checkpoint").exit_code, 0);
  const fs::path kept = checkpoint();
  nlohmann::json manifest = read_manifest(kept);
  EXPECT_EQ(manifest.at("version"), 5);
  manifest["version"] = 3;
  write_manifest(kept, manifest);
  const std::string message =
      (kept / kManifest).string() +
      ": manifest version 3 was written by an older ckptbench, whose checkpoint_hash does "
      "not cover what version 4 checks";
  const Outcome loaded = load(kept);
  EXPECT_EQ(loaded.exit_code, 2) << loaded.describe();
  EXPECT_TRUE(contains(loaded.err, message)) << loaded.err;
  EXPECT_TRUE(contains(loaded.err, "write the checkpoint again")) << loaded.err;
  for (const std::vector<std::string>& more :
       {std::vector<std::string>{}, std::vector<std::string>{"--dry-run"}}) {
    const Outcome restored = run(file, "restore", more);
    EXPECT_EQ(restored.exit_code, 2) << restored.describe();
    EXPECT_TRUE(contains(restored.err, message)) << restored.err;
    EXPECT_TRUE(contains(restored.err, "write the checkpoint again")) << restored.err;
  }
}

// A dry run of a restore or a load reads the manifest as the run does and refuses a changed tensor
// list with the run's own words (the run: exit 1, damaged data; the dry run: exit 2, it would
// fail).
TEST_F(CheckpointCommit, DryRunRefusesAChangedTensorListAsTheReadDoes) {
  const fs::path file = campaign("w", "");
  const fs::path load_file = campaign("l", "[load]\ntp = 1\n");
  ASSERT_EQ(run(file, "checkpoint").exit_code, 0);
  const fs::path kept = checkpoint();
  nlohmann::json manifest = read_manifest(kept);
  const nlohmann::json removed = manifest["tensors"][1];
  manifest["tensors"].erase(1);
  write_manifest(kept, manifest);
  const std::string problem = (kept / kManifest).string() + ": tensors: tensor " +
                              removed.at("name").get<std::string>() + " (weight, rank " +
                              removed.at("rank").dump() + ") is missing";
  for (const fs::path& f : {file, load_file}) {
    const std::string phase = f == file ? "restore" : "load";
    SCOPED_TRACE(phase);
    const Outcome real = run(f, phase);
    EXPECT_EQ(real.exit_code, 1) << real.describe();
    EXPECT_TRUE(contains(real.err, "damaged checkpoint: " + problem)) << real.err;
    const Outcome dry = run(f, phase, {"--dry-run"});
    EXPECT_EQ(dry.exit_code, 2) << dry.describe();
    EXPECT_TRUE(contains(dry.err, "would fail: case 0: damaged checkpoint: " + problem)) << dry.err;
  }
}

}  // namespace
}  // namespace ckpt::integration
