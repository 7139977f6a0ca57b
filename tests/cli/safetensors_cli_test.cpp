// strategy.format = "safetensors" end to end: the files a run writes (names, sizes, headers),
// the Hugging Face index, per-rank files of full training state, a corrupted byte found on
// restore and named, and the settings the format refuses.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness/formats/safetensors_header.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

class SafetensorsRun : public ::testing::Test {
 protected:
  // Writes the tiny model's checkpoint (kept) with `more` TOML after the [strategy] table's format.
  Outcome run(const std::string& strategy, const std::vector<std::string>& extra = {},
              const std::string& format = "safetensors") {
    const fs::path campaign = dir_.write(
        "c.toml",
        campaign_toml(
            "st", target_,
            "create_target = true\noverwrite = true\nkeep = true\niterations = 1\nwarmup = 0\n"
            "[model]\nname = \"" +
                model_.string() +
                "\"\n[cache]\npolicy = \"none\"\n"
                "[strategy]\nformat = \"" +
                format + "\"\n" + strategy));
    std::vector<std::string> args{"run", campaign.string(), "--output",
                                  (dir_ / "results").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return ckptbench(args);
  }
  fs::path checkpoint() const { return latest_checkpoint(target_ / "st" / "case-0000"); }
  // The *.safetensors files of the checkpoint, sorted.
  std::vector<std::string> safetensors_files() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(checkpoint())) {
      if (e.path().extension() == ".safetensors") names.insert(e.path().filename().string());
    }
    return {names.begin(), names.end()};
  }

  Scratch dir_;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  fs::path target_ = dir_ / "target";
};

TEST_F(SafetensorsRun, WeightsSplitIntoHuggingFaceShardsWithAnIndex) {
  const Outcome out = run("max_shard_bytes = 100000\n[state]\nscope = \"weights\"\n");
  ASSERT_EQ(out.exit_code, 0) << out.describe();
  ASSERT_EQ(read_results(dir_ / "results").at(0).at("verified"), true);
  const std::vector<std::string> files = safetensors_files();
  ASSERT_EQ(files, (std::vector<std::string>{"model-00001-of-00003.safetensors",
                                             "model-00002-of-00003.safetensors",
                                             "model-00003-of-00003.safetensors"}));
  // The tiny model's 21 bf16 tensors (213632 bytes) packed in save_pretrained's order (Llama's
  // layer: attention, MLP, then its two norms) while a file stays within 100000 tensor bytes:
  // embedding + layer 0 but its down_proj and norms; the rest but lm_head; lm_head.
  const std::vector<std::uint64_t> tensor_bytes{90112, 90752, 32768};
  const nlohmann::json index =
      nlohmann::json::parse(read_text(checkpoint() / "model.safetensors.index.json"));
  EXPECT_EQ(index.at("metadata").at("total_size"), 213632);
  EXPECT_EQ(index.at("metadata").at("total_parameters"), 106816);
  EXPECT_TRUE(read_text(checkpoint() / "model.safetensors.index.json").ends_with("}\n"));
  EXPECT_EQ(index.at("weight_map").size(), 21u);
  std::size_t tensors = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const fs::path path = checkpoint() / files[i];
    const harness::SafetensorsHeader header = harness::read_safetensors_header(path);
    EXPECT_EQ(header.header_bytes % 8, 0u);
    EXPECT_EQ(fs::file_size(path), header.header_bytes + tensor_bytes[i]) << files[i];
    // What save_pretrained writes: the format alone, no local path.
    EXPECT_EQ(header.metadata.size(), 1u);
    EXPECT_EQ(header.metadata.at("format"), "pt");
    for (const harness::SafetensorsTensor& t : header.tensors) {
      EXPECT_EQ(t.dtype, "BF16");
      EXPECT_EQ(index.at("weight_map").value(t.name, ""), files[i]) << t.name;
      ++tensors;
    }
  }
  EXPECT_EQ(tensors, 21u);
  const harness::SafetensorsHeader first =
      harness::read_safetensors_header(checkpoint() / files[0]);
  EXPECT_EQ(first.tensors[0].name, "model.embed_tokens.weight");
  EXPECT_EQ(first.tensors[0].shape, (std::vector<std::uint64_t>{256, 64}));
}

// What save_pretrained wrote for three small models at its default max_shard_size
// (tests/data/hf/saved, from the real transformers): one model.safetensors and no index.
// ckptbench writes the same file: its name, every header byte (tensor order, offsets, padding)
// and its size.
TEST_F(SafetensorsRun, OneFileIsTheModelSafetensorsThatSavePretrainedWrites) {
  const fs::path data = fs::path(CKPT_SOURCE_DIR) / "tests/data/hf";
  for (const std::string name : {"small-llama", "small-qwen3", "small-mixtral"}) {
    const nlohmann::json saved = nlohmann::json::parse(read_text(data / "saved" / (name + ".json")))
                                     .at("max_shard_size")
                                     .at("default");
    model_ = data / "fixtures" / name / "config.json";
    const Outcome out = run("[state]\nscope = \"weights\"\n");
    ASSERT_EQ(out.exit_code, 0) << name << out.describe();
    ASSERT_EQ(safetensors_files(), std::vector<std::string>{"model.safetensors"}) << name;
    EXPECT_FALSE(fs::exists(checkpoint() / "model.safetensors.index.json")) << name;
    const fs::path file = checkpoint() / "model.safetensors";
    const harness::SafetensorsHeader header = harness::read_safetensors_header(file);
    const std::string bytes = read_text(file).substr(8, header.header_bytes - 8);
    const nlohmann::json& theirs = saved.at("files").at("model.safetensors");
    EXPECT_EQ(bytes, theirs.at("header").get<std::string>()) << name;
    EXPECT_EQ(fs::file_size(file), theirs.at("size").get<std::uint64_t>()) << name;
  }
}

// The same models saved at smaller max_shard_size values: several files and the index. Each
// file's name, header bytes (which tensors it holds, their order and offsets) and size equal
// what save_pretrained wrote: Llama and Qwen3 in module order, Mixtral re-sorted by name with
// each layer's experts cut from fused tensors, a fused tensor's cuts in one file.
TEST_F(SafetensorsRun, SeveralFilesHoldTheTensorsSavePretrainedPutsInThem) {
  const fs::path data = fs::path(CKPT_SOURCE_DIR) / "tests/data/hf";
  for (const std::string name : {"small-llama", "small-qwen3", "small-mixtral"}) {
    const nlohmann::json saved =
        nlohmann::json::parse(read_text(data / "saved" / (name + ".json"))).at("max_shard_size");
    model_ = data / "fixtures" / name / "config.json";
    for (const auto& [limit, theirs] : saved.items()) {
      if (limit == "default") continue;
      SCOPED_TRACE(name + " at " + limit);
      const Outcome out = run("max_shard_bytes = " + limit + "\n[state]\nscope = \"weights\"\n");
      ASSERT_EQ(out.exit_code, 0) << out.describe();
      std::vector<std::string> files;
      for (const auto& file : theirs.at("files").items()) files.push_back(file.key());
      ASSERT_EQ(safetensors_files(), files);
      for (const std::string& file : files) {
        const fs::path path = checkpoint() / file;
        const harness::SafetensorsHeader header = harness::read_safetensors_header(path);
        EXPECT_EQ(read_text(path).substr(8, header.header_bytes - 8),
                  theirs.at("files").at(file).at("header").get<std::string>())
            << file;
        EXPECT_EQ(fs::file_size(path), theirs.at("files").at(file).at("size").get<std::uint64_t>())
            << file;
      }
      EXPECT_EQ(read_text(checkpoint() / "model.safetensors.index.json"),
                theirs.at("index").get<std::string>());
    }
  }
}

TEST_F(SafetensorsRun, FullStateGoesToPerRankFilesNamedByStateAndSlice) {
  const Outcome out = run("[parallel]\ntp = 2\n[state]\nscope = \"full\"\n");
  ASSERT_EQ(out.exit_code, 0) << out.describe();
  ASSERT_EQ(safetensors_files(), (std::vector<std::string>{"rank-00000-of-00002.safetensors",
                                                           "rank-00001-of-00002.safetensors"}));
  const harness::SafetensorsHeader rank1 =
      harness::read_safetensors_header(checkpoint() / "rank-00001-of-00002.safetensors");
  std::set<std::string> names;
  for (const auto& t : rank1.tensors) names.insert(t.name);
  // Rank 1 holds the second half of the column-parallel fc1 (rows 128:256 of [256, 64]) in
  // every state; TP rank 0 alone writes the replicated norms.
  EXPECT_TRUE(names.contains("weight/decoder.layers.0.mlp.linear_fc1.weight[128:256,0:64]"));
  EXPECT_TRUE(names.contains(
      "exp_avg_sq/"
      "optimizer.state.exp_avg_sq.decoder.layers.0.mlp.linear_fc1.weight[128:256,0:64]"));
  EXPECT_FALSE(names.contains("weight/decoder.layers.0.input_layernorm.weight"));
  const nlohmann::json index =
      nlohmann::json::parse(read_text(checkpoint() / "model.safetensors.index.json"));
  EXPECT_EQ(index.at("weight_map")
                .value("master/optimizer.state.fp32_param.decoder.final_layernorm.weight", ""),
            "rank-00000-of-00002.safetensors");
}

TEST_F(SafetensorsRun, CorruptedTensorByteIsFoundOnRestoreAndNamed) {
  ASSERT_EQ(run("max_shard_bytes = 100000\n[state]\nscope = \"weights\"\n").exit_code, 0);
  const fs::path file = checkpoint() / "model-00002-of-00003.safetensors";
  const harness::SafetensorsHeader header = harness::read_safetensors_header(file);
  const harness::SafetensorsTensor* q = nullptr;
  for (const auto& t : header.tensors) {
    if (t.name == "model.layers.1.self_attn.q_proj.weight") q = &t;
  }
  ASSERT_NE(q, nullptr);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(header.header_bytes + q->begin + 5);
    f.seekg(at);
    const char old = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(old ^ 0x5a));
  }
  const Outcome restore =
      run("max_shard_bytes = 100000\n[state]\nscope = \"weights\"\n", {"--phase", "restore"});
  EXPECT_NE(restore.exit_code, 0) << restore.describe();
  const std::string all = restore.out + restore.err;
  EXPECT_TRUE(contains(all, "tensor model.layers.1.self_attn.q_proj.weight")) << all;
  EXPECT_TRUE(contains(all, "byte 5 of the shard (file model-00002-of-00003.safetensors")) << all;
}

TEST_F(SafetensorsRun, LoadMethodsEachVerifyRawAndSafetensorsAndNameACorruptedTensor) {
  for (const std::string format : {"safetensors", "raw"}) {
    ASSERT_EQ(run("[state]\nscope = \"weights\"\n", {}, format).exit_code, 0) << format;
    // The tiny model's bf16 weights, 213632 bytes, and torch.save's archive around each of its
    // 21 tensors in the .distcp file (33,117 B), or a safetensors file's header.
    const std::uint64_t bytes =
        format == "raw" ? 213632 + 33117 : fs::file_size(checkpoint() / "model.safetensors");
    if (format == "raw") {
      EXPECT_EQ(fs::file_size(checkpoint() / "__0_0.distcp"), bytes);
    }
    for (const std::string method : {"pipelined", "mmap", "read"}) {
      const Outcome load = ckptbench({"load", checkpoint().string(), "--method", method, "--repeat",
                                      "2", "--no-drop-caches", "--chunk-bytes", "65536",
                                      "--pool-bytes", "131072", "--threads", "3"});
      EXPECT_EQ(load.exit_code, 0) << load.describe();
      EXPECT_TRUE(contains(load.out, "load " + method + " into host (3 threads")) << load.out;
      EXPECT_TRUE(contains(load.out, std::to_string(bytes) + " bytes from 1 files")) << load.out;
      EXPECT_TRUE(contains(load.out, ", verified\n")) << load.out;
      EXPECT_TRUE(contains(load.out, "median " + method + " over 2 loads")) << load.out;
    }
  }
  ASSERT_EQ(run("max_shard_bytes = 100000\n[state]\nscope = \"weights\"\n").exit_code, 0);
  const Outcome pinned =
      ckptbench({"load", checkpoint().string(), "--memory", "pinned", "--no-drop-caches"});
  EXPECT_EQ(pinned.exit_code, 0) << pinned.describe();
  EXPECT_TRUE(
      contains(pinned.out,
               "load pipelined into pinned (4 threads, 33554432 B chunks, 3 in the pool, 3 reads)"))
      << pinned.out;
  const fs::path file = checkpoint() / "model-00003-of-00003.safetensors";
  const harness::SafetensorsHeader header = harness::read_safetensors_header(file);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(header.header_bytes + 100);
    f.seekg(at);
    const char old = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(old ^ 0x01));
  }
  const Outcome load = ckptbench({"load", checkpoint().string(), "--no-drop-caches"});
  EXPECT_EQ(load.exit_code, 1) << load.describe();
  EXPECT_TRUE(contains(load.out,
                       "verification failed: tensor lm_head.weight at byte 100 (file "
                       "model-00003-of-00003.safetensors offset"))
      << load.out;
  const Outcome full = run("[state]\nscope = \"full\"\n");
  ASSERT_EQ(full.exit_code, 0) << full.describe();
  const Outcome refused = ckptbench({"load", checkpoint().string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_TRUE(contains(refused.err, "loads weights-only checkpoints")) << refused.err;
}

TEST_F(SafetensorsRun, RefusesSharedFilesPaddingAndDirectIo) {
  const Outcome shared = run("mapping = \"shared_file\"\n");
  EXPECT_EQ(shared.exit_code, 2) << shared.describe();
  EXPECT_TRUE(contains(shared.err, "strategy.mapping")) << shared.describe();
  EXPECT_TRUE(contains(shared.err, "strategy.format = \"safetensors\"")) << shared.describe();
  const Outcome direct = run("[backend]\ndirect = true\n");
  EXPECT_EQ(direct.exit_code, 2) << direct.describe();
  EXPECT_TRUE(contains(direct.err, "backend.direct")) << direct.describe();
  const Outcome aligned = run("alignment = 4096\n");
  EXPECT_EQ(aligned.exit_code, 2) << aligned.describe();
  EXPECT_TRUE(contains(aligned.err, "strategy.alignment")) << aligned.describe();
}

}  // namespace
}  // namespace ckpt::integration
