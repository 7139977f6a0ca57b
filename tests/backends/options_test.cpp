#include "backends/options.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "backends/registry.hpp"

namespace ckpt::backends {
namespace {

const OptionTable kTable{
    {.name = "flag", .type = OptionType::boolean, .default_value = "true", .help = "a flag"},
    {.name = "count",
     .type = OptionType::integer,
     .default_value = "4",
     .help = "a count",
     .min = 1,
     .max = 64},
    {.name = "bytes",
     .type = OptionType::size,
     .default_value = "4096",
     .help = "a size",
     .min = 512},
    {.name = "mode",
     .type = OptionType::choice,
     .default_value = "fast",
     .help = "a mode",
     .choices = {"fast", "safe"}},
    {.name = "path", .type = OptionType::text, .default_value = "lib.so", .help = "a path"},
    {.name = "hints", .type = OptionType::string_map, .help = "hints"}};

std::string error_of(const BackendOptions& given) {
  try {
    OptionValues("demo", kTable, given);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(OptionValues, DefaultsApplyWhereNothingIsGiven) {
  const OptionValues values("demo", kTable, {});
  EXPECT_TRUE(values.boolean("flag"));
  EXPECT_EQ(values.integer("count"), 4);
  EXPECT_EQ(values.integer("bytes"), 4096);
  EXPECT_EQ(values.text("mode"), "fast");
  EXPECT_EQ(values.text("path"), "lib.so");
  EXPECT_TRUE(values.sub_keys("hints").empty());
  EXPECT_EQ(values.all(), (BackendOptions{{"bytes", "4096"},
                                          {"count", "4"},
                                          {"flag", "true"},
                                          {"mode", "fast"},
                                          {"path", "lib.so"}}));
}

TEST(OptionValues, GivenValuesWinAndSubKeysLoseTheirPrefix) {
  const OptionValues values(
      "demo", kTable,
      {{"flag", "false"}, {"count", "64"}, {"mode", "safe"}, {"hints.cb_nodes", "4"}});
  EXPECT_FALSE(values.boolean("flag"));
  EXPECT_EQ(values.integer("count"), 64);
  EXPECT_EQ(values.text("mode"), "safe");
  EXPECT_EQ(values.sub_keys("hints"), (std::map<std::string, std::string>{{"cb_nodes", "4"}}));
}

TEST(OptionValues, BadInputNamesTheKeyAndWhatIsExpected) {
  EXPECT_EQ(error_of({{"flg", "true"}}),
            "demo: unknown option `backend.demo.flg` — did you mean `flag`? (options: flag count "
            "bytes mode path hints)");
  EXPECT_EQ(error_of({{"hints", "x"}}),
            "demo: `backend.demo.hints` is a table: give its entries as "
            "`backend.demo.hints.<name>` = value");
  EXPECT_EQ(error_of({{"flag", "yes"}}),
            "demo: `backend.demo.flag` = \"yes\": expected true or false");
  EXPECT_EQ(error_of({{"count", "65"}}),
            "demo: `backend.demo.count` = \"65\": expected an integer from 1 to 64");
  EXPECT_EQ(error_of({{"count", "4x"}}),
            "demo: `backend.demo.count` = \"4x\": expected an integer from 1 to 64");
  EXPECT_EQ(error_of({{"bytes", "100"}}),
            "demo: `backend.demo.bytes` = \"100\": expected a byte count from 512");
  EXPECT_EQ(
      error_of({{"mode", "fats"}}),
      "demo: `backend.demo.mode` = \"fats\": expected one of fast, safe — did you mean `fast`?");
  EXPECT_EQ(error_of({{"path", ""}}),
            "demo: `backend.demo.path` = \"\": expected a non-empty string");
  EXPECT_EQ(error_of({{"count", "1"}, {"bytes", "512"}, {"hints.anything", "v"}}), "");
}

TEST(OptionValues, AskingForAnUndeclaredOptionIsAProgrammingError) {
  const OptionValues values("demo", kTable, {});
  EXPECT_THROW(values.boolean("count"), std::logic_error);
  EXPECT_THROW(values.text("nothing"), std::logic_error);
}

TEST(CheckSettings, RefusalsNameTheSettingAndTheAdvice) {
  const Capabilities caps{
      .threads = false, .max_queue_depth = 8, .advice = {{"threads", "run more processes"}}};
  const auto error_for = [&](const IoSettings& settings) -> std::string {
    try {
      check_settings("demo", caps, settings);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_for({}), "");
  EXPECT_EQ(error_for({.queue_depth = 8}), "");
  EXPECT_EQ(error_for({.threads = 2}),
            "demo: `backend.threads` must be 1 (got 2; capabilities: threads = false): run more "
            "processes");
  EXPECT_EQ(error_for({.queue_depth = 9}),
            "demo: `backend.queue_depth` must be from 1 to 8 (got 9)");
  EXPECT_EQ(error_for({.direct = true}),
            "demo: `backend.direct` is not supported (capabilities: direct_io = false)");
  EXPECT_EQ(error_for({.fallocate = true}),
            "demo: `backend.fallocate` is not supported (capabilities: fallocate = false)");
  EXPECT_EQ(error_for({.sqpoll = true}),
            "demo: `backend.sqpoll` is not supported (capabilities: sqpoll = false)");
}

// The skeleton is the template for new backends: its one option reaches it through the registry.
TEST(SkeletonBackend, ItsOptionIsCheckedByTheRegistry) {
  try {
    make_backend("skeleton", {}, {{"block_bytes", "100"}});
    ADD_FAILURE() << "accepted block_bytes = 100";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "skeleton: `backend.skeleton.block_bytes` = \"100\": expected a byte count from 4096 "
              "to 1073741824");
  }
  EXPECT_NE(make_backend("skeleton", {}, {{"block_bytes", "4096"}}), nullptr);
  EXPECT_THROW(make_backend("skeleton", IoSettings{.threads = 2}), std::invalid_argument);
}

}  // namespace
}  // namespace ckpt::backends
