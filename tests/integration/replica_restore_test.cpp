// The same-layout restore under DP with the replicas' copies (restore.replicas), end to end under
// mpirun: 4 processes write the tiny model's full state at DP 4 with ZeRO-1 (DP rank 0 alone
// writes the weights), then restore it with every rank reading its own copy of the weights
// ("read") and with each stored piece read once and sent to the other replicas ("cooperative");
// both verify every byte, and the bytes from storage and over the interconnect say which read what.
// The cooperative resharded restore and TP load read every stored byte they need once, over all
// processes, and send the rest.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// The tiny model's full state under `parallel` (the [parallel] table's lines, maybe more tables
// after them) written by 4
// processes (--phase checkpoint), then restored by 4 with restore.replicas = "read" and
// "cooperative": the bytes stored per checkpoint, and the two restores' records, each checked ok
// and verified (none after a failure, which it reports).
struct ReplicaRestores {
  std::uint64_t stored = 0;
  std::vector<nlohmann::json> reads;
};

ReplicaRestores read_and_cooperative_restores(const std::string& mpirun,
                                              const std::string& parallel) {
  Scratch dir;
  const fs::path campaign = dir.write(
      "c.toml",
      tiny_full_state_campaign(
          dir, "replicas", 1, 0,
          "[parallel]\n" + parallel + "[restore]\nreplicas = [\"read\", \"cooperative\"]\n"));
  const auto job = [&](const std::string& phase) {
    std::vector<std::string> args = mpirun_args(mpirun, 4);
    args.insert(args.end(), {kBinary, "run", campaign.string(), "--phase", phase, "--output",
                             (dir / phase).string()});
    return run_process(args, std::chrono::seconds(120));
  };
  const Outcome written = job("checkpoint");
  EXPECT_EQ(written.exit_code, 0) << written.describe();
  const auto writes = read_results(dir / "checkpoint");
  EXPECT_EQ(writes.size(), 2u) << written.describe();
  if (writes.size() != 2) return {};
  const Outcome restored = job("restore");
  EXPECT_EQ(restored.exit_code, 0) << restored.describe();
  ReplicaRestores out{.stored = writes[0].at("bytes_per_checkpoint").get<std::uint64_t>(),
                      .reads = read_results(dir / "restore")};
  EXPECT_EQ(out.reads.size(), 2u) << restored.describe();
  for (const nlohmann::json& r : out.reads) {
    SCOPED_TRACE(r.at("error").dump());
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_EQ(r.at("verified"), true);
  }
  return out;
}

TEST(ReplicaRestore, CooperativeReadsEachPieceOnceAndSendsTheReplicasTheirCopies) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::optional<std::string> mpirun = find_mpirun();
  const auto [stored, reads] = read_and_cooperative_restores(*mpirun, "dp = 4\nzero = 1\n");
  ASSERT_EQ(reads.size(), 2u);
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

// The tiny model's 106,816 parameters in bf16 (what a DP replica holds of DP rank 0's under
// ZeRO-1), its 5 norms of 64 in bf16, and at TP 2 x DP 2 (ZeRO-1) TP rank 1's copies of the norms:
// their weights on both DP ranks, and of their optimizer state (fp32 master, exp_avg, exp_avg_sq)
// each DP rank's part, the whole once.
constexpr std::uint64_t kTinyWeights = 106816 * 2;
constexpr std::uint64_t kTinyNormWeights = 5 * 64 * 2;
constexpr std::uint64_t kTinyNormCopies = 2 * kTinyNormWeights + 5 * 64 * 12;
// What Megatron's two model_optim_rng.pt and two distrib_optim.pt hold at TP 2 beyond those
// tensors (megatron_pt_files): torch.save's archives, the pickles (the args, per weight its
// entry) and the RNG states, stored after the tensors and never read back by a restore.
constexpr std::uint64_t kTinyMegatronFileRest = 97032;

// TP 2 x DP 2 (ZeRO-1): the norms, TP-replicated, are stored once, by TP rank 0, and every TP rank
// holds them. The same-layout restore gives TP rank 1 its copies of them (weights and optimizer
// state) besides the DP replicas' weights; cooperatively each stored byte is read once and every
// copy crosses between the processes.
TEST(ReplicaRestore, CooperativeTpByDpRestoreReadsEachStoredByteOnceAndGivesEveryTpRankTheNorms) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::optional<std::string> mpirun = find_mpirun();
  const auto [stored, reads] = read_and_cooperative_restores(*mpirun, "tp = 2\ndp = 2\nzero = 1\n");
  ASSERT_EQ(reads.size(), 2u);
  // DP rank 1 of the two TP ranks holds DP rank 0's weights; TP rank 1 the norms' copies.
  const nlohmann::json& each = reads[0].at("replicas");
  const nlohmann::json& once = reads[1].at("replicas");
  const auto held = each.at("held_bytes").get<std::uint64_t>();
  EXPECT_EQ(held, stored + kTinyWeights + kTinyNormCopies);
  EXPECT_EQ(each.at("storage_bytes"), held);  // every rank reads its own copy
  EXPECT_EQ(once.at("mode"), "cooperative");
  EXPECT_EQ(once.at("held_bytes"), held);
  EXPECT_EQ(once.at("storage_bytes"), stored);  // each stored byte read once
  EXPECT_EQ(once.at("interconnect_bytes"), held - stored);
  EXPECT_EQ(once.at("copied_bytes"), 0);

  // Megatron's layout stores TP rank 1's copies of the norms too (on DP rank 0: their weights and,
  // gathered, their optimizer state) and its files' rest: the ranks hold the same, and the
  // cooperative restore reads TP rank 0's copy alone, the bytes the layout above stores.
  const auto megatron = read_and_cooperative_restores(
      *mpirun, "tp = 2\ndp = 2\nzero = 1\n[strategy]\nlayout = \"megatron\"\n");
  ASSERT_EQ(megatron.reads.size(), 2u);
  EXPECT_EQ(megatron.stored, stored + kTinyNormCopies - kTinyNormWeights + kTinyMegatronFileRest);
  EXPECT_EQ(megatron.reads[0].at("replicas").at("storage_bytes"), held);
  EXPECT_EQ(megatron.reads[1].at("replicas").at("held_bytes"), held);
  EXPECT_EQ(megatron.reads[1].at("replicas").at("storage_bytes"), stored);
  EXPECT_EQ(megatron.reads[1].at("replicas").at("interconnect_bytes"), held - stored);
}

// 4 processes write the tiny model's full state at DP 4 (ZeRO-1), then restore it resharded into
// TP 2 x DP 2 (and DP 2 under ZeRO-0) and load its weights into TP 2, cooperatively: every byte
// some rank reads is read from storage once, what several processes read goes over MPI, and every
// byte verifies. A memory budget short of the buffers runs the exchange in rounds; one that not
// even a piece per round fits is refused before any read, naming the exchange buffers.
TEST(ReplicaRestore, CooperativeReshardAndTpLoadReadEachStoredByteOnceAndVerify) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::optional<std::string> mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign = dir.write(
      "c.toml", tiny_full_state_campaign(dir, "pieces", 1, 0, "[parallel]\ndp = 4\nzero = 1\n"));
  int jobs = 0;  // each job's results in a directory of its own: checkpoint1, restore2, ...
  const auto job = [&](const std::string& phase, const std::vector<std::string>& sets) {
    std::vector<std::string> args = mpirun_args(*mpirun, 4);
    args.insert(args.end(), {kBinary, "run", campaign.string(), "--phase", phase, "--output",
                             (dir / (phase + std::to_string(++jobs))).string()});
    for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
    return run_process(args, std::chrono::seconds(120));
  };
  const Outcome written = job("checkpoint", {});
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const auto stored = read_results(dir / "checkpoint1").at(0).at("bytes_per_checkpoint");
  const std::vector<std::string> reshard{"restore.tp=2", "restore.dp=2",
                                         "restore.replicas=cooperative"};
  const Outcome restored = job("restore", reshard);
  ASSERT_EQ(restored.exit_code, 0) << restored.describe();
  const nlohmann::json r = read_results(dir / "restore2").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& once = r.at("replicas");
  EXPECT_EQ(once.at("mode"), "cooperative");
  // Each new rank holds what it would write and its replicas' copies, as in a same-layout restore
  // at TP 2 x DP 2; each stored byte is read once, and each copy crosses between processes. Every
  // holder copies a shared piece into place: the norms' weights 4 ranks, the rest 2.
  const auto held = once.at("held_bytes").get<std::uint64_t>();
  EXPECT_EQ(held, r.at("reshard").at("bytes_read"));
  EXPECT_EQ(held, stored.get<std::uint64_t>() + kTinyWeights + kTinyNormCopies);
  EXPECT_EQ(once.at("storage_bytes"), stored);
  const std::uint64_t sent = held - stored.get<std::uint64_t>();
  EXPECT_EQ(once.at("interconnect_bytes"), sent);
  EXPECT_EQ(once.at("copied_bytes"), 2 * (sent - 3 * kTinyNormWeights) + 4 * kTinyNormWeights);

  const Outcome loaded = job("load", {"load.tp=2", "load.cooperative=true"});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
  const nlohmann::json l = read_results(dir / "load3").at(0);
  EXPECT_EQ(l.at("status"), "ok") << l.at("error");
  EXPECT_EQ(l.at("verified"), true);
  const nlohmann::json& load = l.at("load");
  const nlohmann::json& shared = l.at("replicas");
  // Each TP rank's requests bridge the other's half rows (load.gap_bytes): reading its own, every
  // rank would read those twice; cooperatively each is read once, by one of the two, sent to the
  // other and copied into place on both; every other byte is read in place.
  const auto bridged = load.at("bridged_bytes").get<std::uint64_t>();
  ASSERT_GT(bridged, 0u);
  EXPECT_EQ(shared.at("held_bytes"), load.at("bytes_read"));
  EXPECT_EQ(shared.at("storage_bytes"), load.at("bytes"));
  EXPECT_EQ(shared.at("interconnect_bytes"), bridged);
  EXPECT_EQ(shared.at("copied_bytes"), 2 * bridged);

  EXPECT_EQ(shared.at("rounds"), 1);

  // A budget one byte short of the cooperative load's buffers, its exchange buffers among them:
  // the exchange runs in rounds instead, with the same bytes from storage and over MPI.
  const auto need = l.at("memory_bytes_per_process").get<std::uint64_t>();
  const Outcome rounds = job("load", {"load.tp=2", "load.cooperative=true",
                                      "campaign.memory_budget=" + std::to_string(need - 1)});
  ASSERT_EQ(rounds.exit_code, 0) << rounds.describe();
  const nlohmann::json b = read_results(dir / "load4").at(0);
  EXPECT_EQ(b.at("status"), "ok") << b.at("error");
  EXPECT_EQ(b.at("verified"), true);
  EXPECT_GT(b.at("replicas").at("rounds").get<int>(), 1);
  EXPECT_LT(b.at("memory_bytes_per_process").get<std::uint64_t>(), need);
  EXPECT_EQ(b.at("replicas").at("storage_bytes"), shared.at("storage_bytes"));
  EXPECT_EQ(b.at("replicas").at("interconnect_bytes"), bridged);
  // Half of it is below the rank buffers with a piece per round: refused before any read.
  const Outcome refused = job("load", {"load.tp=2", "load.cooperative=true",
                                       "campaign.memory_budget=" + std::to_string(need / 2)});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_NE(refused.err.find("the cooperative read's exchange buffers"), std::string::npos)
      << refused.err;

  // Into DP 2 under ZeRO-0: DP rank 1 holds the whole state too, every byte of it sent once.
  const Outcome zero =
      job("restore", {"restore.dp=2", "restore.zero=0", "restore.replicas=cooperative"});
  ASSERT_EQ(zero.exit_code, 0) << zero.describe();
  const nlohmann::json z = read_results(dir / "restore6").at(0);
  EXPECT_EQ(z.at("status"), "ok") << z.at("error");
  EXPECT_EQ(z.at("verified"), true);
  EXPECT_EQ(z.at("replicas").at("held_bytes"), 2 * stored.get<std::uint64_t>());
  EXPECT_EQ(z.at("replicas").at("storage_bytes"), stored);
  EXPECT_EQ(z.at("replicas").at("interconnect_bytes"), stored);
}

// CPU seconds of this process's children that ended and were waited for.
double ended_children_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The dry run of a cooperative TP 2 load by 4000 processes plans every process's reads and the
// exchange once for all of them: planning both again for each process, as each process of the run
// does for itself, grew with the square of the process count (tens of CPU seconds here).
TEST(ReplicaRestore, DryRunOfACooperativeLoadByThousandsOfProcessesPlansItOnce) {
  Scratch dir;
  const fs::path campaign = dir.write(
      "c.toml", tiny_full_state_campaign(dir, "dry", 1, 0, "[parallel]\ndp = 4\nzero = 1\n"));
  const Outcome written = ckptbench(
      {"run", campaign.string(), "--phase", "checkpoint", "--output", (dir / "written").string()});
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const double before = ended_children_cpu_seconds();
  const Outcome o =
      ckptbench({"run", campaign.string(), "--phase", "load", "--dry-run", "--processes", "4000",
                 "--set", "load.tp=2", "--set", "load.cooperative=true"});
  const double cpu = ended_children_cpu_seconds() - before;
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_LT(cpu, 3.0) << o.describe();
}

// The dry run of a cooperative same-layout restore of 1000 ranks (TP 2 x DP 500, the weights) by
// 4000 processes plans every process's replica plans in one pass: planning all of them again for
// each process grew with the process count times the ranks (seconds of CPU here).
TEST(ReplicaRestore, DryRunOfACooperativeSameLayoutRestoreByThousandsOfProcessesPlansItOnce) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write(
      "c.toml",
      campaign_toml("dry", dir / "target",
                    "create_target = true\nkeep = true\niterations = 1\nwarmup = 0\n"
                    "[model]\nname = \"" +
                        model.string() +
                        "\"\n[parallel]\ntp = 2\ndp = 500\n[cache]\npolicy = \"none\"\n"));
  const Outcome written = ckptbench(
      {"run", campaign.string(), "--phase", "checkpoint", "--output", (dir / "written").string()});
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const double before = ended_children_cpu_seconds();
  const Outcome o = ckptbench({"run", campaign.string(), "--phase", "restore", "--dry-run",
                               "--processes", "4000", "--set", "restore.replicas=cooperative"});
  const double cpu = ended_children_cpu_seconds() - before;
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_LT(cpu, 1.0) << o.describe();
}

}  // namespace
}  // namespace ckpt::integration
