// Every fixture under tests/data/hf/fixtures: a config.json and what transformers builds from
// it (expected.json, written by tests/data/hf/make_fixtures.py on the meta device). The layout
// at TP 1 with Hugging Face names must hold exactly those tensors, with those shapes, and the
// same unique parameter count, with the default vocab_divisor (HF files are not padded).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"

namespace ckpt::workloads {
namespace {

namespace fs = std::filesystem;
using Shapes = std::map<std::string, std::vector<std::int64_t>>;

fs::path fixtures_dir() {
  return fs::path(CKPT_SOURCE_DIR) / "tests/data/hf/fixtures";
}

std::vector<fs::path> fixture_dirs() {
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& entry : fs::directory_iterator(fixtures_dir())) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

Layout hf_weights(const fs::path& config) {
  StateSpec state;
  state.scope = StateScope::weights;
  return Layout(harness::load_model_hf_json(config), ParallelSpec{}, state);
}

Shapes laid_out(const Layout& layout) {
  Shapes out;
  for (const Shard& s : layout.shards(0)) out[s.name] = s.global_shape;
  return out;
}

// The generator's digest: FNV-1a 64 over "name:d0,d1\n" in name order.
std::string digest(const Shapes& tensors) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const auto& [name, shape] : tensors) {
    std::string line = name + ":";
    for (std::size_t i = 0; i < shape.size(); ++i)
      line += (i ? "," : "") + std::to_string(shape[i]);
    line += "\n";
    for (const unsigned char c : line) h = (h ^ c) * 0x100000001B3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

TEST(HfFixtures, EveryTensorNameAndShapeAsTransformersWritesThem) {
  const std::vector<fs::path> dirs = fixture_dirs();
  ASSERT_GE(dirs.size(), 30U);
  for (const fs::path& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    const nlohmann::json expected = read_json(dir / "expected.json");
    const Layout layout = hf_weights(dir / "config.json");
    const Shapes ours = laid_out(layout);
    EXPECT_EQ(layout.parameters(), expected.at("parameters").get<std::int64_t>());
    EXPECT_EQ(static_cast<std::int64_t>(ours.size()),
              expected.at("tensor_count").get<std::int64_t>());
    EXPECT_EQ(digest(ours), expected.at("digest").get<std::string>());
    if (!expected.contains("tensors")) continue;
    const auto theirs = expected.at("tensors").get<Shapes>();
    for (const auto& [name, shape] : theirs) {
      const auto it = ours.find(name);
      if (it == ours.end()) {
        ADD_FAILURE() << "missing " << name;
      } else {
        EXPECT_EQ(it->second, shape) << name;
      }
    }
    for (const auto& [name, shape] : ours) EXPECT_TRUE(theirs.count(name)) << "extra " << name;
  }
}

TEST(HfFixtures, DigestMatchesTheGeneratorsOnAKnownList) {
  // make_fixtures.digest({"a.weight": [2, 3], "b": [4]}) in Python.
  EXPECT_EQ(digest({{"a.weight", {2, 3}}, {"b", {4}}}), "ac354de3043f077d");
  EXPECT_NE(digest({{"a.weight", {2, 3}}}), digest({{"a.weight", {3, 2}}}));
}

}  // namespace
}  // namespace ckpt::workloads
