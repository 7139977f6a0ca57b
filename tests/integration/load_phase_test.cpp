// The load phase end to end (--phase load, [load]): a TP 2 checkpoint written by 2 MPI processes is
// loaded as an inference server loads it, at TP 4 by 2 processes (two inference ranks each) with
// every method, and at TP 1 by one process with O_DIRECT through a small chunk pool; each load
// verifies every tensor, with exact byte counts. Weights come out of a full training-state
// checkpoint too, and a flipped byte is named by tensor. A collective backend (mpiio) serves the
// read method, in collective calls too (backend.mpiio.collective); hdf5 reads hyperslabs.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A small Llama: vocabulary 1100 pads to 1152 rows at TP 1, 1280 at TP 2, 1536 at TP 4;
// model.scale = 4 divides every leading dimension of every slice. The embedding and the output
// layer (untied) hold 256 bf16 elements a row: 1024 bytes a row of both.
constexpr std::uint64_t kVocabRowBytes = 2 * 256 * 2;
constexpr const char* kLoadModel = R"(name = "load-llama"
hidden_size = 256
intermediate_size = 512
num_hidden_layers = 8
num_attention_heads = 8
num_key_value_heads = 8
vocab_size = 1100
tie_word_embeddings = false
)";

class LoadPhase : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
    mpirun_ = find_mpirun();
    model_ = dir_.write("load-llama.toml", kLoadModel);
  }

  // A TP 2 campaign writing `scope` state as `format`, then `extra` (a [load] table).
  fs::path campaign(const std::string& name, const std::string& scope, const std::string& format,
                    const std::string& extra) {
    return dir_.write(
        name + ".toml",
        campaign_toml(name, dir_ / "target", tp2_checkpoint_toml(model_, scope, format) + extra));
  }

  Outcome run(int processes, const fs::path& file, const fs::path& output, const std::string& phase,
              std::chrono::seconds timeout = std::chrono::seconds(240)) {
    std::vector<std::string> args = mpirun_args(*mpirun_, processes);
    args.insert(args.end(),
                {kBinary, "run", file.string(), "--output", output.string(), "--phase", phase});
    return run_process(args, timeout);
  }

  // Writes the checkpoint with 2 processes; returns its result.
  nlohmann::json write_checkpoint(const std::string& name, const std::string& scope,
                                  const std::string& format) {
    const Outcome written =
        run(2, campaign(name, scope, format, ""), dir_ / ("written-" + name), "checkpoint");
    EXPECT_EQ(written.exit_code, 0) << written.describe();
    const auto results = read_results(dir_ / ("written-" + name));
    return results.empty() ? nlohmann::json() : results.at(0);
  }

  Scratch dir_;
  fs::path model_;
  std::optional<std::string> mpirun_;
};

TEST_F(LoadPhase, Tp2SafetensorsLoadedAtTp4ByEachMethodAndAtTp1WithDirectReadsVerify) {
  const nlohmann::json written = write_checkpoint("st", "weights", "safetensors");
  ASSERT_TRUE(written.is_object());
  const auto weights = written.at("bytes_per_checkpoint").get<std::uint64_t>();

  // TP 4 on 2 processes: every stored byte is needed once; the TP 4 vocabulary padding
  // (1280 -> 1536 rows / 4) is stored nowhere and not read. load.gap_bytes (64 KiB by default)
  // bridges the file gaps between a rank's row halves of the TP 2 o_proj and down_proj slices
  // (64 scaled rows of 256 and 512 bytes; a half row's gap is the other half): 63 gaps of 128 and
  // of 256 bytes a layer and rank, read into scratch and dropped.
  const std::uint64_t bridged = 8 * 4 * 63 * (128 + 256);
  const Outcome four =
      run(2,
          campaign("st", "weights", "safetensors",
                   "[load]\ntp = 4\nmethod = [\"pipelined\", \"mmap\", \"read\"]\n"),
          dir_ / "four", "load");
  ASSERT_EQ(four.exit_code, 0) << four.describe();
  const auto results = read_results(dir_ / "four");
  ASSERT_EQ(results.size(), 3u);
  const std::vector<std::string> methods{"pipelined", "mmap", "read"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    EXPECT_EQ(r.at("status"), "ok") << r.at("error");
    EXPECT_EQ(r.at("verified"), true);
    EXPECT_EQ(r.at("ranks").get<int>(), 2);
    EXPECT_EQ(r.at("modeled_ranks").get<int>(), 4);
    EXPECT_EQ(r.at("bytes_per_checkpoint").get<std::uint64_t>(), weights);
    const auto& l = r.at("load");
    EXPECT_EQ(l.at("method"), methods[i]);
    EXPECT_EQ(l.at("tp").get<int>(), 4);
    EXPECT_EQ(l.at("checkpoint_tp").get<int>(), 2);
    EXPECT_EQ(l.at("ranks").get<int>(), 4);
    EXPECT_EQ(l.at("bytes").get<std::uint64_t>(), weights);
    EXPECT_EQ(l.at("bytes_read").get<std::uint64_t>(), weights + bridged);
    EXPECT_EQ(l.at("bridged_bytes").get<std::uint64_t>(), bridged);
    EXPECT_EQ(l.at("gap_bytes").get<std::uint64_t>(), 65536u);
    EXPECT_EQ(l.at("padding_bytes").get<std::uint64_t>(), (1536 - 1280) / 4 * kVocabRowBytes);
    EXPECT_GT(l.at("requests").get<std::uint64_t>(), 0u);
    // read: one pread a planned range; mmap: none; pipelined: at most one a range (the default
    // 32 MiB chunks cut none of this small model's).
    const auto reads = l.at("reads").get<std::uint64_t>(),
               requests = l.at("requests").get<std::uint64_t>();
    if (methods[i] == "read") {
      EXPECT_EQ(reads, requests);
    } else if (methods[i] == "mmap") {
      EXPECT_EQ(reads, 0u);
    } else {
      EXPECT_LE(reads, requests);
    }
    EXPECT_EQ(l.at("samples").at("time_to_loaded_seconds").size(), 1u);
    EXPECT_GT(l.at("gib_per_s").get<double>(), 0.0);
    EXPECT_TRUE(l.at("h2d_seconds").is_null());
    EXPECT_EQ(r.at("read_seconds").get<double>(), l.at("time_to_loaded_seconds").get<double>());
  }
  EXPECT_TRUE(
      contains(four.out, "load mmap (4 threads) into host, TP 4 from a TP 2 checkpoint (4 ranks)"))
      << four.out;

  // TP 1 on one process, O_DIRECT through a pool of 64 KiB in chunks of 8 KiB: Hugging Face names
  // are not padded at TP 1, so the TP 2 padding rows 1100..1279 (/ 4) are not needed.
  const Outcome one = run(
      1,
      campaign("st", "weights", "safetensors",
               "[load]\ntp = 1\ndirect = true\nchunk_bytes = \"8 KiB\"\npool_bytes = \"64 KiB\"\n"),
      dir_ / "one", "load");
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  const auto r1 = read_results(dir_ / "one").at(0);
  EXPECT_EQ(r1.at("status"), "ok") << r1.at("error");
  EXPECT_EQ(r1.at("verified"), true);
  const auto& l1 = r1.at("load");
  EXPECT_EQ(l1.at("bytes").get<std::uint64_t>(), weights - (1280 - 1100) / 4 * kVocabRowBytes);
  EXPECT_EQ(l1.at("bytes_read").get<std::uint64_t>(), l1.at("bytes").get<std::uint64_t>());
  EXPECT_EQ(l1.at("bridged_bytes").get<std::uint64_t>(), 0u);  // merged slices: no gaps
  EXPECT_EQ(l1.at("padding_bytes").get<std::uint64_t>(), 0u);
  EXPECT_EQ(l1.at("direct"), true);
  EXPECT_EQ(l1.at("pool_chunks").get<int>(),
            5);  // 64 KiB / (8 KiB chunk + its O_DIRECT lead block)
  // TP 1 needs every stored item of both files, file-adjacent but for file 1's unneeded padding
  // rows: packed, the reads are full 8 KiB chunks but for each file's last one and the gap
  // (unpacked, each of the ranges would end in a partial chunk and read of its own).
  const auto full_chunks = (l1.at("bytes").get<std::uint64_t>() + 8191) / 8192;
  EXPECT_GE(l1.at("reads").get<std::uint64_t>(), full_chunks);
  EXPECT_LE(l1.at("reads").get<std::uint64_t>(), full_chunks + 4) << l1.at("requests") << " ranges";
  const std::string csv = read_text(run_directory(dir_ / "one") / "results.csv");
  EXPECT_TRUE(contains(csv, ",load_method,load_tp,load_requests,")) << csv;
  EXPECT_TRUE(contains(csv, ",pipelined,1,")) << csv;
}

TEST_F(LoadPhase, WeightsOfAFullStateCheckpointLoadAndAFlippedByteIsNamedByTensor) {
  const nlohmann::json written = write_checkpoint("full", "full", "raw");
  ASSERT_TRUE(written.is_object());
  const fs::path kept = written.at("checkpoint_dir").get<std::string>();
  const auto manifest = read_manifest(kept);
  std::uint64_t weights = 0;
  nlohmann::json tensor;
  for (const auto& t : manifest.at("tensors")) {
    if (t.at("state") != "weight") continue;
    weights += t.at("bytes").get<std::uint64_t>();
    if (t.at("name").get<std::string>().find("3.mlp.linear_fc2.weight") != std::string::npos)
      tensor = t;
  }
  ASSERT_FALSE(tensor.is_null()) << "no slice of layer 3's linear_fc2 in the manifest";

  const Outcome one = run(1, campaign("full", "full", "raw", "[load]\ntp = 1\nmethod = \"read\"\n"),
                          dir_ / "one", "load");
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  const auto r1 = read_results(dir_ / "one").at(0);
  EXPECT_EQ(r1.at("status"), "ok") << r1.at("error");
  EXPECT_EQ(r1.at("verified"), true);
  EXPECT_EQ(r1.at("load").at("bytes").get<std::uint64_t>(),
            weights - (1280 - 1152) / 4 * kVocabRowBytes);

  {
    const auto offset =
        static_cast<std::streamoff>(tensor.at("file_offset").get<std::uint64_t>() + 7);
    std::fstream f(kept / tensor.at("file").get<std::string>(),
                   std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    f.seekg(offset);
    char byte = 0;
    ASSERT_TRUE(f.get(byte));
    f.seekp(offset);
    f.put(static_cast<char>(byte ^ 0x5a));
  }
  const Outcome bad =
      run(2, campaign("full", "full", "raw", "[load]\ntp = 4\n"), dir_ / "bad", "load");
  EXPECT_EQ(bad.exit_code, 1) << bad.describe();
  EXPECT_TRUE(contains(
      bad.err, "verification failed: tensor " + tensor.at("name").get<std::string>() + " (weight"))
      << bad.describe();
}

// A collective backend serves the read method through the one executor: a TP 2 checkpoint written
// by 2 processes with mpiio, loaded at TP 4 by 2 processes with one collective read of each
// process's ranges, and whole by `ckptbench load --backend mpiio` (MPI started as one process);
// every tensor verified.
TEST_F(LoadPhase, MpiioLoadsWithOneCollectiveReadOfEachProcesssRanges) {
  const std::string mpiio = "[backend]\nname = \"mpiio\"\n";
  const Outcome written =
      run(2, campaign("m", "weights", "raw", mpiio), dir_ / "written-m", "checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const nlohmann::json w = read_results(dir_ / "written-m").at(0);
  const auto weights = w.at("bytes_per_checkpoint").get<std::uint64_t>();

  const Outcome four =
      run(2, campaign("m", "weights", "raw", mpiio + "[load]\ntp = 4\nmethod = \"read\"\n"),
          dir_ / "four-m", "load");
  ASSERT_EQ(four.exit_code, 0) << four.describe();
  const nlohmann::json r = read_results(dir_ / "four-m").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  EXPECT_EQ(r.at("config").at("backend").at("name"), "mpiio");
  const nlohmann::json& l = r.at("load");
  EXPECT_EQ(l.at("method"), "read");
  EXPECT_EQ(l.at("bytes").get<std::uint64_t>(), weights);
  EXPECT_EQ(l.at("reads").get<std::uint64_t>(), l.at("requests").get<std::uint64_t>())
      << "one extent of the collective read a planned range";

  const Outcome whole = ckptbench({"load", w.at("checkpoint_dir").get<std::string>(), "--backend",
                                   "mpiio", "--method", "read", "--no-drop-caches"});
  ASSERT_EQ(whole.exit_code, 0) << whole.describe();
  EXPECT_TRUE(contains(whole.out, ", backend mpiio, verified\n")) << whole.out;

  // backend.mpiio.collective: a file several processes read is read in collective calls, by 2
  // processes (two inference ranks each, whose replicated tensors and bridged gaps name bytes
  // twice; 3 processes: MpiioUneven under -np 3). A collective call some process did not make
  // would hang: the run is bounded.
  const std::string collective = mpiio + "[backend.mpiio]\ncollective = true\n";
  const Outcome loaded =
      run(2, campaign("m", "weights", "raw", collective + "[load]\ntp = 4\nmethod = \"read\"\n"),
          dir_ / "collective-m", "load", std::chrono::seconds(60));
  ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
  const nlohmann::json c = read_results(dir_ / "collective-m").at(0);
  EXPECT_EQ(c.at("status"), "ok") << c.at("error");
  EXPECT_EQ(c.at("verified"), true);
  EXPECT_EQ(c.at("load").at("bytes").get<std::uint64_t>(), weights);
  // File 0 is read by both: the process of ranks 0 and 1, and the one that needs the norms rank 0
  // stored.
  EXPECT_TRUE(contains(c.at("notes").dump(), "MPI_File_read_at_all rounds on 2 processes"))
      << c.at("notes").dump();
}

// hdf5 checkpoints load as hyperslabs of their datasets: each inference rank's TP slice read from
// the dataset that stores its tensor. A TP 2 checkpoint in one shared file (datasets of the
// global shapes, leading dimensions divided by model.scale) loads at TP 1 on 2 processes: process
// 0 reads every tensor whole as one hyperslab (the vocabulary's 1100 of the 1280 stored rows),
// process 1 loads nothing and still takes part in the collective read. (A file per rank's
// slice-shaped datasets: `ckptbench load --tp 4 --backend hdf5`, LoadCli.)
TEST_F(LoadPhase, Hdf5SharedFileLoadsItsTpSlicesAsHyperslabs) {
  if (!std::regex_search(ckptbench({"backends"}).out, std::regex("\nhdf5 +yes")))
    GTEST_SKIP() << "this build has no hdf5 backend";
  const auto campaign_of = [&](const std::string& extra) {
    return dir_.write(
        "h5.toml",
        campaign_toml("h5", dir_ / "target",
                      // strategy.format and, in the same table, its mapping
                      tp2_checkpoint_toml(model_, "weights", "raw\"\nmapping = \"shared_file") +
                          "[backend]\nname = \"hdf5\"\n" + extra));
  };
  const Outcome written = run(2, campaign_of(""), dir_ / "w-h5", "checkpoint");
  ASSERT_EQ(written.exit_code, 0) << written.describe();
  const auto weights =
      read_results(dir_ / "w-h5").at(0).at("bytes_per_checkpoint").get<std::uint64_t>();
  const Outcome loaded = run(2, campaign_of("[load]\ntp = 1\nmethod = \"read\"\n"), dir_ / "l-h5",
                             "load", std::chrono::seconds(60));
  ASSERT_EQ(loaded.exit_code, 0) << loaded.describe();
  const nlohmann::json r = read_results(dir_ / "l-h5").at(0);
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& l = r.at("load");
  // TP 1 is not padded: the TP 2 padding rows 1100..1279 (/ 4) are not needed.
  const std::uint64_t needed = weights - (1280 - 1100) / 4 * kVocabRowBytes;
  EXPECT_EQ(l.at("bytes").get<std::uint64_t>(), needed);
  EXPECT_EQ(l.at("bytes_read").get<std::uint64_t>(), needed) << "hyperslabs bridge nothing";
  EXPECT_EQ(l.at("requests").get<std::uint64_t>(), 0u) << "no byte ranges";
  EXPECT_EQ(l.at("reads").get<std::uint64_t>(), 75u) << "one hyperslab a tensor";
}

}  // namespace
}  // namespace ckpt::integration
