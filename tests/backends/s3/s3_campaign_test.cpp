// Campaigns through the s3 backend against a real S3 server (moto's, started by run_with_moto.sh
// with CKPT_TEST_S3_* and AWS_* in the environment): a checkpoint written and restored verified,
// and the requests it made counted in results.jsonl, exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

class S3Campaign : public ::testing::Test {
 protected:
  void SetUp() override {
    if (environment("CKPT_TEST_S3_ENDPOINT").empty())
      GTEST_SKIP() << "no S3 server: run through tests/backends/s3/run_with_moto.sh";
  }

  // The tiny model's full state, one rank, file per rank, `iterations` timed iterations, through
  // s3 under a prefix of its own.
  std::vector<nlohmann::json> run(const std::string& name, int iterations) {
    const fs::path model = dir_.write("tiny.toml", kTinyModel);
    const fs::path file =
        dir_.write(name + ".toml", campaign_toml(name, dir_ / "target", R"(create_target = true
iterations = )" + std::to_string(iterations) + R"(
warmup = 0
[model]
name = ")" + model.string() + R"("
[state]
scope = "full"
[cache]
policy = "none"
[backend]
name = "s3"
)"));
    const fs::path output = dir_ / ("out-" + name);
    const Outcome o = ckptbench({"run", file.string(), "--output", output.string(), "-q", "--set",
                                 "backend.s3.endpoint=" + environment("CKPT_TEST_S3_ENDPOINT"),
                                 "--set", "backend.s3.bucket=" + environment("CKPT_TEST_S3_BUCKET"),
                                 "--set", "backend.s3.region=" + environment("CKPT_TEST_S3_REGION"),
                                 "--set", "backend.s3.prefix=" + name});
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    return read_results(output);
  }

  Scratch dir_;
};

// Each iteration writes the rank's one data file as one PUT (it is below the part size) and reads
// it back as one ranged GET; nothing is retried or throttled on a local server.
TEST_F(S3Campaign, WriteAndRestoreVerifyAndCountEveryRequest) {
  const std::vector<nlohmann::json> records = run("counted", 2);
  ASSERT_EQ(records.size(), 1u);
  const nlohmann::json& r = records[0];
  EXPECT_EQ(r.at("status"), "ok") << r.dump();
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& write = r.at("phases").at("write").at("counters");
  const nlohmann::json& read = r.at("phases").at("read").at("counters");
  EXPECT_EQ(write.at("requests.put"), 2) << write.dump();
  EXPECT_EQ(write.at("requests.part"), 0);
  EXPECT_EQ(write.at("requests.ranged_get"), 0);
  EXPECT_EQ(read.at("requests.ranged_get"), 2) << read.dump();
  EXPECT_EQ(read.at("requests.put"), 0);
  for (const nlohmann::json* counters : {&write, &read}) {
    EXPECT_EQ(counters->at("retries"), 0);
    EXPECT_EQ(counters->at("throttled"), 0);
  }
}

}  // namespace
}  // namespace ckpt::integration
