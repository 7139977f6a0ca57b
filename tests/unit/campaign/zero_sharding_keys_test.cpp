// parallel.zero_sharding: parsed into the case, refused below ZeRO-3 and for the layouts whose
// frameworks partition flat buffers, each time naming the key and the fix.
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness::campaign_test {
namespace {

const std::string kPerTensor = "[parallel]\ndp = 2\nzero = 3\nzero_sharding = \"per_tensor\"\n";

TEST(ZeroShardingKey, FlatByDefaultAndPerTensorWhenAsked) {
  EXPECT_EQ(parse(kBase).cases.at(0).parallel.zero_sharding, workloads::ZeroSharding::flat);
  EXPECT_EQ(parse(kBase + kPerTensor).cases.at(0).parallel.zero_sharding,
            workloads::ZeroSharding::per_tensor);
}

TEST(ZeroShardingKey, PerTensorNeedsZeroThree) {
  const ConfigError e =
      error_of(kBase + "[parallel]\ndp = 2\nzero = 1\nzero_sharding = \"per_tensor\"\n");
  EXPECT_EQ(e.key(), "parallel.zero_sharding");
  EXPECT_NE(std::string(e.what()).find("set zero = 3, or zero_sharding = \"flat\""),
            std::string::npos)
      << e.what();
}

TEST(ZeroShardingKey, OnlyTheDcpLayoutTakesPerTensor) {
  for (const char* layout : {"megatron", "megatron_dist", "deepspeed"}) {
    const ConfigError e =
        error_of(kBase + kPerTensor + "[strategy]\nlayout = \"" + layout + "\"\n");
    EXPECT_EQ(e.key(), "parallel.zero_sharding") << layout;
    EXPECT_NE(std::string(e.what()).find("set strategy.layout = \"dcp\""), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(parse(kBase + kPerTensor + "[strategy]\nlayout = \"dcp\"\n"));
}

}  // namespace
}  // namespace ckpt::harness::campaign_test
