// A delta checkpoint's tensors entries (strategy.delta_every): the `delta` object written and read
// back exactly, and refused where its runs leave the piece, overlap, or have no base.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {
namespace {

ManifestTensor delta_entry() {
  ManifestTensor t;
  t.shard.name = "model.layers.0.mlp.up_proj.weight";
  t.shard.dtype = workloads::Dtype::bf16;
  t.shard.global_shape = {64, 64};
  t.shard.offset = {0, 0};
  t.shard.extent = {64, 64};
  t.shard.flat_begin = 0;
  t.shard.flat_end = 4096;
  t.file = "__0_0.distcp";
  t.file_offset = 8192;
  t.bytes = 8192;
  t.checksum = "00000000000000aa";
  t.checkpoint = "step_0000001";
  t.delta_file = "__0_0.distcp";
  t.delta = {{.offset = 0, .bytes = 4096, .file_offset = 0},
             {.offset = 4096, .bytes = 4096, .file_offset = 4096}};
  return t;
}

// The message parse_manifest_tensors gives for the entry's JSON after `change`.
template <typename Change>
std::string refusal(Change change) {
  nlohmann::json j = manifest_tensors_json({delta_entry()});
  change(j.at(0));
  try {
    parse_manifest_tensors(j.dump());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(DeltaManifest, TheRunsAreWrittenAndReadBackExactly) {
  const nlohmann::json j = manifest_tensors_json({delta_entry()});
  EXPECT_EQ(j.at(0).at("delta"),
            nlohmann::json::parse(
                R"({"file": "__0_0.distcp", "runs": [[0, 4096, 0], [4096, 4096, 4096]]})"));
  const std::vector<ManifestTensor> back = parse_manifest_tensors(j.dump());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].delta_file, "__0_0.distcp");
  EXPECT_EQ(back[0].delta, delta_entry().delta);
  EXPECT_EQ(back[0].checkpoint, "step_0000001");
}

TEST(DeltaManifest, RunsOutsideThePieceOverlappingOrWithoutABaseAreRefused) {
  EXPECT_NE(refusal([](nlohmann::json& t) {
              t["delta"]["runs"][1][0] = 6144;
            }).find("inside the piece's 8192 bytes"),
            std::string::npos);
  EXPECT_NE(refusal([](nlohmann::json& t) {
              t["delta"]["runs"][1][0] = 2048;
            }).find("after the previous one"),
            std::string::npos);
  EXPECT_NE(refusal([](nlohmann::json& t) { t.erase("checkpoint"); }).find("needs the entry's"),
            std::string::npos);
  EXPECT_NE(refusal([](nlohmann::json& t) {
              t["delta"]["file"] = "../x";
            }).find("must be a file inside the checkpoint"),
            std::string::npos);
  EXPECT_NE(refusal([](nlohmann::json& t) {
              t["delta"]["runs"][0] = {0, 4096};
            }).find("[offset, bytes, file_offset]"),
            std::string::npos);
}

}  // namespace
}  // namespace ckpt::harness
