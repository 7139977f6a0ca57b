#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// A committed gate baseline gates only runs whose config_hash it records; a change to the gated
// campaign, or to what the hash covers, would fail CI's gate step only after the whole plain
// suite. This catches it in seconds, and says how to fix it.
TEST(ShippedBaselines, MatchTheirCampaignsConfigHash) {
#ifdef CKPT_SOURCE_DIR
  const fs::path root = CKPT_SOURCE_DIR;
  std::vector<fs::path> baselines;
  for (const auto& entry : fs::directory_iterator(root / "results" / "baselines"))
    if (entry.path().extension() == ".json") baselines.push_back(entry.path());
  ASSERT_FALSE(baselines.empty());
  for (const fs::path& file : baselines) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file);
    const nlohmann::json baseline = nlohmann::json::parse(in);
    const std::string campaign_name = baseline.at("campaign").get<std::string>();
    const Campaign campaign = load_campaign(root / "configs" / (campaign_name + ".toml"), {});
    std::vector<std::string> hashes;
    for (const Case& c : campaign.cases) hashes.push_back(config_hash(c));
    for (const nlohmann::json& c : baseline.at("cases")) {
      const std::string hash = c.at("config_hash").get<std::string>();
      EXPECT_NE(std::find(hashes.begin(), hashes.end(), hash), hashes.end())
          << "baseline case " << c.at("label").get<std::string>() << " has config_hash " << hash
          << ", which no case of configs/" << campaign_name
          << ".toml has now: take the baseline again (ci/gate.sh --update-baseline, on a quiet "
             "machine of its class), or, where the workload is unchanged and only the hash's "
             "inputs moved, stamp the new hash";
    }
  }
#else
  GTEST_SKIP() << "CKPT_SOURCE_DIR is not defined: the build does not say where results/ is";
#endif
}

}  // namespace
}  // namespace ckpt::harness
