// Hostile manifests on the paths that read them (`run --phase restore`, `ckptbench load`): deep
// nesting, a wrongly typed field and an absurd size each end with exit 2 and one message naming
// the manifest and the key — never a crash, an allocation of the absurd size or the JSON
// library's own text.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

class HostileManifest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Outcome write = ckptbench({"run", campaign_.string(), "--phase", "checkpoint", "--output",
                                     (dir_ / "w").string(), "-q"});
    ASSERT_EQ(write.exit_code, 0) << write.describe();
    kept_ = latest_checkpoint(dir_ / "target" / "hm" / "case-0000");
    ASSERT_FALSE(kept_.empty());
    pristine_ = read_text(kept_ / kManifest);
  }
  // The manifest with its first `from` replaced by `to`.
  void edit(const std::string& from, const std::string& to) {
    std::string text = pristine_;
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(kept_ / kManifest, std::ios::trunc) << text;
  }
  Outcome restore() {
    return ckptbench(
        {"run", campaign_.string(), "--phase", "restore", "--output", (dir_ / "r").string(), "-q"});
  }
  Outcome load() { return ckptbench({"load", kept_.string()}); }

  Scratch dir_;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  fs::path campaign_ = dir_.write(
      "hm.toml",
      campaign_toml("hm", dir_ / "target",
                    "create_target = true\nkeep = true\niterations = 1\nwarmup = 0\n"
                    "[model]\nname = \"" +
                        model_.string() +
                        "\"\n[state]\nscope = \"weights\"\n[cache]\npolicy = \"none\"\n"));
  fs::path kept_;
  std::string pristine_;
};

TEST_F(HostileManifest, SixtyThousandLevelsInAFieldExitTwoWithAMessage) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  for (const char* field : {"\"checksum_algorithm\":\"xxh3_64\"", "\"campaign\":\"hm\""}) {
    const std::string key = std::string(field).substr(0, std::string(field).find(':'));
    edit(field, key + ":" + deep);
    const std::string expected =
        (kept_ / kManifest).string() +
        ": not a ckptbench manifest (arrays and objects nested more than 32 deep (at byte ";
    for (const Outcome& o : {restore(), load()}) {
      EXPECT_EQ(o.exit_code, 2) << o.describe();
      EXPECT_TRUE(contains(o.err, expected)) << o.describe();
    }
  }
}

TEST_F(HostileManifest, WrongTypesAndAbsurdSizesAreNamedBeforeAnythingIsAllocated) {
  const std::string manifest = (kept_ / kManifest).string();
  edit("\"min_size\":", "\"min_size\":4611686018427387904,\"was\":");
  Outcome o = load();
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "ckptbench: error: " + manifest +
                 ": damaged manifest: `files[0].min_size`: must be a whole "
                 "number from 0 to 1125899906842624, found a number (4611686018427387904)"))
      << o.describe();
  edit("\"file_offset\":", "\"file_offset\":\"0\",\"was\":");
  for (const Outcome& r : {restore(), load()}) {
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_TRUE(contains(
        r.err, manifest +
                   ": damaged manifest: `tensors[0].file_offset`: must be a whole number, found a "
                   "string (\"0\")"))
        << r.describe();
    EXPECT_FALSE(contains(r.err, "json.exception")) << r.describe();
  }
  // The first tensor (two dimensions) 2^40 × 2^40 elements.
  std::smatch shape;
  ASSERT_TRUE(std::regex_search(pristine_, shape, std::regex(R"("global_shape":\[\d+,\d+\])")))
      << pristine_.substr(0, 400);
  edit(shape.str(), "\"global_shape\":[1099511627776,1099511627776]");
  o = load();
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, manifest +
                 ": damaged manifest: `tensors[0].global_shape`: holds more than 1125899906842624 "
                 "elements in all"))
      << o.describe();
  edit("\"path\":\"", "\"path\":\"../../");
  o = load();
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(
      contains(o.err, manifest + ": damaged manifest: `files[0].path`: names file \"../../"))
      << o.describe();
  EXPECT_TRUE(contains(o.err, "\", which is not a file inside the checkpoint's directory"))
      << o.describe();
  // The untouched manifest still loads.
  std::ofstream(kept_ / kManifest, std::ios::trunc) << pristine_;
  o = load();
  EXPECT_EQ(o.exit_code, 0) << o.describe();
}

}  // namespace
}  // namespace ckpt::integration
