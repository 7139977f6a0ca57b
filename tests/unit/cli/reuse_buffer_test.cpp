// memory.reuse_bytes (fio's and IOR's footprint): the key's validation, requests pointed into one
// small buffer, the bytes a posix write of it puts in the file, and a whole run's record.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/cli/run_command.hpp"
#include "harness/comm/single_comm.hpp"
#include "harness/common/config_error.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t kChunk = 65536;

// One rank, one file, requests of exactly kChunk bytes (the shards coalesced, then split).
std::string reuse_campaign_text(const fs::path& target, const std::string& more = "") {
  return "[campaign]\nname = \"reuse\"\ntarget = \"" + target.string() +
         "\"\ncreate_target = true\niterations = 1\nwarmup = 0\n"
         "[model]\nname = \"llama3-8b\"\nscale = 4096\n"
         "[state]\nscope = \"weights\"\n"
         "[strategy]\nalignment = \"4 KiB\"\nchunk_bytes = \"64 KiB\"\ncoalesce_bytes = \"1 GiB\"\n"
         "[backend]\nname = \"posix\"\nsync = \"fsync\"\n"
         "[cache]\npolicy = \"none\"\n" +
         more;
}

std::string reuse_error_of(const std::vector<std::string>& overrides) {
  try {
    parse_campaign(reuse_campaign_text("/t"), "r.toml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReuseBuffer, KeyDefaultsToOffAndIsRecorded) {
  const Case plain = parse_campaign(reuse_campaign_text("/t"), "r.toml", {}).cases.at(0);
  EXPECT_EQ(plain.reuse_bytes, 0u);
  EXPECT_EQ(plain.config["memory"]["reuse_bytes"], 0);
  const Case reused = parse_campaign(reuse_campaign_text("/t"), "r.toml",
                                     {"memory.reuse_bytes=1MiB", "data.verify=false"})
                          .cases.at(0);
  EXPECT_EQ(reused.reuse_bytes, 1048576u);
  EXPECT_EQ(reused.config["memory"]["reuse_bytes"], 1048576);
}

TEST(ReuseBuffer, RefusalsNameTheKeyAndTheFix) {
  const std::string verify = reuse_error_of({"memory.reuse_bytes=64KiB"});
  EXPECT_NE(
      verify.find(
          "`memory.reuse_bytes`: memory.reuse_bytes = 65536 leaves no checkpoint data to verify "
          "(one "
          "buffer serves every request): set data.verify = false, or set memory.reuse_bytes = 0"),
      std::string::npos)
      << verify;
  const std::string odd = reuse_error_of({"memory.reuse_bytes=5000", "data.verify=false"});
  EXPECT_NE(odd.find("memory.reuse_bytes = 5000 is not a multiple of 4096 (a page)"),
            std::string::npos)
      << odd;
  const std::string hdf5 =
      reuse_error_of({"memory.reuse_bytes=64KiB", "data.verify=false", "backend.name=hdf5"});
  EXPECT_NE(hdf5.find("cannot serve the hdf5 backend's datasets: use posix, uring or mpiio"),
            std::string::npos)
      << hdf5;
  const std::string pinned =
      reuse_error_of({"memory.reuse_bytes=64KiB", "data.verify=false", "memory.space=pinned"});
  EXPECT_NE(pinned.find("needs memory.space = \"host\""), std::string::npos) << pinned;
  const std::string load =
      reuse_error_of({"memory.reuse_bytes=64KiB", "data.verify=false", "campaign.phase=load"});
  EXPECT_NE(load.find("applies to the checkpoint and restore phases"), std::string::npos) << load;
}

std::vector<RankPlan> plans_of(const Case& c, const fs::path& dir) {
  const workloads::Layout layout(c.model, c.parallel, c.state);
  return plan_ranks(layout, c, selected_ranks(c, layout.world_size()), dir);
}

TEST(ReuseBuffer, RequestsPointIntoTheBufferAndAShortBufferIsRefused) {
  const test_support::TempDir dir;
  const Case c = parse_campaign(reuse_campaign_text(dir.path()), "r.toml",
                                {"memory.reuse_bytes=128KiB", "data.verify=false"})
                     .cases.at(0);
  std::vector<RankPlan> plans = plans_of(c, dir.path() / "step");
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(plans[0].io.files.size(), 1u);
  const std::vector<backends::Extent> before = plans[0].io.files[0].extents;
  ASSERT_GT(before.size(), 4u);
  std::vector<RankPlan> too_small = plans;
  EXPECT_EQ(reuse_buffer(too_small, 32768),
            "memory.reuse_bytes = 32768 is smaller than a request of 65536 bytes (" +
                plans[0].io.files[0].path +
                "): set it to at least the largest request (strategy.chunk_bytes when set)");
  ASSERT_EQ(reuse_buffer(plans, 2 * kChunk), "");
  const std::vector<backends::Extent>& after = plans[0].io.files[0].extents;
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    // Contiguous requests of one chunk alternate between the buffer's two halves.
    EXPECT_EQ(after[i].memory_offset, before[i].memory_offset % (2 * kChunk)) << i;
    EXPECT_EQ(after[i].file_offset, before[i].file_offset) << i;
    EXPECT_EQ(after[i].length, before[i].length) << i;
  }
}

TEST(ReuseBuffer, APosixWriteRepeatsTheOneBufferInTheFile) {
  const test_support::TempDir dir;
  const Case c = parse_campaign(reuse_campaign_text(dir.path()), "r.toml",
                                {"memory.reuse_bytes=64KiB", "data.verify=false"})
                     .cases.at(0);
  std::vector<RankPlan> plans = plans_of(c, dir.path() / "step");
  ASSERT_EQ(reuse_buffer(plans, kChunk), "");
  const std::unique_ptr<MemorySpace> space = make_host_space();
  const ProcessBuffer buffer = ProcessBuffer::reused(plans, *space, kChunk, c.data);
  ASSERT_EQ(buffer.view().size, kChunk);
  EXPECT_EQ(buffer.offset(0), 0u);
  fs::create_directories(dir.path() / "step");
  const auto posix = backends::make_backend("posix", c.io);
  SingleComm comm;
  const ProcessSample written = timed_transfer(*posix, plans, buffer, true, comm);
  ASSERT_EQ(written.error, "");
  const backends::FilePlan& file = plans[0].io.files[0];
  std::ifstream in(file.path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint64_t planned = 0;
  for (const backends::Extent& e : file.extents)
    planned = std::max(planned, e.file_offset + e.length);
  ASSERT_EQ(bytes.size(), planned);
  const auto* data = reinterpret_cast<const char*>(buffer.view().data);
  for (const backends::Extent& e : file.extents) {
    ASSERT_EQ(std::memcmp(bytes.data() + e.file_offset, data + e.memory_offset, e.length), 0)
        << e.file_offset;
  }
}

TEST(ReuseBuffer, ARunRecordsTheFootprintAndVerifiesNothing) {
  const test_support::TempDir dir;
  const fs::path file =
      dir.write("r.toml", reuse_campaign_text(dir.path() / "target",
                                              "[data]\nverify = false\n"
                                              "[memory]\nreuse_bytes = \"64 KiB\"\n"));
  RunOptions o;
  o.campaign = file.string();
  o.output = (dir.path() / "out").string();
  std::ostringstream out, err;
  ASSERT_EQ(run_campaign(o, out, err), 0) << err.str();
  std::vector<nlohmann::json> results;
  for (const auto& entry : fs::directory_iterator(dir.path() / "out")) {
    std::ifstream in(entry.path() / "results.jsonl");
    for (std::string line; std::getline(in, line);) results.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(results.size(), 1u);
  const nlohmann::json& r = results[0];
  EXPECT_EQ(r["status"], "ok") << r["error"];
  EXPECT_EQ(r["config"]["memory"]["reuse_bytes"], 65536);
  EXPECT_EQ(r["memory_bytes_per_process"], 65536);  // the restore reads into the write's buffer
  EXPECT_FALSE(r["verified"].get<bool>());
  std::string notes;
  for (const auto& n : r["notes"]) notes += n.get<std::string>() + "\n";
  EXPECT_NE(notes.find("memory.reuse_bytes: every request moved through one buffer of 65536 bytes"),
            std::string::npos)
      << notes;
}

}  // namespace
}  // namespace ckpt::harness
