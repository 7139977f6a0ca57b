// `ckptbench codec` as a user runs it (every codec on generated content and files, --save, the
// errors), and data.pattern = "trained" through every phase: checkpoint, restore, resharding
// restore, load and the training loop verify every byte, and the files compress.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

nlohmann::json codec_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"codec", "--repeat", "1", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const Outcome o = ckptbench(argv);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  return nlohmann::json::parse(o.out);
}

double ratio_of(const nlohmann::json& rows, const std::string& input, const std::string& codec) {
  for (const nlohmann::json& r : rows) {
    if (r.at("input") == input && r.at("codec") == codec) return r.at("ratio").get<double>();
  }
  ADD_FAILURE() << "no row for " << input << " and " << codec;
  return 0;
}

TEST(CodecCli, EveryCodecOnGeneratedContentWithItsSizesAndSpeeds) {
  const nlohmann::json rows = codec_json({"--content", "weight-bf16", "--content", "random",
                                          "--bytes", "1MiB", "--chunk-bytes", "256KiB"});
  ASSERT_EQ(rows.size(), 6u) << rows.dump(2);
  for (const nlohmann::json& r : rows) {
    EXPECT_EQ(r.at("bytes"), 1 << 20);
    EXPECT_EQ(r.at("chunk_bytes"), 1 << 18);
    EXPECT_EQ(r.at("level"), 3);
    EXPECT_GT(r.at("compress_gib_per_s").get<double>(), 0);
    EXPECT_GT(r.at("decompress_gib_per_s").get<double>(), 0);
    EXPECT_EQ(r.at("compress_seconds").size(), 1u);
  }
  EXPECT_GT(ratio_of(rows, "weight-bf16", "grouped-bf16"),
            ratio_of(rows, "weight-bf16", "zstd") + 0.2);
  EXPECT_LT(ratio_of(rows, "random", "zstd"), 1.0) << "frames cost a little on random bytes";
  EXPECT_GT(ratio_of(rows, "random", "zstd"), 0.99);
}

TEST(CodecCli, SavedContentIsWhatItMeasuresAndFilesAreRead) {
  Scratch dir;
  const Outcome saved = ckptbench({"codec", "--save", (dir / "in").string(), "--content",
                                   "exp_avg_sq-fp32", "--bytes", "65536"});
  ASSERT_EQ(saved.exit_code, 0) << saved.describe();
  const fs::path file = dir / "in" / "exp_avg_sq-fp32.bin";
  ASSERT_EQ(fs::file_size(file), 65536u);
  const nlohmann::json from_file = codec_json({"--file", file.string(), "--codec", "grouped-fp32"});
  const nlohmann::json generated =
      codec_json({"--content", "exp_avg_sq-fp32", "--bytes", "65536", "--codec", "grouped-fp32"});
  ASSERT_EQ(from_file.size(), 1u);
  ASSERT_EQ(generated.size(), 1u);
  EXPECT_EQ(from_file[0].at("compressed_bytes"), generated[0].at("compressed_bytes"));
  EXPECT_EQ(from_file[0].at("input"), file.string());
}

TEST(CodecCli, BadInputIsRefusedNamingIt) {
  Scratch dir;
  const Outcome missing = ckptbench({"codec", "--file", (dir / "absent.bin").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.describe();
  EXPECT_TRUE(contains(missing.err, "ckptbench: error: --file " + (dir / "absent.bin").string() +
                                        ": No such file or directory"))
      << missing.describe();
  const Outcome empty = ckptbench({"codec", "--file", dir.write("empty.bin", "").string()});
  EXPECT_EQ(empty.exit_code, 2) << empty.describe();
  EXPECT_TRUE(contains(empty.err, "empty, nothing to compress")) << empty.describe();
  const Outcome codec = ckptbench({"codec", "--codec", "grouped-bf61"});
  EXPECT_EQ(codec.exit_code, 2) << codec.describe();
  EXPECT_TRUE(contains(codec.err, "did you mean `grouped-bf16`")) << codec.describe();
}

// The trained pattern through every phase of the tiny model's full state (bf16 weights, fp32
// master and Adam states), each verified against the bytes regenerated from the manifest's keys.
TEST(TrainedPattern, EveryPhaseVerifiesAndTheCheckpointCompresses) {
  Scratch dir;
  const std::string rest = "[data]\npattern = \"trained\"\n[parallel]\ntp = 2\n";
  const fs::path campaign = dir.write("t.toml", tiny_full_state_campaign(dir, "t", 1, 0, rest));
  const std::vector<std::vector<std::string>> phases{
      {"--phase", "checkpoint"},
      {"--phase", "restore"},
      {"--phase", "restore", "--set", "restore.tp=1"},
      {"--phase", "load", "--set", "load.tp=1"},
  };
  int run = 0;
  for (const std::vector<std::string>& phase : phases) {
    const fs::path output = dir / ("out-" + std::to_string(run++));
    std::vector<std::string> argv{"run", campaign.string(), "--output", output.string(), "-q"};
    argv.insert(argv.end(), phase.begin(), phase.end());
    const Outcome o = ckptbench(argv);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    for (const nlohmann::json& r : read_results(output)) {
      EXPECT_EQ(r.at("status"), "ok") << r.dump();
      if (phase[1] != "checkpoint") {
        EXPECT_EQ(r.at("verified"), true) << r.dump();
      }
    }
  }
  const fs::path training =
      dir.write("training.toml", tiny_full_state_campaign(dir, "training", 1, 0,
                                                          rest + "[training]\niterations = 3\n"
                                                                 "iteration_seconds = 0.01\n"));
  const Outcome trained =
      ckptbench({"run", training.string(), "--output", (dir / "out-training").string(), "-q"});
  ASSERT_EQ(trained.exit_code, 0) << trained.describe();
  EXPECT_EQ(read_results(dir / "out-training").at(0).at("verified"), true);

  const fs::path checkpoint = latest_checkpoint(dir / "target" / "t" / "case-0000");
  ASSERT_FALSE(checkpoint.empty());
  const nlohmann::json manifest = read_manifest(checkpoint);
  const fs::path file = checkpoint / manifest.at("files").at(0).at("path").get<std::string>();
  const nlohmann::json rows = codec_json({"--file", file.string(), "--codec", "zstd"});
  EXPECT_GT(ratio_of(rows, file.string(), "zstd"), 1.05) << "bf16 and fp32 values compress";
}

}  // namespace
}  // namespace ckpt::integration
