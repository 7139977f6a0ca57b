// Memory spaces inside runs: the [memory] keys, device staging through the harness (with
// emulated device memory, so it runs without a GPU), and whole campaigns in pinned and Kokkos
// memory; a cuda case without a device fails before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
#include "harness/memory/memory_spaces.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/memory_test_support.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

std::string campaign_text(const fs::path& target, const std::string& memory) {
  return "[campaign]\nname = \"mem\"\ntarget = \"" + target.string() +
         "\"\ncreate_target = true\niterations = 1\nwarmup = 0\n"
         "[model]\nname = \"llama3-8b\"\nscale = 4096\n"
         "[parallel]\ntp = 2\npp = 2\n"
         "[backend]\nname = \"posix\"\nsync = \"none\"\n"
         "[cache]\npolicy = \"none\"\n" +
         memory;
}

TEST(MemoryKeys, DefaultsAndValues) {
  const Case plain = parse_campaign(campaign_text("/t", ""), "m.toml", {}).cases.at(0);
  EXPECT_EQ(plain.memory_space, MemorySpaceKind::host);
  EXPECT_EQ(plain.staging.chunk_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(plain.staging.buffers, 2);
  EXPECT_EQ(plain.config["memory"], nlohmann::json({{"space", "host"},
                                                    {"staging_bytes", 64 << 20},
                                                    {"staging_buffers", 2},
                                                    {"reuse_bytes", 0}}));
  const Campaign swept =
      parse_campaign(campaign_text("/t",
                                   "[memory]\nspace = [\"pinned\", \"cuda\", "
                                   "\"kokkos\"]\nstaging_bytes = \"8 MiB\"\nstaging_buffers = 3\n"),
                     "m.toml", {});
  ASSERT_EQ(swept.cases.size(), 3u);
  EXPECT_EQ(swept.cases[1].memory_space, MemorySpaceKind::cuda);
  EXPECT_EQ(swept.cases[2].memory_space, MemorySpaceKind::kokkos);
  EXPECT_EQ(swept.cases[0].staging.chunk_bytes, 8u << 20);
  EXPECT_EQ(swept.cases[0].staging.buffers, 3);
}

std::string error_of(const std::string& memory, const std::vector<std::string>& overrides = {}) {
  try {
    parse_campaign(campaign_text("/t", memory), "m.toml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MemoryKeys, ErrorsNameTheKey) {
  EXPECT_NE(error_of("[memory]\nspcae = \"host\"\n")
                .find("`memory.spcae`: unknown key — did you mean `space`?"),
            std::string::npos)
      << error_of("[memory]\nspcae = \"host\"\n");
  const std::string device = error_of("[memory]\nspace = \"device\"\n");
  EXPECT_NE(
      device.find(
          "unknown value \"device\", expected one of \"host\", \"pinned\", \"cuda\", \"kokkos\""),
      std::string::npos)
      << device;
  const std::string odd = error_of("[memory]\nstaging_bytes = 5000\n");
  EXPECT_NE(odd.find("`memory.staging_bytes`: 5000 is not a multiple of 4096"), std::string::npos)
      << odd;
  EXPECT_NE(error_of("", {"memory.staging_buffers=0"}).find("must be at least 1"),
            std::string::npos);
  const std::string direct = error_of("[memory]\nstaging_bytes = \"12 KiB\"\n",
                                      {"backend.direct=true", "backend.direct_alignment=8192"});
  EXPECT_NE(direct.find("not a multiple of 8192"), std::string::npos) << direct;
}

// The harness's staging path end to end: a device buffer (emulated) filled, written through
// pinned chunks by posix, zeroed, read back through the chunks and verified.
TEST(StagedRun, DeviceMemoryRoundTripsThroughPosixInChunks) {
  const test_support::TempDir dir;
  const Case c = parse_campaign(campaign_text(dir.path(), ""), "m.toml", {}).cases.at(0);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const std::vector<RankPlan> plans =
      plan_ranks(layout, c, selected_ranks(c, layout.world_size()), dir.path() / "step");
  ASSERT_EQ(plans.size(), 4u);
  fs::create_directories(dir.path() / "step");
  memory_test::EmulatedDeviceSpace space;
  ProcessBuffer buffer(plans, space);
  ASSERT_EQ(buffer.view().kind, backends::MemoryKind::device);
  const auto checksums = fill_plans(plans, buffer, c.data);
  const auto posix = backends::make_backend("posix", c.io);
  SingleComm comm;
  EXPECT_THROW(timed_transfer(*posix, plans, buffer, true, comm), std::invalid_argument)
      << "posix cannot address device memory: the harness must stage it";

  buffer.prepare_staging({65536, 2}, false);
  const ProcessSample written = timed_transfer(*posix, plans, buffer, true, comm);
  ASSERT_EQ(written.error, "");
  std::uint64_t chunks = 0;
  for (const std::string& line : space.log) chunks += line.rfind("start", 0) == 0 ? 1 : 0;
  EXPECT_GT(chunks, 4u);
  EXPECT_DOUBLE_EQ(written.copy_seconds, 0.25 * static_cast<double>(chunks));
  ASSERT_EQ(written.rank_seconds.size(), 4u);

  buffer.zero();
  EXPECT_NE(verify_plans(plans, buffer, c.data), "");
  const ProcessSample read = timed_transfer(*posix, plans, buffer, false, comm);
  ASSERT_EQ(read.error, "");
  EXPECT_GT(read.copy_seconds, 0);
  EXPECT_EQ(verify_plans(plans, buffer, c.data), "");
  EXPECT_EQ(fill_plans(plans, buffer, c.data), checksums);

  // A wrong byte in rank 2's part is reported with its tensor and offset.
  const PlacedShard& shard = plans[2].shards.at(1);
  std::byte flipped{};
  buffer.memory().copy_to_host(buffer.offset(2) + shard.memory_offset + 7, {&flipped, 1});
  flipped ^= std::byte{0xff};
  buffer.memory().copy_from_host(buffer.offset(2) + shard.memory_offset + 7, {&flipped, 1});
  const std::string problem = verify_plans(plans, buffer, c.data);
  EXPECT_NE(problem.find("tensor " + shard.shard.name), std::string::npos) << problem;
  EXPECT_NE(problem.find("rank " + std::to_string(shard.rank) + ") at global element "),
            std::string::npos)
      << problem;
  EXPECT_NE(problem.find("byte 7 of the shard"), std::string::npos) << problem;
}

struct RunOutput {
  int status = 0;
  std::string out, err;
  std::vector<nlohmann::json> results;
};

RunOutput run(const fs::path& file, const fs::path& output,
              const std::vector<std::string>& overrides = {}, const std::string& phase = "") {
  RunOptions o;
  o.campaign = file.string();
  o.overrides = overrides;
  o.output = output.string();
  o.phase = phase;
  std::ostringstream out, err;
  RunOutput r;
  r.status = run_campaign(o, out, err);
  r.out = out.str();
  r.err = err.str();
  if (fs::exists(output)) {
    for (const auto& entry : fs::directory_iterator(output)) {
      std::ifstream in(entry.path() / "results.jsonl");
      for (std::string line; std::getline(in, line);)
        r.results.push_back(nlohmann::json::parse(line));
    }
  }
  return r;
}

std::vector<std::string> spaces_here(std::initializer_list<MemorySpaceKind> wanted) {
  const MemorySpaces spaces;
  std::vector<std::string> names;
  for (MemorySpaceKind kind : wanted) {
    if (!spaces.unavailable(kind))
      names.push_back("\"" + std::string(memory_space_name(kind)) + "\"");
  }
  return names;
}

TEST(MemoryCampaign, PinnedAndKokkosRoundTripAndVerifyThroughPosix) {
  const test_support::TempDir dir;
  const std::vector<std::string> names =
      spaces_here({MemorySpaceKind::pinned, MemorySpaceKind::kokkos});
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  const fs::path file = dir.write(
      "mem.toml", campaign_text(dir.path() / "target", "[memory]\nspace = [" + list + "]\n"));
  const RunOutput r = run(file, dir.path() / "out");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(r.results.size(), names.size());
  for (const nlohmann::json& j : r.results) {
    EXPECT_EQ(j["status"], "ok") << j["error"];
    EXPECT_TRUE(j["verified"].get<bool>()) << j.dump();
    EXPECT_TRUE(j["staging"].is_null());
    EXPECT_TRUE(j["d2h_seconds"].is_null());
  }
  EXPECT_EQ(r.results[0]["memory_space"], "pinned");
  if (MemorySpaces().unavailable(MemorySpaceKind::cuda)) {
    ASSERT_FALSE(r.results[0]["notes"].empty());
    EXPECT_NE(r.results[0]["notes"][0].get<std::string>().find("mlock instead of cudaMallocHost"),
              std::string::npos);
  }
  if (names.size() == 2) {
    EXPECT_EQ(r.results[1]["memory_space"], "kokkos");
  } else {
    std::printf("kokkos not run: %s\n",
                MemorySpaces().unavailable(MemorySpaceKind::kokkos)->c_str());
  }
}

TEST(MemoryCampaign, ACheckpointWrittenFromKokkosMemoryRestoresIntoHostMemory) {
  if (const auto why = MemorySpaces().unavailable(MemorySpaceKind::kokkos)) GTEST_SKIP() << *why;
  const test_support::TempDir dir;
  const fs::path file = dir.write("mem.toml", campaign_text(dir.path() / "target", ""));
  const RunOutput written = run(file, dir.path() / "out1", {"memory.space=kokkos"}, "checkpoint");
  ASSERT_EQ(written.status, 0) << written.err;
  const RunOutput restored = run(file, dir.path() / "out2", {"memory.space=host"}, "restore");
  ASSERT_EQ(restored.status, 0) << restored.err;
  ASSERT_EQ(restored.results.size(), 1u);
  EXPECT_TRUE(restored.results[0]["verified"].get<bool>());
  EXPECT_EQ(restored.results[0]["memory_space"], "host");
}

// On a GPU machine: device memory staged through pinned chunks to posix and restored; the same
// checkpoint restored into host memory; and the null backend, which takes device memory as it is.
TEST(MemoryCampaign, CudaMemoryIsStagedThroughPinnedChunksAndRestoresAnywhere) {
  if (const auto why = MemorySpaces().unavailable(MemorySpaceKind::cuda))
    GTEST_SKIP() << "memory.space = \"cuda\": " << *why;
  const test_support::TempDir dir;
  const fs::path file = dir.write(
      "mem.toml",
      campaign_text(
          dir.path() / "target",
          "[memory]\nspace = \"cuda\"\nstaging_bytes = \"64 KiB\"\nstaging_buffers = 3\n"));
  const RunOutput staged = run(file, dir.path() / "out1", {"campaign.keep=true"});
  ASSERT_EQ(staged.status, 0) << staged.err;
  ASSERT_EQ(staged.results.size(), 1u);
  const nlohmann::json& j = staged.results[0];
  EXPECT_TRUE(j["verified"].get<bool>()) << j.dump();
  EXPECT_EQ(j["memory_space"], "cuda");
  EXPECT_EQ(j["staging"],
            nlohmann::json({{"mode", "pipelined"}, {"chunk_bytes", 65536}, {"buffers", 3}}));
  EXPECT_GT(j["d2h_seconds"].get<double>(), 0);
  EXPECT_GT(j["h2d_seconds"].get<double>(), 0);
  EXPECT_LE(j["d2h_seconds"].get<double>(), j["write_seconds"].get<double>());
  const RunOutput into_host = run(file, dir.path() / "out2", {"memory.space=host"}, "restore");
  ASSERT_EQ(into_host.status, 0) << into_host.err;
  EXPECT_TRUE(into_host.results.at(0)["verified"].get<bool>());
  const RunOutput direct =
      run(file, dir.path() / "out3", {"backend.name=null", "campaign.overwrite=true"});
  ASSERT_EQ(direct.status, 0) << direct.err;
  EXPECT_TRUE(direct.results.at(0)["staging"].is_null()) << "null addresses device memory itself";
}

TEST(MemoryCampaign, CudaWithoutADeviceFailsUpFrontAndWritesNothing) {
  const auto why = MemorySpaces().unavailable(MemorySpaceKind::cuda);
  if (!why) GTEST_SKIP() << "a CUDA device is present";
  const test_support::TempDir dir;
  const fs::path file = dir.write(
      "mem.toml", campaign_text(dir.path() / "target", "[memory]\nspace = [\"host\", \"cuda\"]\n"));
  const RunOutput r = run(file, dir.path() / "out");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ckptbench: error: case 1: memory.space = \"cuda\": " + *why),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.err.find("no CUDA device (cudaGetDeviceCount: error 35") != std::string::npos ||
              r.err.find("this build has no CUDA") != std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out")) << "no results directory";
  EXPECT_FALSE(fs::exists(dir.path() / "target")) << "no checkpoint target";
}

}  // namespace
}  // namespace ckpt::harness
