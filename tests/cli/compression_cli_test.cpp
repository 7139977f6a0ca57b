// strategy.compression end to end: `ckptbench run` writes each piece as frames, the manifest
// records stored and logical bytes, the files hold exactly the frames, and the restore (in the same
// run and in another invocation) decompresses and verifies every byte; a flipped byte of a frame
// fails the restore and the load, naming the file and the tensor; `ckptbench load --tp` and --phase
// load read whole frames, decode them and verify the slices they need.
// Under the [training] engines each checkpoint's state is compressed (inline for sync, on the
// flush thread for async and lazy), inside the stall or only the time to durable, and restored
// verified in the run and by another invocation.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The tiny model's full state, trained values, kept, one timed iteration after one warm-up.
std::string compressed_campaign(const Scratch& dir, const std::string& strategy) {
  return tiny_full_state_campaign(dir, "z", 1, 1,
                                  "[data]\npattern = \"trained\"\n[strategy]\n" + strategy);
}

// The records of the run; `console` (when given) receives what it printed.
std::vector<nlohmann::json> run_ok(const Scratch& dir, const std::string& text,
                                   const std::string& phase, const std::string& tag,
                                   std::string* console = nullptr) {
  const fs::path file = dir.write("z.toml", text);
  const fs::path output = dir / ("out-" + tag);
  const Outcome o =
      ckptbench({"run", file.string(), "--output", output.string(), "--phase", phase});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  if (console != nullptr) *console = o.out;
  return read_results(output);
}

// The one checkpoint case `index` of campaign "z" kept under the scratch target.
fs::path kept_checkpoint(const Scratch& dir, int index) {
  char name[16];
  std::snprintf(name, sizeof name, "case-%04d", index);
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir / "target" / "z" / name)) {
    if (fs::exists(e.path() / "ckptbench-manifest.json")) found.push_back(e.path());
  }
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? fs::path() : found.front();
}

// One byte in the middle of the frames of manifest entry `piece` of checkpoint `kept`, flipped.
void flip_middle_byte(const fs::path& kept, const nlohmann::json& piece) {
  const auto at = static_cast<std::streamoff>(piece.at("file_offset").get<std::uint64_t>() +
                                              piece.at("stored_bytes").get<std::uint64_t>() / 2);
  std::fstream f(kept / piece.at("file").get<std::string>(),
                 std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  const char old = static_cast<char>(f.get());
  f.seekp(at);
  f.put(static_cast<char>(old ^ 0x5a));
}

// How a damaged piece is named: "<file> at byte <offset>: tensor <name>".
std::string named_piece(const nlohmann::json& piece) {
  return piece.at("file").get<std::string>() + " at byte " +
         std::to_string(piece.at("file_offset").get<std::uint64_t>()) + ": tensor " +
         piece.at("name").get<std::string>();
}

TEST(CompressionRun, EveryCodecRoundTripsVerifiedAndStoresOnlyItsFrames) {
  const Scratch dir;
  const std::vector<nlohmann::json> records =
      run_ok(dir,
             compressed_campaign(dir,
                                 "compression = [\"zstd\", \"bytegroup\"]\nmapping = "
                                 "\"file_per_tensor\"\ncompression_unit = [\"shard\", \"chunk\"]\n"
                                 "compression_chunk_bytes = 8192\ncompression_threads = 2\n"),
             "both", "both");
  ASSERT_EQ(records.size(), 4u);
  std::map<std::string, std::uint64_t> stored_by_codec;  // unit = shard
  for (const nlohmann::json& r : records) {
    SCOPED_TRACE(r.at("case").dump());
    EXPECT_EQ(r.at("status"), "ok") << r.at("error");
    EXPECT_EQ(r.at("verified"), true);
    const nlohmann::json& z = r.at("compression");
    EXPECT_EQ(z.at("logical_bytes"), r.at("bytes_per_checkpoint"));
    EXPECT_LT(z.at("stored_bytes").get<std::uint64_t>(),
              z.at("logical_bytes").get<std::uint64_t>());
    EXPECT_EQ(z.at("threads"), 2);
    EXPECT_EQ(z.at("samples").at("encode_seconds").size(), 1u);
    EXPECT_EQ(z.at("samples").at("decode_seconds").size(), 1u);
    const fs::path kept = kept_checkpoint(dir, r.at("case_index").get<int>());
    EXPECT_EQ(manifest_file_bytes(kept), z.at("stored_bytes").get<std::uint64_t>());
    std::uint64_t stored = 0, logical = 0;
    const nlohmann::json manifest = read_manifest(kept);
    for (const nlohmann::json& t : manifest.at("tensors")) {
      stored += t.at("stored_bytes").get<std::uint64_t>();
      logical += t.at("bytes").get<std::uint64_t>();
    }
    EXPECT_EQ(stored, z.at("stored_bytes").get<std::uint64_t>());
    EXPECT_EQ(logical, z.at("logical_bytes").get<std::uint64_t>());
    if (z.at("unit") == "shard") stored_by_codec[z.at("codec").get<std::string>()] = stored;
  }
  ASSERT_EQ(stored_by_codec.size(), 2u);
  EXPECT_LT(stored_by_codec["bytegroup"], stored_by_codec["zstd"]);
}

TEST(CompressionRun, AnotherInvocationRestoresTheFramesAndRefusesADamagedOne) {
  const Scratch dir;
  const std::string text = compressed_campaign(dir, "compression = \"bytegroup\"\n");
  const std::vector<nlohmann::json> written = run_ok(dir, text, "checkpoint", "write");
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(written[0].at("compression").at("decode_seconds").is_null());
  std::string console;
  const std::vector<nlohmann::json> restored = run_ok(dir, text, "restore", "restore", &console);
  ASSERT_EQ(restored.size(), 1u);
  const std::string line = "case 0: compression bytegroup level 3 per shard (1 threads): stored ";
  EXPECT_NE(console.find(line), std::string::npos) << console;
  EXPECT_NE(console.find(", decode "), std::string::npos) << console;
  EXPECT_EQ(restored[0].at("verified"), true) << restored[0].dump();
  EXPECT_EQ(restored[0].at("compression").at("stored_bytes"),
            written[0].at("compression").at("stored_bytes"));
  EXPECT_EQ(restored[0].at("compression").at("samples").at("decode_seconds").size(), 1u);

  const fs::path kept = written[0].at("checkpoint_dir").get<std::string>();
  const nlohmann::json piece = read_manifest(kept).at("tensors").at(1);
  const Outcome whole = ckptbench({"load", kept.string()});
  EXPECT_EQ(whole.exit_code, 2) << whole.describe();
  EXPECT_NE(whole.err.find("give --tp N to load the decoded TP slices"), std::string::npos)
      << whole.describe();

  flip_middle_byte(kept, piece);
  const fs::path campaign = dir.write("z.toml", text);
  const Outcome bad = ckptbench(
      {"run", campaign.string(), "--output", (dir / "bad").string(), "-q", "--phase", "restore"});
  EXPECT_EQ(bad.exit_code, 1) << bad.describe();
  const std::string named = named_piece(piece);
  EXPECT_NE(bad.err.find(named), std::string::npos) << bad.describe();
  EXPECT_NE(bad.err.find("damaged compressed piece"), std::string::npos) << bad.describe();
}

// The sanitizer jobs leave the two cases below to the plain suite (CI time): their codec and
// loader steps are the ones the cases above and the loader's own tests run under them.
TEST(CompressionRun, LoadReadsWholeFramesDecodesThemAndVerifiesTheSlices) {
  if (kSanitizedBuild) GTEST_SKIP() << "CI time: the plain suite runs it";
  const Scratch dir;
  const std::string text = compressed_campaign(dir, "compression = \"bytegroup\"\n");
  const std::vector<nlohmann::json> written = run_ok(dir, text, "checkpoint", "write");
  ASSERT_EQ(written.size(), 1u);
  const fs::path kept = written[0].at("checkpoint_dir").get<std::string>();
  // Inference TP 2 of the TP 1 checkpoint: slices of pieces, read as whole frames and decoded.
  const Outcome load = ckptbench({"load", kept.string(), "--tp", "2", "--no-drop-caches"});
  EXPECT_EQ(load.exit_code, 0) << load.describe();
  EXPECT_NE(load.out.find("verified"), std::string::npos) << load.describe();
  EXPECT_NE(load.out.find("decoded: "), std::string::npos) << load.describe();
  const fs::path campaign = dir.write("z.toml", text);
  const fs::path loads = dir / "out-load";
  const Outcome loaded =
      ckptbench({"run", campaign.string(), "--output", loads.string(), "--phase", "load", "--set",
                 "load.tp=2", "--set", R"(load.method=["pipelined","mmap","read"])"});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
  const std::vector<nlohmann::json> records = read_results(loads);
  ASSERT_EQ(records.size(), 3u);
  for (const nlohmann::json& r : records) {
    EXPECT_EQ(r.at("verified"), true) << r.dump();
    const nlohmann::json& z = r.at("compression");
    EXPECT_EQ(z.at("samples").at("decode_seconds").size(), 1u);
    EXPECT_GT(z.at("stored_bytes").get<std::uint64_t>(), 0u);
    EXPECT_LT(z.at("stored_bytes").get<std::uint64_t>(),
              z.at("logical_bytes").get<std::uint64_t>());
  }
  const nlohmann::json piece = read_manifest(kept).at("tensors").at(1);
  flip_middle_byte(kept, piece);
  const Outcome bad = ckptbench({"load", kept.string(), "--tp", "1", "--no-drop-caches"});
  EXPECT_NE(bad.exit_code, 0) << bad.describe();
  const std::string named = named_piece(piece);
  EXPECT_NE(bad.err.find(named), std::string::npos) << bad.describe();
}

TEST(CompressionRun, EveryEngineCompressesEachCheckpointAndItRestoresVerified) {
  if (kSanitizedBuild) GTEST_SKIP() << "CI time: the plain suite runs it";
  const Scratch dir;
  const std::string text = compressed_campaign(dir, R"(compression = "bytegroup"
[training]
iterations = 4
iteration_seconds = 0.01
checkpoint_every = 2
[engine]
name = ["sync", "async", "lazy"]
)");
  const std::vector<nlohmann::json> trained = run_ok(dir, text, "both", "both");
  ASSERT_EQ(trained.size(), 3u);
  for (const nlohmann::json& r : trained) {
    SCOPED_TRACE(r.at("case").dump());
    EXPECT_EQ(r.at("status"), "ok") << r.at("error");
    EXPECT_EQ(r.at("verified"), true);
    const nlohmann::json& z = r.at("compression");
    const nlohmann::json& checkpoints = r.at("training").at("checkpoints");
    ASSERT_EQ(checkpoints.size(), 2u);
    const nlohmann::json& encodes = z.at("samples").at("encode_seconds");
    ASSERT_EQ(encodes.size(), 2u);  // one per committed checkpoint
    EXPECT_EQ(z.at("samples").at("decode_seconds").size(), 1u);
    EXPECT_LT(z.at("stored_bytes").get<std::uint64_t>(),
              z.at("logical_bytes").get<std::uint64_t>());
    const bool sync = r.at("training").at("engine") == "sync";
    for (std::size_t i = 0; i < 2; ++i) {
      const nlohmann::json& c = checkpoints.at(i);
      const auto encode = encodes.at(i).get<double>();
      EXPECT_TRUE(c.at("committed").get<bool>());
      // sync compresses inside the stall; every engine before the checkpoint is durable.
      if (sync) {
        EXPECT_GE(c.at("stall_seconds").get<double>(), encode);
      }
      EXPECT_GE(c.at("time_to_durable_seconds").get<double>(), encode);
      EXPECT_GE(c.at("flush_seconds").get<double>(), encode);
    }
    const fs::path kept = kept_checkpoint(dir, r.at("case_index").get<int>());
    EXPECT_EQ(read_manifest(kept).at("training_iteration"), 3);
    EXPECT_EQ(manifest_file_bytes(kept), z.at("stored_bytes").get<std::uint64_t>());
  }
  const std::vector<nlohmann::json> restored = run_ok(dir, text, "restore", "restore");
  ASSERT_EQ(restored.size(), 3u);
  for (const nlohmann::json& r : restored) {
    EXPECT_EQ(r.at("verified"), true) << r.dump();
    EXPECT_EQ(
        r.at("compression").at("stored_bytes"),
        trained.at(r.at("case_index").get<std::size_t>()).at("compression").at("stored_bytes"));
  }
}

}  // namespace
}  // namespace ckpt::integration
