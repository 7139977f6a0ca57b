// `ckptbench run` end to end, as a user runs it: under mpirun, checkpoint and restore in
// separate processes, corrupted, missing and incomplete checkpoints, --dry-run, and campaign
// typos. Failure paths (disk full, budgets, targets, signals, dying ranks) are in the DiskFull,
// RunSetupErrors, RunSignals and RunUnderMpirun tests.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST(RunUnderMpirun, FourProcessesEmulateEightRanksWithEveryMapping) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Scratch dir;
  const std::vector<std::string> mappings{"file_per_rank", "file_per_tensor", "file_per_node",
                                          "shared_file"};
  const fs::path campaign =
      dir.write("mpi.toml", campaign_toml("mpi-mappings", dir / "target", R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 2048
[parallel]
tp = 2
dp = 4
zero = 1
[state]
scope = "full"
[strategy]
mapping = ["file_per_rank", "file_per_tensor", "file_per_node", "shared_file"]
[cache]
policy = "none"
)"));
  const std::uint64_t expected_bytes = scaled_checkpoint_bytes(
      {"--model", "llama3-8b", "--tp", "2", "--dp", "4", "--zero", "1", "--state", "full"}, 8,
      2048);
  ASSERT_GT(expected_bytes, 0u);

  const fs::path output = dir / "results";
  std::vector<std::string> args = mpirun_args(*mpirun, 4);
  args.insert(args.end(), {kBinary, "run", campaign.string(), "--output", output.string()});
  const Outcome o = run_process(args, std::chrono::seconds(180));
  ASSERT_EQ(o.exit_code, 0) << o.describe();

  const auto results = read_results(output);
  ASSERT_EQ(results.size(), mappings.size()) << o.describe();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": status " + r.at("status").dump() + ", error " +
                 r.at("error").dump());
    EXPECT_EQ(r.at("case_index").get<std::size_t>(), i);
    EXPECT_EQ(r.at("strategy"), mappings[i]);
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_EQ(r.at("ranks").get<int>(), 4);
    EXPECT_EQ(r.at("modeled_ranks").get<int>(), 8);
    EXPECT_EQ(r.at("world_size").get<int>(), 8);
    EXPECT_EQ(r.at("verified"), true);
    EXPECT_EQ(r.at("bytes_per_checkpoint").get<std::uint64_t>(), expected_bytes);
    ASSERT_TRUE(r.at("write_gib_per_s").is_number());
    ASSERT_TRUE(r.at("read_gib_per_s").is_number());
    EXPECT_GT(r.at("write_gib_per_s").get<double>(), 0);
    EXPECT_GT(r.at("read_gib_per_s").get<double>(), 0);
  }

  const auto csv = lines_of(read_text(run_directory(output) / "results.csv"));
  ASSERT_EQ(csv.size(), 1 + mappings.size()) << read_text(run_directory(output) / "results.csv");
  EXPECT_EQ(csv[0].rfind("campaign,case_index,", 0), 0u) << csv[0];
  for (std::size_t i = 0; i < mappings.size(); ++i) {
    EXPECT_EQ(csv[1 + i].rfind("mpi-mappings," + std::to_string(i) + ",", 0), 0u) << csv[1 + i];
    EXPECT_TRUE(contains(csv[1 + i], "," + mappings[i] + ",")) << csv[1 + i];
  }
}

// One case of Llama 3 8B weights scaled 1024× (15 MiB), one file per tensor, kept by
// --phase checkpoint under a fresh target.
class KeptCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    campaign_ = dir_.write("phases.toml", campaign_toml("phases", target_, R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
[state]
scope = "weights"
[strategy]
mapping = "file_per_tensor"
[cache]
policy = "none"
)"));
  }

  // `ckptbench run` of the campaign with `--phase phase` into a fresh --output directory.
  Outcome run(const std::string& phase) {
    output_ = dir_ / ("results-" + std::to_string(runs_++));
    return ckptbench({"run", campaign_.string(), "--phase", phase, "--output", output_.string()});
  }

  // Writes and keeps a checkpoint; returns its directory (named by `latest`).
  fs::path checkpoint() {
    const Outcome o = run("checkpoint");
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    const fs::path kept = latest_checkpoint(case_dir_);
    EXPECT_FALSE(kept.empty()) << "no `latest` in " << case_dir_ << "\n" << o.describe();
    EXPECT_TRUE(fs::is_regular_file(kept / kManifest)) << kept;
    return kept;
  }

  // A tensor of the manifest with at least two bytes, from the middle of the list.
  static nlohmann::json some_tensor(const nlohmann::json& manifest) {
    std::vector<nlohmann::json> candidates;
    for (const auto& t : manifest.at("tensors")) {
      if (t.at("bytes").get<std::uint64_t>() >= 2) candidates.push_back(t);
    }
    if (candidates.empty()) return nullptr;
    return candidates[candidates.size() / 2];
  }

  Scratch dir_;
  fs::path target_ = dir_ / "target";
  fs::path case_dir_ = target_ / "phases" / "case-0000";
  fs::path campaign_;
  fs::path output_;
  int runs_ = 0;
};

TEST_F(KeptCheckpoint, CheckpointAndRestoreInSeparateProcesses) {
  const Outcome write = run("checkpoint");
  ASSERT_EQ(write.exit_code, 0) << write.describe();
  const auto written = read_results(output_);
  ASSERT_EQ(written.size(), 1u) << write.describe();
  EXPECT_EQ(written[0].at("status"), "ok");
  EXPECT_EQ(written[0].at("verified"), false);  // nothing was read back yet
  ASSERT_TRUE(written[0].at("write_gib_per_s").is_number()) << written[0].dump();
  EXPECT_GT(written[0].at("write_gib_per_s").get<double>(), 0);
  EXPECT_TRUE(written[0].at("read_gib_per_s").is_null());

  // Before the restore: `latest` names a directory that holds the manifest and its files.
  const fs::path kept = latest_checkpoint(case_dir_);
  ASSERT_FALSE(kept.empty()) << "no `latest` in " << case_dir_;
  ASSERT_TRUE(fs::is_regular_file(kept / kManifest)) << kept;
  EXPECT_EQ(written[0].at("checkpoint_dir"), kept.string());
  const auto manifest = read_manifest(kept);
  ASSERT_FALSE(manifest.at("files").empty());
  for (const auto& f : manifest.at("files")) {
    const fs::path file = kept / f.at("path").get<std::string>();
    ASSERT_TRUE(fs::is_regular_file(file)) << file;
    EXPECT_GE(fs::file_size(file), f.at("min_size").get<std::uint64_t>()) << file;
  }

  const Outcome read = run("restore");
  ASSERT_EQ(read.exit_code, 0) << read.describe();
  const auto restored = read_results(output_);
  ASSERT_EQ(restored.size(), 1u) << read.describe();
  EXPECT_EQ(restored[0].at("status"), "ok");
  EXPECT_EQ(restored[0].at("verified"), true);
  ASSERT_TRUE(restored[0].at("read_gib_per_s").is_number()) << restored[0].dump();
  EXPECT_GT(restored[0].at("read_gib_per_s").get<double>(), 0);
  EXPECT_TRUE(restored[0].at("write_gib_per_s").is_null());
  EXPECT_EQ(restored[0].at("checkpoint_dir"), kept.string());
  EXPECT_EQ(restored[0].at("bytes_per_checkpoint"), written[0].at("bytes_per_checkpoint"));
  EXPECT_TRUE(fs::is_regular_file(kept / kManifest))
      << "a restore must leave the checkpoint in place";
}

TEST_F(KeptCheckpoint, FlippedByteFailsVerificationNamingTheTensor) {
  const fs::path kept = checkpoint();
  ASSERT_FALSE(kept.empty());
  const auto tensor = some_tensor(read_manifest(kept));
  ASSERT_FALSE(tensor.is_null());
  const fs::path file = kept / tensor.at("file").get<std::string>();
  const auto offset =
      static_cast<std::streamoff>(tensor.at("file_offset").get<std::uint64_t>() + 1);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << file;
    f.seekg(offset);
    char byte = 0;
    ASSERT_TRUE(f.get(byte)) << file << " offset " << offset;
    f.seekp(offset);
    f.put(static_cast<char>(byte ^ 0x5a));
    ASSERT_TRUE(f.flush()) << file;
  }

  const Outcome o = run("restore");
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  const std::string name = tensor.at("name").get<std::string>();
  EXPECT_TRUE(contains(o.err, "verification failed")) << o.describe();
  EXPECT_TRUE(contains(o.err, "tensor " + name + " ")) << "expected `tensor " << name << "`\n"
                                                       << o.describe();
  const auto results = read_results(output_);
  ASSERT_EQ(results.size(), 1u) << o.describe();
  EXPECT_EQ(results[0].at("status"), "failed");
  EXPECT_EQ(results[0].at("verified"), false);
}

// What results/SCHEMA.md promises users: a shard's checksum is the hex of XXH3_64 over its
// bytes in the file (Python: xxhash.xxh3_64_hexdigest), checked here with libxxhash itself.
TEST_F(KeptCheckpoint, ShardChecksumsAreXxh3OfTheirBytesInTheFile) {
  const fs::path kept = checkpoint();
  ASSERT_FALSE(kept.empty());
  const auto manifest = read_manifest(kept);
  EXPECT_EQ(manifest.at("checksum_algorithm"), "xxh3_64");
  ASSERT_GT(manifest.at("tensors").size(), 100u);
  for (const auto& t : manifest.at("tensors")) {
    const fs::path file = kept / t.at("file").get<std::string>();
    std::string bytes(t.at("bytes").get<std::size_t>(), '\0');
    std::ifstream in(file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(t.at("file_offset").get<std::uint64_t>()));
    ASSERT_TRUE(in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) << file;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
    EXPECT_EQ(t.at("checksum").get<std::string>(), hex) << t.at("name") << " in " << file;
  }
}

TEST_F(KeptCheckpoint, ManifestWithoutChecksumAlgorithmIsRefusedByName) {
  const fs::path kept = checkpoint();
  ASSERT_FALSE(kept.empty());
  nlohmann::json manifest = read_manifest(kept);
  manifest.erase("checksum_algorithm");  // as an older ckptbench wrote it
  manifest["version"] = 1;
  std::ofstream(kept / kManifest, std::ios::binary | std::ios::trunc) << manifest.dump();

  const Outcome o = run("restore");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, (kept / kManifest).string() + ": manifest version 1 has no `checksum_algorithm`"))
      << o.describe();
  EXPECT_TRUE(contains(o.err, "write the checkpoint again")) << o.describe();
  EXPECT_FALSE(contains(o.err, "different model")) << "not a configuration mismatch\n"
                                                   << o.describe();
}

TEST_F(KeptCheckpoint, MissingDataFileFailsTheRestoreNamingThePath) {
  const fs::path kept = checkpoint();
  ASSERT_FALSE(kept.empty());
  const auto tensor = some_tensor(read_manifest(kept));
  ASSERT_FALSE(tensor.is_null());
  const fs::path file = kept / tensor.at("file").get<std::string>();
  ASSERT_TRUE(fs::remove(file)) << file;

  const Outcome o = run("restore");
  EXPECT_NE(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(o.exited()) << o.describe();
  EXPECT_TRUE(contains(o.err, file.string())) << "expected the missing file " << file << "\n"
                                              << o.describe();
  for (const auto& r : read_results(output_)) EXPECT_NE(r.at("status"), "ok") << r.dump();
}

TEST_F(KeptCheckpoint, CheckpointWithoutManifestIsIncomplete) {
  const fs::path kept = checkpoint();
  ASSERT_FALSE(kept.empty());
  ASSERT_TRUE(fs::remove(kept / kManifest));

  const Outcome o = run("restore");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "incomplete")) << o.describe();
  EXPECT_TRUE(contains(o.err, kept.string())) << o.describe();
}

TEST(RunDryRun, PrintsOneRowPerCaseAndCreatesNothing) {
  Scratch dir;
  const fs::path target = dir / "target";
  const std::vector<std::string> mappings{"file_per_rank", "file_per_tensor", "shared_file"};
  const fs::path campaign =
      dir.write("dry.toml", campaign_toml("dry", target, R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
[parallel]
dp = 2
zero = 1
[strategy]
mapping = ["file_per_rank", "file_per_tensor", "shared_file"]
)"));
  const Outcome o =
      ckptbench({"run", campaign.string(), "--dry-run", "--output", (dir / "results").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();

  std::vector<std::string> rows;
  for (const std::string& line : lines_of(o.out)) {
    std::stringstream words(line);
    std::string first;
    words >> first;
    if (!first.empty() && first.find_first_not_of("0123456789") == std::string::npos)
      rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), mappings.size()) << o.describe();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::stringstream words(rows[i]);
    std::size_t index = 99;
    int ranks = 0;
    words >> index >> ranks;
    EXPECT_EQ(index, i) << rows[i];
    EXPECT_EQ(ranks, 2) << rows[i];
    EXPECT_TRUE(contains(rows[i], "strategy.mapping=" + mappings[i])) << rows[i];
  }
  EXPECT_FALSE(fs::exists(target)) << "--dry-run created the target " << target;
}

TEST(RunCampaignErrors, UnknownKeyNamesFileLineAndTheClosestKey) {
  Scratch dir;
  const fs::path target = dir / "target";
  const std::string text = campaign_toml("typo", target, R"(create_target = true
[model]
name = "llama3-8b"
scale = 1024
[backend]
thread = 4
)");
  const fs::path campaign = dir.write("typo.toml", text);
  int line = 1;
  for (std::size_t i = 0; i < text.find("thread = 4"); ++i) line += text[i] == '\n' ? 1 : 0;

  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "results").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, campaign.string() + ":" + std::to_string(line)))
      << "expected line " << line << "\n"
      << o.describe();
  EXPECT_TRUE(contains(o.err, "backend.thread")) << o.describe();
  EXPECT_TRUE(contains(o.err, "did you mean `threads`")) << o.describe();
  EXPECT_FALSE(fs::exists(target));
}

}  // namespace
}  // namespace ckpt::integration
