// strategy.delta_every end to end: `ckptbench run --phase checkpoint` writes a full checkpoint and
// then checkpoints of only the blocks the emulated update changed since it, keeping the base while
// a newer one needs it; the manifest lists every piece at the base with its changed runs; `--phase
// restore` of the fifth of the chain reads the base whole plus those runs, verifies every byte of
// the fifth step's state and reports the amplification, and `ckptbench report` shows it; a restore
// whose base is missing or cut short is refused (exit 2) naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The tiny model's full state, a chain of five: one full checkpoint and four deltas of 4 KiB
// blocks, a quarter of them changed per step.
std::string delta_campaign(const Scratch& dir) {
  return tiny_full_state_campaign(dir, "d", 5, 0,
                                  "[strategy]\ndelta_every = 5\ndelta_block_bytes = 4096\n"
                                  "delta_changed_fraction = 0.25\n");
}

Outcome run_delta_phase(const Scratch& dir, const std::string& text, const std::string& phase) {
  return run_campaign_phase(dir, "d.toml", text, phase);
}

TEST(DeltaRun, TheFifthOfAChainRestoresFromItsBaseAndItsRunsVerified) {
  const Scratch dir;
  const std::string text = delta_campaign(dir);
  const Outcome written = run_delta_phase(dir, text, "checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const nlohmann::json record = read_results(dir / "out-checkpoint").at(0);
  const nlohmann::json& z = record.at("selective");
  const std::uint64_t full = record.at("bytes_per_checkpoint");
  // The intermediate deltas went as the next was kept; the base stays while the fifth needs it.
  const std::vector<fs::path> kept = complete_checkpoints(dir / "target" / "d" / "case-0000");
  ASSERT_EQ(kept.size(), 2u);
  const std::string base = kept[0].filename().string(), fifth = kept[1].filename().string();
  EXPECT_EQ(z.at("delta_every"), 5);
  EXPECT_EQ(z.at("samples").at("chain_length"), nlohmann::json({1, 2, 3, 4, 5}));
  EXPECT_EQ(z.at("samples").at("oldest_needed"), nlohmann::json({base, base, base, base, base}));
  const std::vector<std::uint64_t> bytes = z.at("samples").at("written_bytes");
  ASSERT_EQ(bytes.size(), 5u);
  EXPECT_EQ(bytes[0], full);
  // Differential: each delta holds every block changed since the base, so none shrinks.
  for (std::size_t k = 1; k < 5; ++k) {
    EXPECT_GT(bytes[k], 0u) << k;
    EXPECT_LT(bytes[k], full) << k;
    if (k > 1) {
      EXPECT_GE(bytes[k], bytes[k - 1]) << k;
    }
  }
  bool at_base = false;
  EXPECT_EQ(delta_run_bytes(read_manifest(kept[1]), base, at_base), bytes[4]);
  EXPECT_TRUE(at_base);

  const nlohmann::json read = verified_restore(dir, "d.toml", text);
  const nlohmann::json& r = read.at("selective").at("restore");
  EXPECT_EQ(r.at("checkpoint"), fifth);
  EXPECT_EQ(r.at("read_from"), nlohmann::json({base}));
  EXPECT_EQ(r.at("chain_length"), 5);
  EXPECT_EQ(r.at("read_bytes"), full + bytes[4]);
  EXPECT_DOUBLE_EQ(r.at("amplification").get<double>(),
                   static_cast<double>(full + bytes[4]) / static_cast<double>(full));
  const Outcome report = ckptbench({"report", run_directory(dir / "out-restore").string()});
  ASSERT_EQ(report.exit_code, 0) << report.describe();
  EXPECT_NE(report.out.find("delta, full every 5"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find(fifth + " + " + base), std::string::npos) << report.out;

  // The base cut short, then gone: refused before any read, naming it.
  const fs::path data =
      kept[0] / read_manifest(kept[0]).at("files").at(0).at("path").get<std::string>();
  fs::resize_file(data, fs::file_size(data) - 1);
  Outcome o = run_delta_phase(dir, text, "restore");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_NE(o.err.find("needs earlier checkpoint " + kept[0].string()), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(a delta checkpoint)"), std::string::npos) << o.err;
  fs::remove_all(kept[0]);
  o = run_delta_phase(dir, text, "restore");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_NE(o.err.find("needs earlier checkpoint " + kept[0].string()), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("it is missing"), std::string::npos) << o.err;
}

// A chain of three (a base and two deltas of 4 KiB blocks, a quarter changed per step) of the
// tiny model's full state, with the campaign tables `tables` and more [strategy] keys `strategy`.
std::string chain_of_three(const Scratch& dir, const std::string& tables,
                           const std::string& strategy) {
  return tiny_full_state_campaign(dir, "d", 3, 0,
                                  tables +
                                      "[strategy]\ndelta_every = 3\ndelta_block_bytes = 4096\n"
                                      "delta_changed_fraction = 0.25\n" +
                                      strategy);
}

// Sum of a manifest's recorded sizes: each entry's `stored_bytes` (own pieces only), or each of
// its changed runs' frames (the fourth element of a run).
std::uint64_t framed_bytes(const nlohmann::json& manifest, bool runs) {
  std::uint64_t bytes = 0;
  for (const nlohmann::json& t : manifest.at("tensors")) {
    if (!runs && !t.contains("checkpoint")) bytes += t.at("stored_bytes").get<std::uint64_t>();
    if (!runs || !t.contains("delta")) continue;
    for (const nlohmann::json& run : t.at("delta").at("runs")) {
      EXPECT_EQ(run.size(), 4u) << run.dump();
      bytes += run.at(3).get<std::uint64_t>();
    }
  }
  return bytes;
}

TEST(DeltaRun, CompressedRunsAreFramesOfTheirOwnAndRestoreVerified) {
  const Scratch dir;
  const std::string text =
      chain_of_three(dir, "[data]\npattern = \"trained\"\n", "compression = \"zstd\"\n");
  const Outcome written = run_delta_phase(dir, text, "checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const nlohmann::json record = read_results(dir / "out-checkpoint").at(0);
  ASSERT_EQ(record.at("status"), "ok") << record.at("error");
  const std::vector<fs::path> kept = complete_checkpoints(dir / "target" / "d" / "case-0000");
  ASSERT_EQ(kept.size(), 2u);
  const std::uint64_t full = record.at("bytes_per_checkpoint");
  const std::vector<std::uint64_t> bytes = record.at("selective").at("samples").at("written_bytes");
  ASSERT_EQ(bytes.size(), 3u);
  // The base: the whole state's frames; the newest: its changed runs' frames, all on disk.
  EXPECT_EQ(bytes[0], framed_bytes(read_manifest(kept[0]), false));
  EXPECT_EQ(bytes[0], manifest_file_bytes(kept[0]));
  EXPECT_EQ(bytes[2], framed_bytes(read_manifest(kept[1]), true));
  EXPECT_EQ(bytes[2], manifest_file_bytes(kept[1]));
  bool at_base = false;
  const std::uint64_t raw_runs =
      delta_run_bytes(read_manifest(kept[1]), kept[0].filename(), at_base);
  EXPECT_TRUE(at_base);
  EXPECT_LT(bytes[2], raw_runs);  // trained values compress
  EXPECT_LT(bytes[0], full);

  const nlohmann::json read = verified_restore(dir, "d.toml", text);
  const nlohmann::json& r = read.at("selective").at("restore");
  EXPECT_EQ(r.at("chain_length"), 3);
  EXPECT_EQ(r.at("read_bytes"), bytes[0] + bytes[2]);
  EXPECT_DOUBLE_EQ(r.at("amplification").get<double>(),
                   static_cast<double>(bytes[0] + bytes[2]) / static_cast<double>(full));
}

TEST(DeltaRun, AChainWrittenUnderTp2RestoresIntoTp1FromBaseAndRunsVerified) {
  const Scratch dir;
  const std::string text = chain_of_three(dir, "[parallel]\ntp = 2\n", "");
  ASSERT_EQ(run_delta_phase(dir, text, "checkpoint").exit_code, 0);
  const nlohmann::json record = read_results(dir / "out-checkpoint").at(0);
  const std::vector<fs::path> kept = complete_checkpoints(dir / "target" / "d" / "case-0000");
  ASSERT_EQ(kept.size(), 2u);
  const std::uint64_t full = record.at("bytes_per_checkpoint");
  bool at_base = false;
  const std::uint64_t runs = delta_run_bytes(read_manifest(kept[1]), kept[0].filename(), at_base);
  EXPECT_GT(runs, 0u);
  // Each new TP 1 piece is the two TP 2 pieces of its tensor, each with the runs over them.
  const std::string tp1 = text + "[restore]\ntp = 1\n";
  const nlohmann::json read = verified_restore(dir, "d.toml", tp1);
  EXPECT_EQ(read.at("reshard").at("bytes_needed"), full) << read.at("reshard").dump();
  const nlohmann::json& r = read.at("selective").at("restore");
  EXPECT_EQ(r.at("chain_length"), 3);
  EXPECT_EQ(r.at("read_bytes"), full + runs);
}

}  // namespace
}  // namespace ckpt::integration
