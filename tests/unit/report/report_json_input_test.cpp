// Untrusted JSON (parse_untrusted_json, JsonField): the limits hold before parsing, and every typed
// accessor names the file, the line and the key with what it found.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/common/json_input.hpp"
#include "harness/report/run_input.hpp"
#include "harness/results/schema_version.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using nlohmann::json;

const JsonSource kResultsSource{.file = "r.jsonl", .line = 3, .fix = "is this a results file?"};

std::string parse_error(const std::string& text, const JsonLimits& limits = {}) {
  try {
    parse_untrusted_json(text, kResultsSource, limits);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  EXPECT_EQ(parse_error(deep),
            "r.jsonl:3: arrays and objects nested more than 32 deep (at byte 32) — is this a "
            "results file?");
  const std::string objects = "{\"a\":" + std::string(40, '{') + std::string(40, '}') + "}";
  EXPECT_EQ(parse_error(objects),
            "r.jsonl:3: arrays and objects nested more than 32 deep (at byte 36) — is this a "
            "results file?");
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(parse_error("[\"" + std::string(100, '[') + "\\\"\"]"), "");
  EXPECT_EQ(parse_error(std::string(32, '[') + std::string(32, ']')), "");
}

TEST(JsonInput, StringsElementsAndSizeAreBounded) {
  EXPECT_EQ(parse_error("[\"abcdef\"]", {.max_string_bytes = 5}),
            "r.jsonl:3: a string of 6 bytes at byte 1, longer than the 5 allowed — is this a "
            "results file?");
  EXPECT_EQ(parse_error("[1,2,3,4,5]", {.max_elements = 4}),
            "r.jsonl:3: an array or object of more than 4 elements (at byte 8) — is this a results "
            "file?");
  EXPECT_EQ(parse_error("[1,2,3,4]", {.max_elements = 4}), "");
  EXPECT_EQ(
      parse_error("[1,2,3]", {.max_bytes = 6}),
      "r.jsonl:3: 7 bytes of JSON, more than the 6 this file may hold — is this a results file?");
}

TEST(JsonInput, ParserComplaintsWithoutTheLibrarysPrefix) {
  EXPECT_EQ(parse_error("{\"a\": 1e400}"),
            "r.jsonl:3: not JSON: number overflow parsing '1e400' — is this a results file?");
  const std::string bad = parse_error("{not json");
  EXPECT_EQ(bad,
            "r.jsonl:3: not JSON: parse error at line 1, column 3: syntax error while parsing "
            "object key - invalid "
            "literal; last read: '{no'; expected string literal — is this a results file?");
  EXPECT_EQ(bad.find("[json.exception"), std::string::npos) << bad;
}

std::string field_error(const json& j, const std::function<void(const JsonField&)>& read) {
  try {
    read(JsonField(j, kResultsSource));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, EachAccessorNamesFileLineKeyAndWhatItFound) {
  const json j =
      json::parse(R"({"a": {"gib_per_s": "fast", "n": -2, "f": 1.5, "big": 18446744073709551615,
                                   "list": [1, "x"], "on": 1, "name": 7, "obj": [1, 2]}})");
  const std::string fix = " — is this a results file?";
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("gib_per_s").number(); }),
            "r.jsonl:3: `a.gib_per_s`: must be a number, found a string (\"fast\")" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("n").non_negative(); }),
            "r.jsonl:3: `a.n`: must be a number of at least 0, found -2" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("n").count(); }),
            "r.jsonl:3: `a.n`: must be a whole number from 0 to 18446744073709551615, found a "
            "number (-2)" +
                fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("f").integer(0, 10); }),
            "r.jsonl:3: `a.f`: must be a whole number from 0 to 10, found a number (1.5)" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("big").integer(); }),
            "r.jsonl:3: `a.big`: must be a whole number from -9223372036854775808 to "
            "9223372036854775807, found a "
            "number (18446744073709551615)" +
                fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("big").count(1024); }),
            "r.jsonl:3: `a.big`: must be a whole number from 0 to 1024, found a number "
            "(18446744073709551615)" +
                fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("list").elements()[1].number(); }),
            "r.jsonl:3: `a.list[1]`: must be a number, found a string (\"x\")" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("list").elements(1); }),
            "r.jsonl:3: `a.list`: must hold at most 1 elements, found 2" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("on").boolean(); }),
            "r.jsonl:3: `a.on`: must be true or false, found a number (1)" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("name").string(); }),
            "r.jsonl:3: `a.name`: must be a string, found a number (7)" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("obj").object(); }),
            "r.jsonl:3: `a.obj`: must be an object, found an array of 2 elements" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("missing"); }),
            "r.jsonl:3: `a.missing`: missing" + fix);
  EXPECT_EQ(field_error(j, [](const JsonField& f) { f.at("a").at("name").at("x"); }),
            "r.jsonl:3: `a.name`: must be an object, found a number (7)" + fix);
  // What is right is read: an integral float counts as a whole number; null is absent.
  EXPECT_EQ(JsonField(json::parse("1e3"), kResultsSource).count(), 1000u);
  EXPECT_EQ(JsonField(json::parse("-4"), kResultsSource).integer(-5, 0), -4);
  EXPECT_FALSE(JsonField(json::parse(R"({"x": null})"), kResultsSource).find("x").has_value());
}

// A results line: each wrongly typed or negative field named with file, line and key; exit 2
// follows from ConfigError being a runtime_error.
TEST(RunInput, WrongTypesAndNegativeSamplesNameFileLineAndKey) {
  test_support::TempDir dir;
  const json good = {{"schema_version", kResultsSchemaVersion},
                     {"campaign", "t"},
                     {"case", json::object()},
                     {"status", "ok"},
                     {"bytes_per_checkpoint", 1024},
                     {"samples", {{"write_seconds", {1.0, 2.0}}}}};
  const auto error_of = [&dir](const json& j) {
    const auto file = dir.write("r.jsonl", "\n" + j.dump() + "\n");
    try {
      load_run(file);
    } catch (const std::runtime_error& e) {
      return std::string(e.what()).substr(file.string().size());
    }
    return std::string();
  };
  const std::string fix = " — is this a ckptbench results.jsonl (results/SCHEMA.md)?";
  EXPECT_EQ(error_of(good), "");
  json bad = good;
  bad["samples"]["write_seconds"][1] = -1.0;
  EXPECT_EQ(error_of(bad),
            ":2: `samples.write_seconds[1]`: must be a number of at least 0, found -1.0" + fix);
  bad = good;
  bad["samples"]["write_seconds"][0] = "nan";
  EXPECT_EQ(error_of(bad),
            ":2: `samples.write_seconds[0]`: must be a number, found a string (\"nan\")" + fix);
  bad = good;
  bad["bytes_per_checkpoint"] = "1 GiB";
  EXPECT_EQ(error_of(bad),
            ":2: `bytes_per_checkpoint`: must be a whole number, found a string (\"1 GiB\")" + fix);
  bad = good;
  bad["status"] = json::array();
  EXPECT_EQ(error_of(bad), ":2: `status`: must be a string, found an array of 0 elements" + fix);
  bad = good;
  bad["phases"] = {{"write", {{"open", "slow"}}}};
  EXPECT_EQ(error_of(bad),
            ":2: `phases.write.open`: must be a number, found a string (\"slow\")" + fix);
  bad = good;
  bad["training"] = {{"stall_seconds", -0.5}};
  EXPECT_EQ(error_of(bad),
            ":2: `training.stall_seconds`: must be a number of at least 0, found -0.5" + fix);
  bad = good;
  bad["world_size"] = 1.5;
  EXPECT_EQ(error_of(bad),
            ":2: `world_size`: must be a whole number from -9223372036854775808 to "
            "9223372036854775807, found a number "
            "(1.5)" +
                fix);
  const auto deep =
      dir.write("deep.jsonl", "{\"case\": {}, \"status\": " + std::string(60000, '[') +
                                  std::string(60000, ']') + ", \"bytes_per_checkpoint\": 1}\n");
  try {
    load_run(deep);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              deep.string() + ":1: arrays and objects nested more than 32 deep (at byte 54)" + fix);
  }
}

// The reader switches on schema_version and converts nothing: records of version 1 (before
// `integrity`, `dlio`, `workload_hash`, ... ) and 2 are read; one without a version (written
// before records carried it), of an older or a newer version, or with a version that is not a
// whole number is refused by file, line and key with what to do instead.
TEST(RunInput, RecordsOfAnotherSchemaVersionAreRefusedWithTheFix) {
  test_support::TempDir dir;
  const json good = {{"schema_version", kResultsSchemaVersion},
                     {"case", json::object()},
                     {"status", "ok"},
                     {"bytes_per_checkpoint", 1024}};
  const auto error_of = [&dir, &good](const json& j) {
    const auto file = dir.write("v.jsonl", good.dump() + "\n" + j.dump() + "\n");
    try {
      load_run(file);
    } catch (const ConfigError& e) {
      return std::string(e.what()).substr(file.string().size());
    }
    return std::string();
  };
  ASSERT_EQ(kResultsSchemaVersion, 5) << "the messages below name versions 1 to 5";
  ASSERT_EQ(kOldestReadResultsSchemaVersion, 1);
  EXPECT_EQ(error_of(good), "");
  json bad = good;
  bad["schema_version"] = 1;
  EXPECT_EQ(error_of(bad), "");
  bad["schema_version"] = 2;
  EXPECT_EQ(error_of(bad), "");
  bad["schema_version"] = 3;
  EXPECT_EQ(error_of(bad), "");
  bad["schema_version"] = 4;
  EXPECT_EQ(error_of(bad), "");
  bad.erase("schema_version");
  EXPECT_EQ(error_of(bad),
            ":2: `schema_version`: missing — written by a ckptbench from before results carried a "
            "schema version; this ckptbench reads schema_version 1 to 5 and converts no other: "
            "run the campaign again with this ckptbench (results/SCHEMA.md)");
  bad["schema_version"] = nullptr;
  EXPECT_EQ(error_of(bad).substr(0, 30), ":2: `schema_version`: missing ");
  bad["schema_version"] = 0;
  EXPECT_EQ(error_of(bad),
            ":2: `schema_version`: 0 — this ckptbench reads schema_version 1 to 5 and converts no "
            "other: run the campaign again with this ckptbench (results/SCHEMA.md)");
  bad["schema_version"] = 6;
  EXPECT_EQ(error_of(bad),
            ":2: `schema_version`: 6 — written by a newer ckptbench; this ckptbench reads "
            "schema_version 1 to 5: read it with the ckptbench that wrote it (its "
            "environment.git_revision) or run the campaign again with this ckptbench "
            "(results/SCHEMA.md)");
  bad["schema_version"] = "2";
  EXPECT_EQ(error_of(bad),
            ":2: `schema_version`: must be a whole number, found a string (\"2\") — this "
            "ckptbench reads schema_version 1 to 5 (results/SCHEMA.md)");
}

// A whole version 1 record committed in the tree (written before the version went up; it has no
// `integrity`, `dlio` or `workload_hash`) still loads, with its figures.
TEST(RunInput, AVersionOneRecordInTheTreeStillLoads) {
#ifdef CKPT_SOURCE_DIR
  const RunRecord run = load_run(std::string(CKPT_SOURCE_DIR) +
                                 "/tests/fuzz/seeds/results_record/tiny-weights.jsonl");
  ASSERT_EQ(run.cases.size(), 1u);
  const CaseRecord& c = run.cases[0];
  EXPECT_EQ(c.status, "ok");
  EXPECT_EQ(c.bytes, 213632u);
  EXPECT_EQ(c.backend, "posix");
  EXPECT_EQ(c.write.seconds, (std::vector<double>{0.001360209, 0.004129792, 0.003860391}));
  EXPECT_EQ(c.read.seconds, (std::vector<double>{8.1101e-05, 6.8172e-05, 7.8027e-05}));
  EXPECT_EQ(c.workload_hash, "");
  EXPECT_TRUE(c.integrity_warnings.empty());
#else
  GTEST_SKIP() << "CKPT_SOURCE_DIR is not defined: the build does not say where the tree is";
#endif
}

}  // namespace
}  // namespace ckpt::harness
