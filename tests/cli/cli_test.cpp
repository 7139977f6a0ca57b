// The ckptbench binary as a user runs it: exit status, JSON fields, error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_ckptbench.hpp"

namespace {

using ckpt::cli_test::CommandResult;
using ckpt::cli_test::run;

nlohmann::json run_json(const std::string& args) {
  const CommandResult r = run(args);
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() / ("ckpt_cli_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

TEST(CliLayout, JsonForMlperfLlama3_8B) {
  const auto j = run_json("layout --model llama3-8b --dp 8 --zero 3 --json");
  EXPECT_EQ(j.at("parameters").get<std::int64_t>(), 8'030'261'248);
  EXPECT_EQ(j.at("world_size").get<std::int64_t>(), 8);
  EXPECT_EQ(j.at("checkpoint_bytes").get<std::int64_t>(), 8'030'261'248LL * 14);
  ASSERT_EQ(j.at("ranks").size(), 8u);
  std::int64_t sum = 0;
  for (const auto& r : j.at("ranks")) sum += r.at("bytes").get<std::int64_t>();
  EXPECT_EQ(sum, j.at("checkpoint_bytes").get<std::int64_t>());
  EXPECT_EQ(j.at("ranks")[5].at("rank").get<int>(), 5);
}

TEST(CliLayout, FilesListsEveryFileOfTheDirectoryLayout) {
  const auto j = run_json(
      "layout --model llama3-8b --tp 2 --pp 2 --dp 2 --zero 1 --files --layout deepspeed --json");
  EXPECT_EQ(j.at("layout"), "deepspeed");
  EXPECT_EQ(j.at("directory"), "global_step1");
  EXPECT_EQ(j.at("file_count"),
            83);  // + 4 engine states (mp_rank_MM_model_states.pt) and ../latest
  EXPECT_EQ(j.at("writer_count"), 8);
  std::int64_t small = 0;  // the engine states' estimated bytes and latest's 12
  for (const auto& f : j.at("files")) {
    if (f.at("tensors") == 0) small += f.at("bytes").get<std::int64_t>();
  }
  EXPECT_GT(small, 4 * 4096 + 12);
  EXPECT_EQ(j.at("total_bytes").get<std::int64_t>() - small,
            112427384832LL);  // TP-replicated norms on both TP ranks
  EXPECT_EQ(j.at("files").at(0), nlohmann::json({{"path", "layer_00-model_00-model_states.pt"},
                                                 {"rank", 0},
                                                 {"bytes", 525336576},
                                                 {"tensors", 1}}));
  const CommandResult refused =
      run("layout --model llama3-8b --tp 2 --pp 2 --dp 2 --zero 3 --files --layout deepspeed");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.out.find("ckptbench: error: command line: `--layout`: \"deepspeed\" with --pp "
                             "> 1 cannot use --zero = 3"),
            std::string::npos)
      << refused.out;
}

TEST(CliLayout, JsonForOneRankListsItsShards) {
  const auto j =
      run_json("layout --model llama3-70b --tp 8 --pp 4 --dp 2 --zero 1 --rank 9 --json");
  ASSERT_EQ(j.at("ranks").size(), 1u);
  const auto& rank = j.at("ranks")[0];
  EXPECT_EQ(rank.at("rank").get<int>(), 9);
  EXPECT_EQ(rank.at("coord").at("tp").get<int>(), 1);
  EXPECT_EQ(rank.at("coord").at("dp").get<int>(), 1);
  std::int64_t sum = 0;
  for (const auto& s : rank.at("shards")) sum += s.at("bytes").get<std::int64_t>();
  EXPECT_EQ(sum, rank.at("bytes").get<std::int64_t>());
  EXPECT_EQ(static_cast<std::int64_t>(rank.at("shards").size()),
            rank.at("tensors").get<std::int64_t>());
}

TEST(CliLayout, LargeWorldsGetARankSummaryInsteadOfEveryRank) {
  const auto j = run_json("layout --model mlperf-1t --tp 8 --pp 64 --dp 32 --zero 1 --json");
  EXPECT_EQ(j.at("world_size").get<std::int64_t>(), 16384);
  EXPECT_FALSE(j.contains("ranks"));
  const auto& bytes = j.at("rank_summary").at("bytes");
  EXPECT_LE(bytes.at("min").get<std::int64_t>(), bytes.at("median").get<std::int64_t>());
  EXPECT_LE(bytes.at("median").get<std::int64_t>(), bytes.at("max").get<std::int64_t>());
}

TEST(CliLayout, HumanReportShowsTheSummary) {
  const CommandResult r = run("layout --model llama3-8b --dp 8 --zero 3");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("parameters   8,030,261,248"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("104.70 GiB (112,423,657,472 B)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shard sizes"), std::string::npos) << r.out;
}

TEST(CliLayout, DlioSizingShowsDlioBytesAndSaysSo) {
  const CommandResult r = run("layout --model llama3-8b --dp 8 --zero 3 --sizing dlio");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(112,425,623,552 B)"), std::string::npos)
      << r.out;  // DLIO's llama_8b_zero3
  EXPECT_NE(r.out.find("sizing       dlio (DLIO's / MLPerf Storage v2.0's formula"),
            std::string::npos)
      << r.out;
  const auto j = run_json(
      "layout --model mlperf-llama3-70b --tp 8 --pp 4 --dp 2 --zero 1 --sizing dlio --json");
  EXPECT_EQ(j.at("checkpoint_bytes").get<std::int64_t>(), 978'406'572'032);
  EXPECT_EQ(j.at("state").at("sizing"), "dlio");
  EXPECT_EQ(run_json("layout --model llama3-8b --json").at("state").at("sizing"), "exact");
  const CommandResult moe = run("layout --model mixtral-8x7b --sizing dlio");
  EXPECT_EQ(moe.status, 2);
  EXPECT_NE(
      moe.out.find(
          "`--sizing`: sizing = \"dlio\" describes DLIO's dense Llama-style transformer only"),
      std::string::npos)
      << moe.out;
}

TEST(CliModels, JsonListsTheZooWithExactCounts) {
  const auto j = run_json("models --json");
  bool found = false;
  for (const auto& m : j) {
    if (m.at("name") == "llama3.1-405b") {
      found = true;
      EXPECT_EQ(m.at("parameters").get<std::int64_t>(), 405'853'388'800);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_GE(j.size(), 12u);
}

TEST(CliLayout, ModelFromHuggingFaceConfigAndFromToml) {
  TempDir dir;
  const auto config = dir.write("Meta-Llama-3-8B/config.json", R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 128256, "rope_theta": 500000.0,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  EXPECT_EQ(run_json("layout --model " + config.string() + " --json")
                .at("parameters")
                .get<std::int64_t>(),
            8'030'261'248);
  EXPECT_EQ(run_json("layout --model " + config.parent_path().string() + " --json").at("model"),
            "Meta-Llama-3-8B");
  const auto toml =
      dir.write("tiny.toml",
                "name = \"tiny\"\nhidden_size = 64\nintermediate_size = 128\n"
                "num_hidden_layers = 2\nnum_attention_heads = 4\nvocab_size = 1000\n");
  // 2 × (4·64² + 3·64·128 + 2·64) + 2·1000·64 + 64
  EXPECT_EQ(
      run_json("layout --model " + toml.string() + " --json").at("parameters").get<std::int64_t>(),
      2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 2 * 1000 * 64 + 64);
}

TEST(CliErrors, ImpossibleParallelismNamesTheOption) {
  const CommandResult r = run("layout --model llama3-8b --tp 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("`--tp`: num_attention_heads (32) is not divisible by tp (3)"),
            std::string::npos)
      << r.out;
  const CommandResult pp = run("layout --model llama3.1-405b --pp 32");
  EXPECT_EQ(pp.status, 2);
  EXPECT_NE(pp.out.find("--pp-first-stage-layers 3 --pp-last-stage-layers 3"), std::string::npos)
      << pp.out;
}

TEST(CliErrors, UnknownModelSuggestsTheClosest) {
  const CommandResult r = run("layout --model mixtral-8x7 --json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("did you mean `mixtral-8x7b`?"), std::string::npos) << r.out;
}

TEST(CliErrors, BadModelFileNamesFileLineAndKey) {
  TempDir dir;
  const auto toml = dir.write("typo.toml",
                              "name = \"typo\"\nhidden_size = 64\nintermediate_size = 128\n"
                              "num_hidden_layers = 2\nnum_attention_head = 4\nvocab_size = 1000\n");
  const CommandResult r = run("layout --model " + toml.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(toml.string() + ":5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean `num_attention_heads`?"), std::string::npos) << r.out;
  const CommandResult missing =
      run("layout --model " + (dir.write("x", "").parent_path() / "absent.toml").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("absent.toml"), std::string::npos) << missing.out;
}

TEST(CliErrors, BadOptionValues) {
  EXPECT_NE(run("layout --model llama3-8b --tp 0").status, 0);
  EXPECT_NE(run("layout --model llama3-8b --tp abc").status, 0);
  EXPECT_NE(run("layout --model llama3-8b --state everything").status, 0);
  const CommandResult rank = run("layout --model llama3-8b --dp 2 --rank 2");
  EXPECT_EQ(rank.status, 2);
  EXPECT_NE(rank.out.find("rank 2 is outside the world of 2 ranks"), std::string::npos) << rank.out;
  EXPECT_NE(run("layout").status, 0);  // --model is required
}

// Exit status 2 and one "ckptbench: error: …" line for every command-line mistake (CLI11's
// own parse errors included), 0 for --help and --version.
class CliExitStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    campaign_ = dir_.write(
        "c.toml", "[campaign]\nname = \"c\"\ntarget = \"" +
                      (dir_.write("x", "").parent_path() / "t").string() +
                      "\"\ncreate_target = true\n[model]\nname = \"llama3-8b\"\nscale = 1024\n");
  }
  void expect_error(const std::string& args, const std::string& message) const {
    const CommandResult r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("ckptbench: error: " + message), std::string::npos) << args << "\n"
                                                                             << r.out;
  }
  TempDir dir_;
  std::filesystem::path campaign_;
};

TEST_F(CliExitStatus, UnknownOption) {
  expect_error("run " + campaign_.string() + " --bogus",
               "The following argument was not expected: --bogus");
  expect_error("layout --model llama3-8b --tpp 2",
               "The following arguments were not expected: 2 --tpp");
}

TEST_F(CliExitStatus, MissingArgument) {
  expect_error("run", "campaign is required\nRun `ckptbench run --help` for the options.");
  expect_error("run " + campaign_.string() + " --set", "--set: 1 required TEXT missing");
  expect_error("layout", "--model is required");
}

TEST_F(CliExitStatus, UnknownSubcommandSuggestsTheClosest) {
  expect_error(
      "runn",
      "unknown subcommand `runn` — did you mean `run`?\nRun `ckptbench --help` for the options.");
  expect_error("-q modles", "unknown subcommand `modles` — did you mean `models`?");
  expect_error("layot --model llama3-8b", "unknown subcommand `layot` — did you mean `layout`?");
  expect_error("frobnicate",
               "unknown subcommand `frobnicate` (subcommands: layout, models, run, backends, keys, "
               "report, compare, gate, project, load, mlperf, codec)");
  expect_error("",
               "a subcommand is required: layout, models, run, backends, keys, report, compare, "
               "gate, project, load, mlperf, codec");
}

TEST_F(CliExitStatus, BadPhaseValue) {
  expect_error(
      "run " + campaign_.string() + " --phase restor",
      "--phase: `restor` is not one of checkpoint, restore, both, load — did you mean `restore`?");
  expect_error("layout --model llama3-8b --state ful",
               "--state: `ful` is not one of weights, full — did you mean `full`?");
}

TEST_F(CliExitStatus, MissingCampaignFile) {
  const std::string missing = (campaign_.parent_path() / "absent.toml").string();
  const CommandResult r = run("run " + missing);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("ckptbench: error: " + missing), std::string::npos) << r.out;
}

TEST_F(CliExitStatus, BadKey) {
  const auto typo = dir_.write(
      "typo.toml",
      "[campaign]\nname = \"c\"\ntarget = \"t\"\n[model]\nname = \"llama3-8b\"\nscael = 8\n");
  expect_error("run " + typo.string(),
               typo.string() + ":6: `model.scael`: unknown key — did you mean `scale`?");
  expect_error("run " + campaign_.string() + " --set model.scael=8",
               "--set: `model.scael`: unknown key — did you mean "
               "`model.scale`?");
}

TEST_F(CliExitStatus, QuietAndVerboseExcludeEachOther) {
  expect_error("-q run " + campaign_.string() + " -v", "--quiet excludes --verbose");
  expect_error("run " + campaign_.string() + " --processes 2", "--processes requires --dry-run");
}

TEST(CliHelp, HelpAndVersionExitZero) {
  const CommandResult help = run("--help");
  EXPECT_EQ(help.status, 0) << help.out;
  EXPECT_NE(help.out.find("Exit status: 0 every case ok"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("-q,--quiet"), std::string::npos) << help.out;
  const CommandResult run_help = run("run --help");
  EXPECT_EQ(run_help.status, 0) << run_help.out;
  EXPECT_NE(run_help.out.find("2 bad input"), std::string::npos) << run_help.out;
  EXPECT_NE(run_help.out.find("130 interrupted"), std::string::npos) << run_help.out;
}

TEST(CliHelp, VersionNamesBuildBackendsMemorySpacesAndLibraries) {
  const CommandResult v = run("--version");
  ASSERT_EQ(v.status, 0) << v.out;
  EXPECT_EQ(v.out.rfind("ckptbench 0.1.0 (git ", 0), 0u) << "help2man reads the first line\n"
                                                         << v.out;
  const auto backends = run_json("backends --json");
  for (const auto& b : backends) {
    const std::string name = b.at("name").get<std::string>();
    const std::string line = b.at("available").get<bool>()
                                 ? "  " + name + std::string(9 - name.size(), ' ') + "yes\n"
                                 : "  " + name + std::string(9 - name.size(), ' ') + "no: ";
    EXPECT_NE(v.out.find(line), std::string::npos) << "expected `" << line << "`\n" << v.out;
  }
  for (const char* part :
       {"\nmemory spaces:\n  host     yes\n", "  cuda     ", "  kokkos   ", "\nlibraries: CLI11 2.",
        ", fmt ", ", nlohmann-json 3.", ", toml++ 3.", ", MPI "}) {
    EXPECT_NE(v.out.find(part), std::string::npos) << "expected `" << part << "`\n" << v.out;
  }
}

}  // namespace
