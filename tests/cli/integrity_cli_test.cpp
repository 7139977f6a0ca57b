// The integrity checks through the binary: a run under an LD_PRELOAD shim that makes
// posix_fadvise a no-op (built with the tests) is flagged in its record and on the console, a run
// without it is not; the durability probe ran in the target. Skipped under sanitizers, whose
// runtime must come first in the library list.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

const std::string kShim = CKPT_FADVISE_SHIM;

class IntegrityCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitizedBuild) GTEST_SKIP() << "a sanitizer's runtime must be the first library";
  }
  // The tiny model's full state, one timed checkpoint and restore, the cache dropped by fadvise;
  // run through `prefix` (e.g. env LD_PRELOAD=...). Its one record.
  nlohmann::json run(const std::string& name, const std::vector<std::string>& prefix,
                     Outcome& outcome) {
    const fs::path file =
        dir_.write(name + ".toml", tiny_full_state_campaign(dir_, name, 1, 0, ""));
    std::vector<std::string> argv = prefix;
    for (const std::string& arg : {kBinary, std::string("run"), file.string(),
                                   std::string("--output"), (dir_ / ("out-" + name)).string(),
                                   std::string("--set"), std::string("cache.policy=fadvise")})
      argv.push_back(arg);
    outcome = run_process(argv);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.describe();
    const std::vector<nlohmann::json> records = read_results(dir_ / ("out-" + name));
    EXPECT_EQ(records.size(), 1u);
    return records.empty() ? nlohmann::json::object() : records.front();
  }

  Scratch dir_;
};

TEST_F(IntegrityCli, ANoOpFadviseShimIsFlaggedAndAPlainRunIsNot) {
  Outcome shimmed;
  const nlohmann::json with = run("shimmed", {"/usr/bin/env", "LD_PRELOAD=" + kShim}, shimmed);
  const nlohmann::json& preload = with.at("integrity").at("preload");
  EXPECT_EQ(preload.at("ld_preload"), kShim);
  const auto interposed = preload.at("interposed").get<std::vector<std::string>>();
  EXPECT_EQ(interposed, (std::vector<std::string>{"posix_fadvise (" + kShim + ")",
                                                  "posix_fadvise64 (" + kShim + ")"}));
  const auto warnings = with.at("integrity").at("warnings").get<std::vector<std::string>>();
  const std::string flagged = "posix_fadvise is defined by " + kShim +
                              ", not the C library: the call may not do what the result assumes";
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), flagged), warnings.end())
      << with.at("integrity").dump(2);
  EXPECT_NE(shimmed.out.find("case 0: integrity warning: " + flagged), std::string::npos)
      << shimmed.out;

  Outcome plain;
  const nlohmann::json without = run("plain", {}, plain);
  EXPECT_EQ(without.at("integrity").at("preload").at("ld_preload"), nullptr);
  EXPECT_EQ(without.at("integrity").at("preload").at("interposed"), nlohmann::json::array());
  EXPECT_EQ(plain.out.find("integrity warning: LD_PRELOAD"), std::string::npos) << plain.out;
  // The probe ran in the target and left nothing there.
  const nlohmann::json& probe = without.at("integrity").at("durability");
  EXPECT_EQ(probe.at("probed"), true) << probe.dump();
  EXPECT_EQ(probe.at("bytes"), 4u << 20);
  EXPECT_GT(probe.at("fsync_seconds").get<double>(), 0.0);
  for (const auto& entry : fs::directory_iterator(dir_ / "target"))
    EXPECT_EQ(entry.path().filename().string().find(".ckptbench-durability-probe"),
              std::string::npos);
  EXPECT_EQ(without.at("integrity").at("done").at("write"),
            "every process's last write call returned, then its fsync of each file returned and "
            "the file was closed; the clock stops at the latest process's end, before the "
            "manifest commit");
}

}  // namespace
}  // namespace ckpt::integration
