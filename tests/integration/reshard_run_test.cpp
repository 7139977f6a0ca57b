// Resharding restore end to end ([restore]): a full training-state checkpoint written by 4 MPI
// processes under TP 4 × PP 2 is restored under TP 2 × PP 2 × DP 2 with ZeRO-1 (the optimizer
// state re-partitioned over another DP) by 2 processes, and under TP 8 (another vocabulary
// padding) by 3, and under TP 1 by 4 (two of which read nothing); all verify every byte. A flipped
// byte is found after resharding and named by tensor and global index; what cannot be resharded is
// refused naming the keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A small Llama: vocabulary 1100 pads to 1280 rows at TP 2, 1536 at TP 4, 2048 at TP 8;
// model.scale = 4 divides every leading dimension of every slice, so all layouts below shrink
// exactly. Embedding and output layer rows hold 256 elements of 14 bytes (full state).
constexpr std::uint64_t kPaddingRowBytes = 2 * 256 * 14;
constexpr const char* kReshardModel = R"(name = "reshard-llama"
hidden_size = 256
intermediate_size = 512
num_hidden_layers = 8
num_attention_heads = 8
num_key_value_heads = 8
vocab_size = 1100
tie_word_embeddings = false
)";

class ReshardRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
    mpirun_ = find_mpirun();
    model_ = dir_.write("reshard-llama.toml", kReshardModel);
  }

  fs::path campaign(const std::string& name, const std::string& restore) {
    return dir_.write(name + ".toml", campaign_toml(name, dir_ / "target", R"(create_target = true
keep = true
iterations = 1
warmup = 0
[model]
name = ")" + model_.string() + R"("
scale = 4
[parallel]
tp = 4
pp = 2
[state]
scope = "full"
[cache]
policy = "none"
)" + restore));
  }

  Outcome run(int processes, const fs::path& file, const fs::path& output,
              const std::string& phase) {
    std::vector<std::string> args = mpirun_args(*mpirun_, processes);
    args.insert(args.end(),
                {kBinary, "run", file.string(), "--output", output.string(), "--phase", phase});
    return run_process(args, std::chrono::seconds(240));
  }

  // Writes the checkpoint with 4 processes; returns its directory.
  fs::path write_checkpoint() {
    const Outcome written = run(4, campaign("reshard", ""), dir_ / "written", "checkpoint");
    EXPECT_EQ(written.exit_code, 0) << written.describe();
    const auto results = read_results(dir_ / "written");
    if (results.empty()) return {};
    return results.at(0).at("checkpoint_dir").get<std::string>();
  }

  Scratch dir_;
  fs::path model_;
  std::optional<std::string> mpirun_;
};

TEST_F(ReshardRun, FourWritersRestoreVerifiedOnTwoAndThreeProcessesUnderOtherLayouts) {
  ASSERT_FALSE(write_checkpoint().empty());
  const auto written = read_results(dir_ / "written").at(0);
  const auto checkpoint_bytes = written.at("bytes_per_checkpoint").get<std::uint64_t>();

  // TP 2 × PP 2 × DP 2, ZeRO-1: every byte of the checkpoint but the TP 4 padding rows
  // 1280..1535 (/ 4) is needed once and read once.
  const Outcome two =
      run(2, campaign("reshard", "[restore]\ntp = 2\ndp = 2\nzero = 1\n"), dir_ / "two", "restore");
  ASSERT_EQ(two.exit_code, 0) << two.describe();
  const auto r2 = read_results(dir_ / "two").at(0);
  EXPECT_EQ(r2.at("status"), "ok") << r2.at("error");
  EXPECT_EQ(r2.at("verified"), true);
  EXPECT_EQ(r2.at("ranks").get<int>(), 2);
  EXPECT_EQ(r2.at("modeled_ranks").get<int>(), 8);
  const auto& s2 = r2.at("reshard");
  EXPECT_EQ(s2.at("bytes_needed").get<std::uint64_t>(),
            checkpoint_bytes - (1536 - 1280) / 4 * kPaddingRowBytes);
  EXPECT_EQ(s2.at("bytes_read").get<std::uint64_t>(), s2.at("bytes_needed").get<std::uint64_t>());
  EXPECT_EQ(s2.at("padding_bytes").get<std::uint64_t>(), 0u);
  EXPECT_EQ(s2.at("from"), "TP4×PP2×DP1");
  EXPECT_EQ(s2.at("to"), "TP2×PP2×DP2 ZeRO-1");
  EXPECT_TRUE(contains(two.out, "restore TP2×PP2×DP2 ZeRO-1 from TP4×PP2×DP1, read exact"))
      << two.out;

  // TP 8 × PP 1 on 3 processes, whole stored items then narrowed: more read than needed; the
  // vocabulary pads further at TP 8 (1536 -> 2048 rows / 4), and those rows are not read.
  const Outcome three =
      run(3, campaign("reshard", "[restore]\ntp = 8\npp = 1\nread = \"whole_items\"\n"),
          dir_ / "three", "restore");
  ASSERT_EQ(three.exit_code, 0) << three.describe();
  const auto r3 = read_results(dir_ / "three").at(0);
  EXPECT_EQ(r3.at("status"), "ok") << r3.at("error");
  EXPECT_EQ(r3.at("verified"), true);
  EXPECT_EQ(r3.at("ranks").get<int>(), 3);
  const auto& s3 = r3.at("reshard");
  EXPECT_EQ(s3.at("bytes_needed").get<std::uint64_t>(), checkpoint_bytes);
  EXPECT_EQ(s3.at("read"), "whole_items");
  EXPECT_GT(s3.at("bytes_read").get<std::uint64_t>(), checkpoint_bytes);
  EXPECT_EQ(s3.at("padding_bytes").get<std::uint64_t>(), (2048 - 1536) / 4 * kPaddingRowBytes);
  EXPECT_EQ(r3.at("bytes_per_checkpoint").get<std::uint64_t>(), checkpoint_bytes);
}

// DCP's reader in the writer's layout: restore.read = "whole_items" reads every item's whole
// torch.save archive (strategy.framing), so the restore reads every byte of every .distcp file.
TEST_F(ReshardRun, WholeItemsInTheWritersLayoutReadEveryByteOfTheDistcpFiles) {
  const fs::path step = write_checkpoint();
  ASSERT_FALSE(step.empty());
  std::uint64_t files = 0;
  for (const auto& entry : fs::directory_iterator(step)) {
    if (entry.path().extension() == ".distcp") files += fs::file_size(entry.path());
  }
  const auto written = read_results(dir_ / "written").at(0);
  EXPECT_GT(files, written.at("bytes_per_checkpoint").get<std::uint64_t>());
  const Outcome whole =
      run(2, campaign("reshard", "[restore]\nread = \"whole_items\"\n"), dir_ / "whole", "restore");
  ASSERT_EQ(whole.exit_code, 0) << whole.describe();
  const auto r = read_results(dir_ / "whole").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("reshard").at("bytes_read").get<std::uint64_t>(), files);
  EXPECT_EQ(r.at("reshard").at("bytes_needed"), written.at("bytes_per_checkpoint"));
}

// More processes than ranks of the restore's layout: TP 1 × PP 2 has 2 ranks, and of 4 processes
// two read none. Those take part in every collective with nothing to read, copy or verify; the
// other two read every needed byte once and verify it.
TEST_F(ReshardRun, ProcessesWithoutARankOfTheRestoresLayoutReadNothingAndTheOthersVerify) {
  ASSERT_FALSE(write_checkpoint().empty());
  const auto checkpoint_bytes =
      read_results(dir_ / "written").at(0).at("bytes_per_checkpoint").get<std::uint64_t>();
  const Outcome four = run(4, campaign("reshard", "[restore]\ntp = 1\n"), dir_ / "four", "restore");
  ASSERT_EQ(four.exit_code, 0) << four.describe();
  const auto r = read_results(dir_ / "four").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("ranks").get<int>(), 4);
  EXPECT_EQ(r.at("modeled_ranks").get<int>(), 8);  // the checkpoint's: TP 4 × PP 2
  const auto& s = r.at("reshard");
  EXPECT_EQ(s.at("to"), "TP1×PP2×DP1");
  // TP 1 pads the vocabulary to 1152 rows, TP 4 stored 1536 (/ 4): the rows between are not needed.
  EXPECT_EQ(s.at("bytes_needed").get<std::uint64_t>(),
            checkpoint_bytes - (1536 - 1152) / 4 * kPaddingRowBytes);
  EXPECT_EQ(s.at("bytes_read").get<std::uint64_t>(), s.at("bytes_needed").get<std::uint64_t>());
}

TEST_F(ReshardRun, DirectReadsAndGapCoalescingVerifyWithTheirBytesCounted) {
  // Written and restored with O_DIRECT (4096-byte blocks); TP 4 -> TP 8 × PP 1 on 2 processes.
  const std::string direct = "[backend]\ndirect = true\n";
  const Outcome written = run(4, campaign("direct", direct), dir_ / "written", "checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const auto plain_outcome =
      run(2, campaign("direct", direct + "[restore]\ntp = 8\npp = 1\n"), dir_ / "plain", "restore");
  ASSERT_EQ(plain_outcome.exit_code, 0) << plain_outcome.describe();
  const auto plain = read_results(dir_ / "plain").at(0);
  EXPECT_EQ(plain.at("status"), "ok") << plain.at("error");
  EXPECT_EQ(plain.at("verified"), true);
  const auto& p = plain.at("reshard");
  const auto needed = p.at("bytes_needed").get<std::uint64_t>();
  const auto read = p.at("bytes_read").get<std::uint64_t>();
  const auto requests = p.at("requests").get<std::uint64_t>();
  EXPECT_EQ(p.at("direct_alignment").get<std::uint64_t>(), 4096u);
  EXPECT_EQ(read % 4096, 0u) << "every request is whole blocks";
  EXPECT_GE(read, needed);
  EXPECT_LT(read, needed + requests * 2 * 4096)
      << "each request grows by less than a block at either end";
  EXPECT_GT(p.at("copied_bytes").get<std::uint64_t>(), 0u);

  // Bridging every gap of the strided row-parallel halves: fewer requests; under O_DIRECT also
  // fewer bytes, as each half row no longer costs its own whole blocks.
  const auto gap_outcome =
      run(2, campaign("direct", direct + "[restore]\ntp = 8\npp = 1\ngap_bytes = \"1 MiB\"\n"),
          dir_ / "gap", "restore");
  ASSERT_EQ(gap_outcome.exit_code, 0) << gap_outcome.describe();
  const auto gap = read_results(dir_ / "gap").at(0);
  EXPECT_EQ(gap.at("status"), "ok") << gap.at("error");
  EXPECT_EQ(gap.at("verified"), true);
  const auto& g = gap.at("reshard");
  EXPECT_EQ(g.at("bytes_needed").get<std::uint64_t>(), needed);
  EXPECT_EQ(g.at("gap_bytes").get<std::uint64_t>(), 1u << 20);
  EXPECT_LT(g.at("requests").get<std::uint64_t>(), requests);
  EXPECT_LT(g.at("bytes_read").get<std::uint64_t>(), read);
  EXPECT_GE(g.at("bytes_read").get<std::uint64_t>(), needed);
  EXPECT_EQ(g.at("bytes_read").get<std::uint64_t>() % 4096, 0u);
}

TEST_F(ReshardRun, FlippedByteIsNamedByTensorAndGlobalIndexAfterResharding) {
  const fs::path kept = write_checkpoint();
  ASSERT_FALSE(kept.empty());
  const auto manifest = read_manifest(kept);
  // A row-parallel weight of the last layer (stored by TP rank 3): its byte 2 of row 1.
  nlohmann::json tensor;
  for (const auto& t : manifest.at("tensors")) {
    if (t.at("state") == "weight" &&
        t.at("name").get<std::string>().find("7.self_attention.linear_proj.weight") !=
            std::string::npos &&
        t.at("offset").at(1).get<int>() == 192) {
      tensor = t;
    }
  }
  ASSERT_FALSE(tensor.is_null()) << "no TP-3 slice of layer 7's linear_proj in the manifest";
  // Scaled: global shape [64, 256], TP 4 slices of 64 columns; row 1, column 192 + 1 (bf16).
  const auto offset =
      static_cast<std::streamoff>(tensor.at("file_offset").get<std::uint64_t>() + 64 * 2 + 2);
  {
    std::fstream f(kept / tensor.at("file").get<std::string>(),
                   std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    f.seekg(offset);
    char byte = 0;
    ASSERT_TRUE(f.get(byte));
    f.seekp(offset);
    f.put(static_cast<char>(byte ^ 0x5a));
  }
  const Outcome o =
      run(2, campaign("reshard", "[restore]\ntp = 2\ndp = 2\nzero = 1\n"), dir_ / "bad", "restore");
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  const std::string name = tensor.at("name").get<std::string>();
  EXPECT_TRUE(contains(o.err, "verification failed: tensor " + name + " (weight")) << o.describe();
  EXPECT_TRUE(contains(o.err, "at global element [1, 193] (flat 449, shape [64, 256])"))
      << o.describe();
}

TEST_F(ReshardRun, RefusesStateTheCheckpointNeverHeldAndAnotherModel) {
  const fs::path weights =
      dir_.write("weights.toml", campaign_toml("weights", dir_ / "target", R"(create_target = true
[model]
name = ")" + model_.string() + R"("
[state]
scope = "weights"
[restore]
tp = 2
state = "full"
)"));
  const Outcome full = run(2, weights, dir_ / "full", "restore");
  EXPECT_NE(full.exit_code, 0) << full.describe();
  EXPECT_TRUE(contains(full.err, "restore.state")) << full.describe();
  EXPECT_TRUE(contains(full.err, "state.scope = \"weights\"")) << full.describe();

  ASSERT_FALSE(write_checkpoint().empty());
  const Outcome other =
      run(2, campaign("reshard", "[restore]\ntp = 2\n"), dir_ / "other", "restore");
  ASSERT_EQ(other.exit_code, 0) << other.describe();  // the same model restores
  const fs::path changed =
      dir_.write("changed.toml", campaign_toml("reshard", dir_ / "target", R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 4
[parallel]
tp = 4
pp = 2
[state]
scope = "full"
[restore]
tp = 2
)"));
  const Outcome model = run(2, changed, dir_ / "model", "restore");
  EXPECT_NE(model.exit_code, 0) << model.describe();
  EXPECT_TRUE(contains(model.err + model.out, "model.name")) << model.describe();
}

}  // namespace
}  // namespace ckpt::integration
