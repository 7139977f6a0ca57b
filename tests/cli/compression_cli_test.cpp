// strategy.compression end to end: `ckptbench run` writes each piece as frames, the manifest
// records stored and logical bytes, the files hold exactly the frames, and the restore (in the same
// run and in another invocation) decompresses and verifies every byte; a flipped byte of a frame
// fails the restore, naming the file and the tensor; the ckptbench load command refuses the frames.
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

// Bytes of the checkpoint's data files: every file the manifest lists.
std::uint64_t data_file_bytes(const fs::path& kept) {
  std::uint64_t bytes = 0;
  const nlohmann::json manifest = read_manifest(kept);
  for (const nlohmann::json& f : manifest.at("files"))
    bytes += fs::file_size(kept / f.at("path").get<std::string>());
  return bytes;
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
    EXPECT_EQ(data_file_bytes(kept), z.at("stored_bytes").get<std::uint64_t>());
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
  const std::string file = piece.at("file").get<std::string>();
  const auto offset = piece.at("file_offset").get<std::uint64_t>();
  const Outcome load = ckptbench({"load", kept.string(), "--tp", "1"});
  EXPECT_EQ(load.exit_code, 2) << load.describe();
  EXPECT_NE(load.err.find("compressed (strategy.compression = \"bytegroup\")"), std::string::npos)
      << load.describe();

  {  // one byte in the middle of the piece's frames, flipped
    const auto at =
        static_cast<std::streamoff>(offset + piece.at("stored_bytes").get<std::uint64_t>() / 2);
    std::fstream f(kept / file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at);
    const char old = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(old ^ 0x5a));
  }
  const fs::path campaign = dir.write("z.toml", text);
  const Outcome bad = ckptbench(
      {"run", campaign.string(), "--output", (dir / "bad").string(), "-q", "--phase", "restore"});
  EXPECT_EQ(bad.exit_code, 1) << bad.describe();
  const std::string named = file + " at byte " + std::to_string(offset) + ": tensor " +
                            piece.at("name").get<std::string>();
  EXPECT_NE(bad.err.find(named), std::string::npos) << bad.describe();
  EXPECT_NE(bad.err.find("damaged compressed piece"), std::string::npos) << bad.describe();
}

}  // namespace
}  // namespace ckpt::integration
