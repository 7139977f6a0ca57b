// The fault matrix beyond the DiskFull tests' cases. EIO from
// a real block device (ext4 on a loop device whose end is cut off under it), SIGKILL of one
// process of a plain (sync) checkpoint under mpirun, SIGINT twice, and a kept checkpoint with a
// byte flipped, a file cut short or deleted, or its manifest damaged. Each asserts that no
// result says ok for what is not, and that the newest complete checkpoint still restores and
// verifies (for damage: the error names what is damaged and how to restore the other one).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// `bash -c SCRIPT`, for the mount and loop-device set-up.
Outcome shell(const std::string& script) {
  return run_process({"bash", "-c", script}, 60s);
}

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

// Restores the case of `campaign` (its `latest`) and expects exit 0 and a verified result.
void expect_one_restore_verifies(const fs::path& campaign, const fs::path& output) {
  const Outcome restore =
      ckptbench({"run", campaign.string(), "--phase", "restore", "--set", "campaign.iterations=1",
                 "--set", "campaign.warmup=0", "--output", output.string()});
  ASSERT_EQ(restore.exit_code, 0) << restore.describe();
  const auto r = read_results(output);
  ASSERT_EQ(r.size(), 1u) << restore.describe();
  EXPECT_EQ(r[0].at("status"), "ok") << r[0].dump();
  EXPECT_EQ(r[0].at("verified"), true) << r[0].dump();
}

void expect_no_ok_result(const fs::path& output) {
  for (const auto& r : read_results(output)) {
    EXPECT_NE(r.at("status"), "ok") << r.dump();
    EXPECT_EQ(r.at("verified"), false) << r.dump();
  }
}

// Evicts `file` from the page cache (its pages are clean after the run's fsync), so that the
// next read goes to the device.
void evict(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << file << ": " << std::strerror(errno);
  EXPECT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
}

// A real EIO without device-mapper (not in every kernel; not in this VM's): an ext4 file system
// (4 KiB blocks, one block group, no journal, errors=continue) on a loop device over a 64 MiB
// image in a tmpfs. shrink() cuts the image and makes the loop device re-read its size
// (`losetup -c`): every block past the new end then fails in the block layer with EIO
// ("attempt to access beyond end of device"), as a failed region of a disk does, while the
// file system's metadata at the start stays readable. Needs root and a free loop device.
class EioDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0)
      GTEST_SKIP() << "needs root: mounts a tmpfs and an ext4 file system on a loop device";
    fs::create_directories(backing_);
    fs::create_directories(mount_point_);
    const Outcome tmpfs = shell("mount -t tmpfs -o size=80m tmpfs " + quoted(backing_));
    if (tmpfs.exit_code != 0)
      GTEST_SKIP() << "cannot mount a tmpfs for the disk image: " << tmpfs.err;
    tmpfs_mounted_ = true;
    // Two tests of this fixture may run at once (ctest -j): finding a free loop device and
    // attaching to it is one step under a lock.
    const Outcome loop =
        shell("truncate -s 64M " + quoted(image_) + " && mkfs.ext4 -q -F -b 4096 -O ^has_journal " +
              quoted(image_) + " && flock /tmp/ckptbench-test-loop.lock losetup -f --show " +
              quoted(image_));
    if (loop.exit_code != 0)
      GTEST_SKIP() << "no loop device with ext4 here (mkfs.ext4 and losetup): " << loop.err;
    device_ = loop.out.substr(0, loop.out.find('\n'));
    const Outcome mounted =
        shell("mount -o errors=continue " + device_ + " " + quoted(mount_point_));
    if (mounted.exit_code != 0)
      GTEST_SKIP() << "cannot mount ext4 from " << device_ << ": " << mounted.err;
    ext4_mounted_ = true;
  }
  void TearDown() override {
    if (ext4_mounted_)
      shell("umount " + quoted(mount_point_) + " || umount -l " + quoted(mount_point_));
    if (!device_.empty()) shell("losetup -d " + device_);
    if (tmpfs_mounted_) shell("umount " + quoted(backing_) + " || umount -l " + quoted(backing_));
  }

  // Writes a file so that the file system's used blocks reach `bytes` from its start (blocks are
  // handed out first-free on this fresh one-group file system, so later files lie beyond).
  void fill_to(std::uint64_t bytes) {
    struct statvfs s {};
    ASSERT_EQ(::statvfs(mount_point_.c_str(), &s), 0);
    const std::uint64_t used = static_cast<std::uint64_t>(s.f_blocks - s.f_bfree) * s.f_frsize;
    ASSERT_LT(used, bytes);
    const Outcome o = shell("dd if=/dev/zero of=" + quoted(mount_point_ / "filler") +
                            " bs=4096 count=" + std::to_string((bytes - used) / 4096) +
                            " conv=fsync status=none");
    ASSERT_EQ(o.exit_code, 0) << o.describe();
  }
  // Every block from `bytes` on fails with EIO from now on.
  void shrink(std::uint64_t bytes) {
    const Outcome o = shell("truncate -s " + std::to_string(bytes) + " " + quoted(image_) +
                            " && losetup -c " + device_);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
  }

  Outcome run(const std::vector<std::string>& extra) {
    output_ = dir_ / ("results-" + std::to_string(runs_++));
    std::vector<std::string> args{"run", campaign_.string(), "--output", output_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return ckptbench(args);
  }

  Scratch dir_;
  fs::path backing_ = dir_ / "backing";
  fs::path image_ = backing_ / "disk.img";
  fs::path mount_point_ = dir_ / "ext4";
  std::string device_;
  bool tmpfs_mounted_ = false, ext4_mounted_ = false;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  fs::path campaign_ =
      dir_.write("eio.toml", campaign_toml("eio", mount_point_ / "target",
                                           "create_target = true\niterations = 1\nwarmup = 0\n"
                                           "[model]\nname = \"" +
                                               model_.string() +
                                               "\"\n[backend]\nsync = \"fsync\"\n"
                                               "[cache]\npolicy = \"none\"\n"));
  fs::path case_dir_ = mount_point_ / "target" / "eio" / "case-0000";
  fs::path output_;
  int runs_ = 0;
};

constexpr std::uint64_t kMiB = 1u << 20;

// EIO mid-data: the new checkpoint's blocks lie past the device's end, its fsync fails with EIO;
// the run fails, removes its step, and the earlier checkpoint (before the cut) still restores.
TEST_F(EioDevice, WriteThatFailsWithEioKeepsTheEarlierCheckpoint) {
  const Outcome first = run({"--phase", "checkpoint"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const fs::path kept = latest_checkpoint(case_dir_);
  ASSERT_FALSE(kept.empty());
  fill_to(36 * kMiB);
  shrink(32 * kMiB);
  const Outcome second = run({"--phase", "checkpoint", "--set", "campaign.overwrite=true"});
  EXPECT_EQ(second.exit_code, 1) << second.describe();
  EXPECT_TRUE(contains(second.err, "Input/output error")) << second.describe();
  EXPECT_TRUE(contains(second.err, (case_dir_ / "step_0000002").string())) << second.describe();
  EXPECT_TRUE(contains(second.err, "this run removed its incomplete directory"))
      << second.describe();
  expect_no_ok_result(output_);
  EXPECT_EQ(latest_checkpoint(case_dir_), kept);
  expect_one_restore_verifies(campaign_, dir_ / "restored");
}

// EIO mid-restore: the checkpoint's data lies past the cut and is read from the device; the
// restore fails naming the file and the error, and reports nothing verified. Only the data file
// is moved past the cut (copied there, renamed over itself): the directories, `latest` and the
// manifest stay before it, so they read back even when the page cache is dropped meanwhile
// (other tests drop it machine-wide).
TEST_F(EioDevice, RestoreThatFailsWithEioNamesTheFileAndVerifiesNothing) {
  const Outcome first = run({"--phase", "checkpoint"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const fs::path kept = latest_checkpoint(case_dir_);
  ASSERT_FALSE(kept.empty());
  fill_to(36 * kMiB);
  const fs::path data = kept / "__0_0.distcp", moved = kept / "__0_0.distcp.moved";
  fs::copy_file(data, moved);
  const Outcome synced = shell("sync " + quoted(moved));
  ASSERT_EQ(synced.exit_code, 0) << synced.describe();
  fs::rename(moved, data);
  shrink(32 * kMiB);
  evict(kept / "__0_0.distcp");
  const Outcome restore = run({"--phase", "restore"});
  EXPECT_EQ(restore.exit_code, 1) << restore.describe();
  EXPECT_TRUE(contains(restore.err, "posix: read " + (kept / "__0_0.distcp").string()))
      << restore.describe();
  EXPECT_TRUE(contains(restore.err, "Input/output error")) << restore.describe();
  EXPECT_TRUE(contains(restore.err, "holds no other complete one")) << restore.describe();
  expect_no_ok_result(output_);
}

// About 60 MiB a checkpoint with fsync: long enough to be interrupted mid-write.
std::string keeping_campaign(const std::string& name, const fs::path& target, int dp) {
  return campaign_toml(
      name, target,
      "create_target = true\niterations = 100000\nwarmup = 0\n[model]\nname = "
      "\"llama3-8b\"\nscale = 256\n[state]\nscope = \"weights\"\n[parallel]\ndp = " +
          std::to_string(dp) +
          "\nzero = 1\n[backend]\nsync = \"fsync\"\n"
          "[cache]\npolicy = \"none\"\n");
}

// The newest complete checkpoint is `latest` and restores; a step without a manifest (the one
// being written when the run died) is never `latest`.
void expect_latest_complete_and_restorable(const fs::path& campaign, const fs::path& case_dir,
                                           const fs::path& output) {
  const fs::path latest = latest_checkpoint(case_dir);
  ASSERT_FALSE(latest.empty()) << "no latest in " << case_dir;
  ASSERT_TRUE(fs::exists(latest / kManifest)) << latest;
  expect_one_restore_verifies(campaign, output);
}

// SIGKILL of process 1 of a plain (sync engine) `--phase checkpoint` run under mpirun, once two
// checkpoints are committed: the job ends without an ok result, and the newest committed
// checkpoint restores and verifies.
TEST(FaultMatrix, SigkillOfOneProcessUnderMpirunMidSyncCheckpoint) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign = dir.write("kill.toml", keeping_campaign("kill", dir / "target", 2));
  const fs::path case_dir = dir / "target" / "kill" / "case-0000";
  // Rank 1 becomes ckptbench (exec keeps the pid) and kills itself 30 ms after `latest` changed
  // twice: the third checkpoint is being written then.
  const fs::path wrapper =
      dir.write("kill-rank-1.sh",
                "rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\n"
                "if [ \"$rank\" = 1 ]; then (n=0; last=; while [ $n -lt 2 ]; do l=$(cat '" +
                    (case_dir / "latest").string() +
                    "' 2>/dev/null); if [ -n \"$l\" ] && [ \"$l\" != \"$last\" ]; then n=$((n+1)); "
                    "last=$l; fi; "
                    "sleep 0.005; done; sleep 0.03; kill -9 $$) & fi\n"
                    "exec \"" +
                    kBinary + "\" \"$@\"\n");
  std::vector<std::string> args = mpirun_args(*mpirun, 2);
  args.insert(args.end(), {"sh", wrapper.string(), "run", campaign.string(), "--phase",
                           "checkpoint", "--output", (dir / "results").string()});
  const Outcome o = run_process(args, 120s);
  EXPECT_FALSE(o.timed_out) << o.describe();
  EXPECT_FALSE(o.exited() && o.exit_code == 0) << o.describe();
  expect_no_ok_result(dir / "results");
  expect_latest_complete_and_restorable(campaign, case_dir, dir / "restored");
}

// Whether process `pid` no longer catches SIGINT (bit 2 of SigCgt in /proc/PID/status), within 10
// s.
bool await_sigint_handled(pid_t pid) {
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.starts_with("SigCgt:") &&
          (std::stoull(line.substr(7), nullptr, 16) & (1ull << (SIGINT - 1))) == 0) {
        return true;
      }
    }
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// SIGINT twice (the documented rule: the first stops at the next iteration boundary, the second
// ends the process at once): the process dies of the second SIGINT mid-checkpoint, no result says
// ok, and the newest complete checkpoint restores.
TEST(FaultMatrix, SigintTwiceEndsAtOnceAndTheNewestCompleteCheckpointRestores) {
  Scratch dir;
  const fs::path campaign = dir.write("twice.toml", keeping_campaign("twice", dir / "target", 1));
  const fs::path case_dir = dir / "target" / "twice" / "case-0000";
  const fs::path output = dir / "results";
  Process p(
      {kBinary, "run", campaign.string(), "--phase", "checkpoint", "--output", output.string()});
  const auto deadline = Clock::now() + 60s;
  while (Clock::now() < deadline && !contains(p.err_so_far(), "iteration 2/"))
    std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(contains(p.err_so_far(), "iteration 2/")) << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGINT), 0);
  // The second only once the first is handled (two pending at once merge into one): the handler
  // puts SIGINT back to its default action, which clears its bit in SigCgt.
  ASSERT_TRUE(await_sigint_handled(p.pid())) << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGINT), 0);
  const auto sent = Clock::now();
  const Outcome o = p.wait(10s);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - sent).count(), 2.0) << o.describe();
  EXPECT_EQ(o.term_signal, SIGINT) << "the second SIGINT must end the process\n" << o.describe();
  expect_no_ok_result(output);
  expect_latest_complete_and_restorable(campaign, case_dir, dir / "restored");
}

// A kept checkpoint, damaged after the fact, and a complete copy of it the user set aside.
class DamagedCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    const Outcome made = ckptbench(
        {"run", campaign_.string(), "--phase", "checkpoint", "--output", (dir_ / "made").string()});
    ASSERT_EQ(made.exit_code, 0) << made.describe();
    kept_ = latest_checkpoint(case_dir_);
    ASSERT_EQ(kept_, case_dir_ / "step_0000001");
    fs::copy(kept_, case_dir_ / "saved-step_0000001");
    fs::copy(kept_, dir_ / "pristine");
  }
  void restore_pristine() {
    fs::remove_all(kept_);
    fs::copy(dir_ / "pristine", kept_);
  }
  // A restore of the damaged `latest` fails with `exit_code`, its error holding `what` and the
  // way to the other complete checkpoint; no result says verified.
  void expect_refused(const std::string& damage, int exit_code, const std::string& what) {
    const fs::path output = dir_ / ("r-" + std::to_string(runs_++));
    const Outcome o =
        ckptbench({"run", campaign_.string(), "--phase", "restore", "--output", output.string()});
    EXPECT_EQ(o.exit_code, exit_code) << damage << "\n" << o.describe();
    EXPECT_TRUE(contains(o.err, what)) << damage << ": expected `" << what << "`\n" << o.describe();
    EXPECT_TRUE(contains(o.err, "other complete checkpoints in " + case_dir_.string() +
                                    ": saved-step_0000001 — to restore one, write its name into " +
                                    (case_dir_ / "latest").string()))
        << damage << "\n"
        << o.describe();
    expect_no_ok_result(output);
  }

  Scratch dir_;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  fs::path campaign_ = dir_.write(
      "dmg.toml", campaign_toml("dmg", dir_ / "target",
                                "create_target = true\niterations = 1\nwarmup = 0\n"
                                "[model]\nname = \"" +
                                    model_.string() + "\"\n[cache]\npolicy = \"none\"\n"));
  fs::path case_dir_ = dir_ / "target" / "dmg" / "case-0000";
  fs::path kept_;
  int runs_ = 0;
};

TEST_F(DamagedCheckpoint, EachDamageIsRefusedNamingItAndTheOtherCheckpointRestores) {
  const fs::path data = kept_ / "__0_0.distcp";
  const std::uint64_t size = fs::file_size(data);
  ASSERT_GT(size, 700001u);
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(700001);
    const char byte = static_cast<char>(f.get());
    f.seekp(700001);
    f.put(static_cast<char>(byte ^ 0x01));
  }
  expect_refused(
      "a flipped byte", 1,
      "verification failed: tensor optimizer.state.exp_avg.embedding.word_embeddings.weight "
      "(exp_avg, rank 0) at global element");
  // Byte 700001 of the file, after torch.save's framing of the items before it and of this one.
  expect_refused("a flipped byte", 1, "byte 11091 of the shard (file __0_0.distcp offset 700001)");
  restore_pristine();
  fs::resize_file(data, 1000000);
  expect_refused("a truncated file", 1,
                 "posix: read " + data.string() +
                     " at offset 969425, length 65536: file shorter "
                     "than the plan (end of file at byte 1000000)");
  restore_pristine();
  fs::remove(data);
  expect_refused("a deleted file", 1,
                 "posix: open for reading " + data.string() + ": No such file or directory");
  restore_pristine();
  const fs::path manifest = kept_ / kManifest;
  fs::resize_file(manifest, 5000);
  expect_refused("a truncated manifest", 2, manifest.string() + ": not a ckptbench manifest");
  restore_pristine();
  fs::remove(manifest);
  expect_refused("a deleted manifest", 2, manifest.string() + ": no manifest");
  restore_pristine();
  nlohmann::json edited = read_manifest(kept_);
  edited["tensors"][0]["file"] = "../../../outside.bin";
  std::ofstream(manifest, std::ios::trunc) << edited.dump();
  expect_refused("a manifest naming a file outside", 2,
                 manifest.string() + ": damaged manifest: tensor " +
                     edited["tensors"][0]["name"].get<std::string>() +
                     " names file \"../../../outside.bin\", which is not a file inside " +
                     kept_.string());
  edited = read_manifest(dir_ / "pristine");
  edited.erase("tensors");
  std::ofstream(manifest, std::ios::trunc) << edited.dump();
  expect_refused("a manifest without tensors", 2, manifest.string() + ": damaged manifest:");

  // Following the advice: `latest` names the copy set aside, which restores and verifies.
  std::ofstream(case_dir_ / "latest", std::ios::trunc) << "saved-step_0000001\n";
  expect_one_restore_verifies(campaign_, dir_ / "restored-saved");
  // Without another complete checkpoint, the error says there is none.
  std::ofstream(case_dir_ / "latest", std::ios::trunc) << "step_0000001\n";
  fs::remove_all(case_dir_ / "saved-step_0000001");
  const Outcome alone = ckptbench(
      {"run", campaign_.string(), "--phase", "restore", "--output", (dir_ / "alone").string()});
  EXPECT_EQ(alone.exit_code, 2) << alone.describe();
  EXPECT_TRUE(contains(alone.err,
                       "does not fall back to another checkpoint, and " + case_dir_.string() +
                           " holds no other complete one: write a new one with --phase checkpoint"))
      << alone.describe();
}

}  // namespace
}  // namespace ckpt::integration
