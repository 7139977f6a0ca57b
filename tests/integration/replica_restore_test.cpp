// The same-layout restore under DP with the replicas' copies (restore.replicas), end to end under
// mpirun: 4 processes write the tiny model's full state at DP 4 with ZeRO-1 (DP rank 0 alone
// writes the weights), then restore it with every rank reading its own copy of the weights
// ("read") and with each stored piece read once and sent to the other replicas ("cooperative");
// both verify every byte, and the bytes from storage and over the interconnect say which read what.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

TEST(ReplicaRestore, CooperativeReadsEachPieceOnceAndSendsTheReplicasTheirCopies) {
  if (!CKPT_TEST_HAVE_MPI)
    GTEST_SKIP() << "ckptbench was built without MPI (CKPT_WITH_MPI=OFF or MPI not found)";
  const std::optional<std::string> mpirun = find_mpirun();
  if (!mpirun) GTEST_SKIP() << "mpirun is not on PATH, so the 4 processes cannot be started";
  Scratch dir;
  const fs::path campaign =
      dir.write("c.toml", tiny_full_state_campaign(dir, "replicas", 1, 0, R"([parallel]
dp = 4
zero = 1
[restore]
replicas = ["read", "cooperative"]
)"));
  const auto job = [&](const std::string& phase) {
    std::vector<std::string> args = mpirun_args(*mpirun, 4);
    args.insert(args.end(), {kBinary, "run", campaign.string(), "--phase", phase, "--output",
                             (dir / phase).string()});
    return run_process(args, std::chrono::seconds(120));
  };
  const Outcome written = job("checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const auto writes = read_results(dir / "checkpoint");
  ASSERT_EQ(writes.size(), 2u) << written.describe();
  const auto stored = writes[0].at("bytes_per_checkpoint").get<std::uint64_t>();
  const Outcome restored = job("restore");
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const auto reads = read_results(dir / "restore");
  ASSERT_EQ(reads.size(), 2u) << restored.describe();
  for (const nlohmann::json& r : reads) {
    SCOPED_TRACE(r.at("error").dump());
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_EQ(r.at("verified"), true);
  }
  const nlohmann::json& each = reads[0].at("replicas");
  const nlohmann::json& once = reads[1].at("replicas");
  EXPECT_EQ(each.at("mode"), "read");
  EXPECT_EQ(once.at("mode"), "cooperative");
  const auto held = each.at("held_bytes").get<std::uint64_t>();
  EXPECT_GT(held, stored);  // DP ranks 1-3 hold the weights too
  EXPECT_EQ(reads[0].at("bytes_per_checkpoint"), held);
  EXPECT_EQ(each.at("storage_bytes"), held);  // every rank reads its own copy
  EXPECT_EQ(each.at("interconnect_bytes"), 0);
  EXPECT_EQ(once.at("held_bytes"), held);
  EXPECT_EQ(once.at("storage_bytes"), stored);  // each stored piece read once
  // One rank per process: every other replica's copy of the weights came over MPI.
  EXPECT_EQ(once.at("interconnect_bytes"), held - stored);
  EXPECT_EQ(once.at("copied_bytes"), 0);
}

}  // namespace
}  // namespace ckpt::integration
