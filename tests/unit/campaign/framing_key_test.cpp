// strategy.framing: on where the files can carry torch.save's framing unless set, off where they
// cannot, and "on" there refused naming the key that rules it out; the config records the value
// in effect.
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness::campaign_test {
namespace {

std::string framing_of(const Case& c) {
  return c.config.at("strategy").at("framing");
}

TEST(FramingKey, OnByDefaultOffWhenAskedAndRecordedAsInEffect) {
  const Case on = parse(kBase).cases.at(0);
  EXPECT_TRUE(on.framing);
  EXPECT_EQ(framing_of(on), "on");
  const Case off = parse(kBase + "[strategy]\nframing = \"off\"\n").cases.at(0);
  EXPECT_FALSE(off.framing);
  EXPECT_EQ(framing_of(off), "off");
}

TEST(FramingKey, UnsetIsOffWhereTheFilesHoldNoArchives) {
  for (const std::string& toml :
       {std::string("[strategy]\nformat = \"safetensors\"\n[state]\nscope = \"weights\"\n"),
        std::string("[strategy]\ncompression = \"zstd\"\n"),
        std::string("[strategy]\nselective_every = 2\n"),
        std::string("[backend]\nname = \"hdf5\"\n")}) {
    const Case c = parse(kBase + toml).cases.at(0);
    EXPECT_FALSE(c.framing) << toml;
    EXPECT_EQ(framing_of(c), "off") << toml;
  }
}

TEST(FramingKey, OnWhereTheFilesHoldNoArchivesIsRefusedNamingTheKey) {
  const ConfigError e = error_of(kBase + "[strategy]\nframing = \"on\"\ncompression = \"zstd\"\n");
  EXPECT_EQ(e.key(), "strategy.framing");
  EXPECT_NE(std::string(e.what()).find("strategy.compression rules them out (a compressed "
                                       "checkpoint stores ckptbench's frames, not archives): set "
                                       "strategy.framing = \"off\", or change "
                                       "strategy.compression"),
            std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace ckpt::harness::campaign_test
