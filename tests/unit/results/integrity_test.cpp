// The integrity checks' warnings and record on hand-made measurements: exact sentences for a
// preloaded library and an interposed call, an fsync faster than any storage, data small enough
// to stay cached, a CPU-bound phase; none for a clean case; the probe's limit at its boundary.
#include "harness/results/integrity.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// A clean case: nothing preloaded, a probe at 1 GiB/s, 100 GiB per host on a 16 GiB host,
// read back with the cache dropped, a phase that kept half a core busy.
IntegrityRecord clean_record() {
  IntegrityRecord r;
  r.durability = {
      .probed = true, .bytes = 4 * kMiB, .write_seconds = 0.001, .fsync_seconds = 4.0 / 1024};
  r.bytes_per_host = 100 * kGiBBytes;
  r.host_memory_bytes = 16 * kGiBBytes;
  r.cores_per_process = 2;
  r.done_write = "every process's last write call returned";
  return r;
}

const PhaseCpu kCalm{.user_seconds = 0.25, .system_seconds = 0.25, .process_seconds = 1.0};

TEST(Integrity, ACleanCaseHasNoWarnings) {
  const IntegrityRecord r = clean_record();
  EXPECT_EQ(
      integrity_warnings(
          {.record = r, .write = kCalm, .read = kCalm, .reads = true, .cache_policy = "none"}),
      std::vector<std::string>{});
  EXPECT_DOUBLE_EQ(r.durability.fsync_gib_per_s(), 1.0);
  EXPECT_EQ(kCalm.busy_cores(), 0.5);
}

TEST(Integrity, APreloadedShimAndItsInterposedCallAreNamed) {
  IntegrityRecord r = clean_record();
  r.preload = {.ld_preload = "/tmp/libnofadvise.so",
               .interposed = {{"posix_fadvise", "/tmp/libnofadvise.so"}},
               .known_shims = {"/usr/lib/libeatmydata.so (makes fsync, fdatasync, sync and msync "
                               "no-ops)"}};
  EXPECT_EQ(
      integrity_warnings({.record = r}),
      (std::vector<std::string>{
          "LD_PRELOAD is set (/tmp/libnofadvise.so): a preloaded library can change what the I/O "
          "calls do",
          "posix_fadvise is defined by /tmp/libnofadvise.so, not the C library: the call may not "
          "do what the result assumes",
          "a known shim is loaded: /usr/lib/libeatmydata.so (makes fsync, fdatasync, sync and "
          "msync no-ops)"}));
  const nlohmann::json j = integrity_json({.record = r});
  EXPECT_EQ(j.at("preload").at("interposed"),
            nlohmann::json::array({"posix_fadvise (/tmp/libnofadvise.so)"}));
  EXPECT_EQ(j.at("preload").at("ld_so_preload"), nullptr);
}

TEST(Integrity, TheDurabilityLimitIsExclusiveAtItsRate) {
  DurabilityProbe p{.probed = true, .bytes = 4 * kMiB};
  p.fsync_seconds = 1.0 / 65536;  // 4 MiB in 2^-16 s: exactly 256 GiB/s
  EXPECT_DOUBLE_EQ(p.fsync_gib_per_s(), kMaxDurableGiBPerSecond);
  EXPECT_FALSE(p.too_fast());
  p.fsync_seconds = 1.0 / 131072;  // 512 GiB/s
  EXPECT_TRUE(p.too_fast());
  p.fsync_seconds = 0;  // below the clock's resolution
  EXPECT_TRUE(p.too_fast());
  p.probed = false;
  EXPECT_FALSE(p.too_fast());
}

TEST(Integrity, AnFsyncFasterThanAnyStorageWarns) {
  IntegrityRecord r = clean_record();
  r.durability.fsync_seconds = 2e-6;  // 4 MiB in 2 us: 1953 GiB/s
  EXPECT_EQ(integrity_warnings({.record = r}),
            std::vector<std::string>{
                "fsync of 4194304 freshly written bytes in the target took 2.0 us (1953 GiB/s), "
                "faster than the 256 GiB/s any client moves data to storage: the bytes may not be "
                "durable (a file system in memory, an fsync shim, or storage that acknowledges "
                "early)"});
}

TEST(Integrity, DataPerHostWithinThreeTimesMemoryMayBeCachedWhenTheCacheIsKept) {
  IntegrityRecord r = clean_record();
  r.bytes_per_host = 48 * kGiBBytes;  // exactly 3 x 16 GiB: not more than 3 x
  const std::string warning =
      "the read may come from the page cache: 51539607552 bytes per host per checkpoint, not more "
      "than 3 x the host's 17179869184 bytes of memory, and cache.policy = \"none\"";
  EXPECT_EQ(integrity_warnings({.record = r, .reads = true, .cache_policy = "none"}),
            std::vector<std::string>{warning});
  EXPECT_EQ(integrity_warnings({.record = r, .reads = true, .cache_policy = "drop_caches"}),
            std::vector<std::string>{});
  EXPECT_EQ(integrity_warnings({.record = r, .reads = false, .cache_policy = "none"}),
            std::vector<std::string>{});
  r.bytes_per_host += 1;
  EXPECT_EQ(integrity_warnings({.record = r, .reads = true, .cache_policy = "none"}),
            std::vector<std::string>{});
}

TEST(Integrity, AHarnessBusyInItsOwnCodeOrOnEveryCoreWarns) {
  const IntegrityRecord r = clean_record();  // 2 cores per process
  const PhaseCpu user{.user_seconds = 0.6, .system_seconds = 0.1, .process_seconds = 1.0};
  const PhaseCpu busy{.user_seconds = 0.2, .system_seconds = 1.7, .process_seconds = 1.0};
  EXPECT_EQ(integrity_warnings({.record = r, .write = user, .read = busy}),
            (std::vector<std::string>{
                "the harness's own code kept a core busy 60 % of the write phase (user CPU): it "
                "may limit the rate more than the storage does",
                "the read phase kept 1.90 of the 2.00 cores of each process busy (user + system "
                "CPU): the CPUs may limit the rate more than the storage does"}));
  const PhaseCpu just{.user_seconds = 0.5, .system_seconds = 1.3, .process_seconds = 1.0};
  EXPECT_EQ(integrity_warnings({.record = r, .write = just}), std::vector<std::string>{});
}

TEST(Integrity, TheRecordStatesGenerationDoneAndCpu) {
  const IntegrityRecord r = clean_record();
  const nlohmann::json j = integrity_json({.record = r,
                                           .write = kCalm,
                                           .reads = false,
                                           .cache_policy = "",
                                           .generation = {2 * kGiBBytes, 0.5}});
  EXPECT_EQ(j.at("data_generation").at("gib_per_s"), 4.0);
  EXPECT_EQ(j.at("data_generation").at("in_timed_phases"), false);
  EXPECT_EQ(j.at("done").at("write"), "every process's last write call returned");
  EXPECT_EQ(j.at("done").at("read"), nullptr);
  EXPECT_EQ(j.at("cpu").at("write").at("busy_cores"), 0.5);
  EXPECT_EQ(j.at("cpu").at("read"), nullptr);
  EXPECT_EQ(j.at("durability").at("fsync_gib_per_s"), 1.0);
  EXPECT_EQ(j.at("durability").at("why_not"), nullptr);
  EXPECT_EQ(j.at("warnings"), nlohmann::json::array());
}

TEST(Integrity, ThisTestProgramHasNoInterposedIoCall) {
  const PreloadCheck p = check_preload();
  EXPECT_TRUE(p.interposed.empty())
      << p.interposed.front().symbol << " " << p.interposed.front().library;
  EXPECT_TRUE(p.known_shims.empty());
  EXPECT_EQ(watched_io_calls().front(), "posix_fadvise");
}

}  // namespace
}  // namespace ckpt::harness
