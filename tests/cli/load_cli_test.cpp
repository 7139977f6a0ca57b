// `ckptbench load --tp N [--rank R]`: an inference TP planned from the manifest, as --phase load
// plans it. A TP 2 checkpoint (raw and safetensors, written by one process) loaded at TP 4, 1 and
// 2 by each method, exact ranges and gap bridging (--gap-bytes, load.gap_bytes; also with
// O_DIRECT): exact bytes needed, read, bridged and padding, the requests the campaign phase counts
// for the same checkpoint, every tensor verified; a flipped byte named by tensor and inference
// rank; full training state's weights; and the bad inputs (a TP the model's heads refuse, a rank
// out of range, --rank without --tp, a --gap-bytes that is no byte count, checkpoints that hold no
// loadable weights: a writer's ranks selection, the null backend; hdf5 read whole or through
// another backend), and an hdf5 checkpoint's slices loaded through hdf5.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/backend_available.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// One layer, 32 heads (8 KV heads): valid TP 1, 2, 4, 8. The vocabulary 1100 pads to 1152 rows
// at TP 1, 1280 at TP 2, 1536 at TP 4; model.scale = 4 divides every leading dimension of every
// slice. The embedding and the output layer (untied) hold 256 bf16 elements a row.
constexpr const char* kLoadModel = R"(name = "load-cli"
hidden_size = 256
intermediate_size = 512
num_hidden_layers = 1
num_attention_heads = 32
num_key_value_heads = 8
vocab_size = 1100
tie_word_embeddings = false
)";
constexpr std::uint64_t kVocabRowBytes = 2 * 256 * 2;  // a row of both vocabulary tensors
// The TP 2 checkpoint's weights at scale 4: embedding and output layer 1280 / 4 × 512 bytes each,
// the layer's q and o 32768 each, k and v 8192 each, gate, up and down 65536 each, three norms
// of 128.
constexpr std::uint64_t kWeights = 2 * 163840 + 2 * 32768 + 2 * 8192 + 3 * 65536 + 3 * 128;

// The TP 2 checkpoint's row-parallel o_proj and down_proj slices at scale 4: 64 rows of 256 and 512
// bytes. At TP 4 each inference rank needs one half of each row of one of them, so the file gap
// between two of its halves is the other half (128 and 256 bytes); bridging reads 63 of them a
// tensor and rank.
constexpr std::uint64_t kTp4Bridged = 4 * 63 * (128 + 256);

// The counts of the "plan:" line.
struct Plan {
  std::uint64_t needed = 0, read = 0, padding = 0, requests = 0, files = 0, bridged = 0, gap = 0;
};

Plan plan_of(const std::string& out) {
  static const std::regex line(
      R"(plan: .*: (\d+) bytes needed, (\d+) bytes read \(padding (\d+) bytes, not stored\), (\d+) requests in (\d+) )"
      R"(files, (\d+) bytes of gaps up to (\d+) bridged\n)");
  std::smatch m;
  if (!std::regex_search(out, m, line)) return {};
  return {std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4]),
          std::stoull(m[5]), std::stoull(m[6]), std::stoull(m[7])};
}

class LoadCli : public ::testing::Test {
 protected:
  // The TP 2 campaign writing `scope` state as `format` with `more` TOML at the end.
  fs::path campaign(const std::string& scope, const std::string& format,
                    const std::string& more = "") {
    return dir_.write(
        "c.toml",
        campaign_toml("lc", dir_ / "target",
                      "overwrite = true\n" + tp2_checkpoint_toml(model_, scope, format) + more));
  }
  // Writes the checkpoint; returns its directory.
  fs::path write(const std::string& scope, const std::string& format,
                 const std::string& more = "") {
    const Outcome out = ckptbench(
        {"run", campaign(scope, format, more).string(), "--output", (dir_ / "w").string(), "-q"});
    EXPECT_EQ(out.exit_code, 0) << out.describe();
    fs::remove_all(dir_ / "w");
    return latest_checkpoint(dir_ / "target" / "lc" / "case-0000");
  }
  // The campaign phase's load object of each case of load.tp = [4, 1] on the same checkpoint, with
  // load.gap_bytes = `gap`.
  std::vector<nlohmann::json> phase_loads(const std::string& scope, const std::string& format,
                                          const std::string& gap) {
    const Outcome out = ckptbench(
        {"run", campaign(scope, format, "[load]\ntp = [4, 1]\ngap_bytes = " + gap + "\n").string(),
         "--output", (dir_ / "p").string(), "--phase", "load", "-q"});
    EXPECT_EQ(out.exit_code, 0) << out.describe();
    std::vector<nlohmann::json> loads;
    for (const nlohmann::json& r : read_results(dir_ / "p")) loads.push_back(r.at("load"));
    fs::remove_all(dir_ / "p");
    return loads;
  }
  Outcome load(const fs::path& checkpoint, std::vector<std::string> more) {
    std::vector<std::string> args{"load", checkpoint.string(), "--no-drop-caches"};
    args.insert(args.end(), more.begin(), more.end());
    return ckptbench(args);
  }

  Scratch dir_;
  fs::path model_ = dir_.write("load-cli.toml", kLoadModel);
};

TEST_F(LoadCli, Tp2CheckpointLoadsAtTp4AndTp1ByEachMethodWithThePhasesCountsVerified) {
  for (const std::string format : {"raw", "safetensors"}) {
    SCOPED_TRACE(format);
    const fs::path checkpoint = write("weights", format);
    // TP 4: every stored byte is needed once; the TP 4 vocabulary padding (rows 1280..1535, / 4)
    // of both vocabulary tensors is stored nowhere. TP 1 loads Hugging Face names, which are
    // not padded at TP 1: the TP 2 padding rows 1100..1279 (/ 4) are not needed.
    // Requests of raw files (tensors in the model's order, each file's bytes contiguous):
    // TP 1 reads from each writer file its embedding and output-layer slices, q, k,
    // v, gate and up slices, and the strided halves of o and down as one request each into
    // scratch (no gap between their rows in the file), each norm coalesced with the slice that
    // follows it in file and memory: 9 + 9, with or without bridging (no gaps). TP 4 with exact
    // ranges (gap 0) reads each row half of o and down on its own (64 scaled rows, 4 ranks, 2
    // tensors: 512) besides its other slices: 542, as the phase counts. Bridging gaps up to
    // 64 KiB (the default) makes each rank's halves of o and of down one request into scratch:
    // 542 - 512 + 8 = 38, reading the 63 gaps of each as well (kTp4Bridged). A safetensors
    // file holds its tensors by name, as the safetensors package stores them, so 3 norms no
    // longer lie next to the slice they follow in memory: 3 requests more in each case.
    const std::uint64_t tp1 = kWeights - (1280 - 1100) / 4 * kVocabRowBytes;
    const std::uint64_t pad4 = (1536 - 1280) / 4 * kVocabRowBytes;
    struct Expected {
      std::string tp, gap;
      Plan plan;
    };
    const std::uint64_t by_name = format == "safetensors" ? 3 : 0;
    const std::vector<Expected> expected{
        {"4", "0", {kWeights, kWeights, pad4, 542 + by_name, 2, 0, 0}},
        {"1", "0", {tp1, tp1, 0, 18 + by_name, 2, 0, 0}},
        {"4",
         "65536",
         {kWeights, kWeights + kTp4Bridged, pad4, 38 + by_name, 2, kTp4Bridged, 65536}},
        {"1", "65536", {tp1, tp1, 0, 18 + by_name, 2, 0, 65536}}};
    std::vector<nlohmann::json> phase = phase_loads("weights", format, "0");
    for (nlohmann::json& l : phase_loads("weights", format, "\"64 KiB\""))
      phase.push_back(std::move(l));
    ASSERT_EQ(phase.size(), 4u);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& [tp, gap, want] = expected[i];
      SCOPED_TRACE("--tp " + tp + " --gap-bytes " + gap);
      EXPECT_EQ(phase[i].at("tp").get<int>(), std::stoi(tp));
      EXPECT_EQ(phase[i].at("bytes").get<std::uint64_t>(), want.needed);
      EXPECT_EQ(phase[i].at("bytes_read").get<std::uint64_t>(), want.read);
      EXPECT_EQ(phase[i].at("bridged_bytes").get<std::uint64_t>(), want.bridged);
      EXPECT_EQ(phase[i].at("gap_bytes").get<std::uint64_t>(), want.gap);
      EXPECT_EQ(phase[i].at("padding_bytes").get<std::uint64_t>(), want.padding);
      EXPECT_EQ(phase[i].at("requests").get<std::uint64_t>(), want.requests);
      // Each method, and the pipelined loader's O_DIRECT reads (it aligns them itself, outward
      // into its chunk slots, and copies out the planned bytes: the bridged requests as any).
      const std::vector<std::vector<std::string>> runs{{"--method", "pipelined"},
                                                       {"--method", "mmap"},
                                                       {"--method", "read"},
                                                       {"--method", "pipelined", "--direct"}};
      for (const std::vector<std::string>& run : runs) {
        std::vector<std::string> args{"--tp",          tp,      "--gap-bytes",  gap,
                                      "--chunk-bytes", "65536", "--pool-bytes", "262144",
                                      "--threads",     "3"};
        args.insert(args.end(), run.begin(), run.end());
        const Outcome out = load(checkpoint, args);
        ASSERT_EQ(out.exit_code, 0) << out.describe();
        const Plan got = plan_of(out.out);
        EXPECT_EQ(got.needed, want.needed) << out.out;
        EXPECT_EQ(got.read, want.read);
        EXPECT_EQ(got.padding, want.padding);
        EXPECT_EQ(got.requests, want.requests);
        EXPECT_EQ(got.files, want.files);
        EXPECT_EQ(got.bridged, want.bridged);
        EXPECT_EQ(got.gap, want.gap);
        EXPECT_TRUE(
            contains(out.out, "plan: --tp " + tp +
                                  " (PP 1, DP 1, weights) of a TP 2 × PP 1 × DP 1 checkpoint, "
                                  "inference " +
                                  (tp == "4" ? "ranks 0-3 (4 of 4)" : "rank 0 (1 of 1)")))
            << out.out;
        EXPECT_TRUE(contains(out.out, "load " + run[1] + " into host (3 threads, 65536 B chunks"))
            << out.out;
        EXPECT_EQ(contains(out.out, ", O_DIRECT)"), run.size() == 3) << out.out;
        EXPECT_TRUE(contains(out.out, std::to_string(want.read) + " bytes in " +
                                          std::to_string(want.requests) + " requests from "))
            << out.out;
        EXPECT_TRUE(contains(out.out, ", verified\n")) << out.out;
        EXPECT_TRUE(contains(out.out, "median " + run[1] + " over 1 loads")) << out.out;
      }
    }
    // The default is 64 KiB, as load.gap_bytes's.
    const Outcome bridged = load(checkpoint, {"--tp", "4"});
    ASSERT_EQ(bridged.exit_code, 0) << bridged.describe();
    EXPECT_EQ(plan_of(bridged.out).requests, 38u + by_name) << bridged.out;
    EXPECT_EQ(plan_of(bridged.out).bridged, kTp4Bridged);
    // TP 2, the writer's: each inference rank reads its writer rank's file, one request of a
    // raw file (every slice a multiple of 64 bytes, so placed in memory as packed in the file).
    // A safetensors file holds the tensors by name while memory holds them in the model's
    // order: one request per run of tensors in the same order in both, 9 per file.
    const Outcome same = load(checkpoint, {"--tp", "2"});
    ASSERT_EQ(same.exit_code, 0) << same.describe();
    EXPECT_EQ(plan_of(same.out).needed, kWeights) << same.out;
    EXPECT_EQ(plan_of(same.out).read, kWeights);
    EXPECT_EQ(plan_of(same.out).padding, 0u);
    EXPECT_EQ(plan_of(same.out).requests, format == "safetensors" ? 18u : 2u);
    EXPECT_TRUE(contains(same.out, ", verified\n")) << same.out;
  }
}

TEST_F(LoadCli, OneRankLoadsAloneAndAFlippedByteIsNamedByTensorAndRank) {
  const fs::path checkpoint = write("weights", "raw");
  // TP 2 rank 1's slice of q_proj holds (scaled) rows 32..63; TP 4 rank 2 loads rows 32..47.
  nlohmann::json q;
  const nlohmann::json manifest = read_manifest(checkpoint);
  for (const auto& t : manifest.at("tensors")) {
    if (t.at("name") == "model.layers.0.self_attn.q_proj.weight" && t.at("rank") == 1) q = t;
  }
  ASSERT_FALSE(q.is_null());
  ASSERT_EQ(q.at("offset").get<std::vector<int>>(),
            (std::vector<int>{128, 0}));  // unscaled rows 128..255
  {
    std::fstream f(checkpoint / q.at("file").get<std::string>(),
                   std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    const auto at = static_cast<std::streamoff>(q.at("file_offset").get<std::uint64_t>() + 7);
    f.seekg(at);
    const char old = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(old ^ 0x5a));
  }
  const Outcome bad = load(checkpoint, {"--tp", "4"});
  EXPECT_EQ(bad.exit_code, 1) << bad.describe();
  EXPECT_TRUE(contains(
      bad.out,
      "verification failed: tensor model.layers.0.self_attn.q_proj.weight (weight, rank 2) at "
      "global element [32, 3]"))
      << bad.out;
  const Outcome alone = load(checkpoint, {"--tp", "4", "--rank", "2", "--method", "read"});
  EXPECT_EQ(alone.exit_code, 1) << alone.describe();
  EXPECT_TRUE(contains(alone.out, "inference rank 2 (1 of 4)")) << alone.out;
  EXPECT_TRUE(contains(alone.out, "tensor model.layers.0.self_attn.q_proj.weight (weight, rank 2)"))
      << alone.out;
  // Rank 1 does not load the flipped byte: it verifies, and needs a quarter of the stored rows
  // of everything split by TP (padding none: rows 384..767 / 4 are all stored).
  const Outcome other = load(checkpoint, {"--tp", "4", "--rank", "1"});
  EXPECT_EQ(other.exit_code, 0) << other.describe();
  EXPECT_TRUE(contains(other.out, "inference rank 1 (1 of 4)")) << other.out;
  EXPECT_EQ(plan_of(other.out).padding, 0u) << other.out;
  EXPECT_TRUE(contains(other.out, ", verified\n")) << other.out;
}

// The loader reads through the backend the case (backend.name) or --backend names: a checkpoint
// written with uring (where this build runs it) and with skeleton, the template for new backends,
// is loaded by --phase load through the same backend by every method, and by `ckptbench load
// --backend`, every tensor verified.
TEST_F(LoadCli, PhaseLoadAndLoadCommandReadThroughTheNamedBackend) {
  for (const std::string backend : {"uring", "skeleton"}) {
    SCOPED_TRACE(backend);
    if (!backend_available(backend)) {
      std::cout << "[   NOTE   ] backend " << backend
                << " is unavailable in this build or on this machine: skipped\n";
      continue;
    }
    const std::string table = "[backend]\nname = \"" + backend + "\"\n";
    const fs::path checkpoint = write("weights", "safetensors", table);
    const std::string methods = "[load]\ntp = 4\nmethod = [\"pipelined\", \"mmap\", \"read\"]\n";
    const Outcome phase =
        ckptbench({"run", campaign("weights", "safetensors", table + methods).string(), "--output",
                   (dir_ / "p").string(), "--phase", "load", "-q"});
    ASSERT_EQ(phase.exit_code, 0) << phase.describe();
    const std::vector<nlohmann::json> results = read_results(dir_ / "p");
    ASSERT_EQ(results.size(), 3u);
    for (const nlohmann::json& r : results) {
      EXPECT_EQ(r.at("status"), "ok") << r.at("error");
      EXPECT_EQ(r.at("verified"), true);
      EXPECT_EQ(r.at("config").at("backend").at("name"), backend);
      EXPECT_EQ(r.at("load").at("bytes").get<std::uint64_t>(), kWeights);
    }
    fs::remove_all(dir_ / "p");
    const Outcome cli = load(checkpoint, {"--backend", backend, "--tp", "2", "--method", "read"});
    ASSERT_EQ(cli.exit_code, 0) << cli.describe();
    EXPECT_TRUE(contains(cli.out, ", backend " + backend + ", verified\n")) << cli.out;
  }
}

// A backend that cannot serve the method is one error naming both, exit 2, before any I/O.
TEST_F(LoadCli, ABackendThatCannotServeTheMethodIsRefusedBeforeAnyRead) {
  const std::string skeleton = "[backend]\nname = \"skeleton\"\n";
  const fs::path checkpoint = write("weights", "raw", skeleton);
  const Outcome direct = ckptbench(
      {"run", campaign("weights", "raw", skeleton + "[load]\ntp = 2\ndirect = true\n").string(),
       "--output", (dir_ / "d").string(), "--phase", "load"});
  EXPECT_EQ(direct.exit_code, 2) << direct.describe();
  EXPECT_TRUE(contains(direct.err,
                       "backend.name = \"skeleton\" cannot serve load.method = \"pipelined\" with "
                       "load.direct = true: it has no O_DIRECT (capabilities: direct_io = false)"))
      << direct.err;
  EXPECT_FALSE(fs::exists(dir_ / "d"));
  // A collective backend of its own file format reads hyperslabs in one call: the read method
  // only (where this build has hdf5).
  if (backend_available("hdf5")) {
    const Outcome hdf5 = ckptbench(
        {"run", campaign("weights", "raw", "[backend]\nname = \"hdf5\"\n[load]\ntp = 2\n").string(),
         "--output", (dir_ / "h").string(), "--phase", "load"});
    EXPECT_EQ(hdf5.exit_code, 2) << hdf5.describe();
    EXPECT_TRUE(contains(hdf5.err,
                         "backend.name = \"hdf5\" cannot serve load.method = \"pipelined\": a "
                         "collective backend reads each process's whole plan in one call"))
        << hdf5.err;
    EXPECT_FALSE(fs::exists(dir_ / "h"));
  }
  const Outcome mmap = load(checkpoint, {"--backend", "null", "--method", "mmap", "--tp", "2"});
  EXPECT_EQ(mmap.exit_code, 2) << mmap.describe();
  EXPECT_TRUE(
      contains(mmap.err,
               "--backend null cannot serve --method mmap: it maps no files (capabilities: mmap = "
               "false); choose --method pipelined or --method read"))
      << mmap.err;
  EXPECT_EQ(mmap.out, "");
  const Outcome unverifiable = load(checkpoint, {"--backend", "null", "--tp", "2"});
  EXPECT_EQ(unverifiable.exit_code, 2) << unverifiable.describe();
  EXPECT_TRUE(contains(unverifiable.err, "--backend null reads nothing back")) << unverifiable.err;
  // Without verification, null times the loader's own work: the same plan, no bytes read.
  const Outcome overhead = load(checkpoint, {"--backend", "null", "--tp", "2", "--no-verify"});
  ASSERT_EQ(overhead.exit_code, 0) << overhead.describe();
  EXPECT_TRUE(contains(overhead.out, ", backend null, not verified\n")) << overhead.out;
}

TEST_F(LoadCli, WeightsOfAFullStateCheckpointLoadWithTpAndWholeFilesAreRefused) {
  const fs::path checkpoint = write("full", "raw");
  const Outcome refused = load(checkpoint, {});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_TRUE(contains(refused.err, "loads weights-only checkpoints")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "--tp N")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "e.g. --tp 2, the writer's")) << refused.err;
  const Outcome one = load(checkpoint, {"--tp", "1", "--method", "mmap"});
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  // Megatron names; the weights alone of the full state (bf16, as the weights-only checkpoint).
  EXPECT_EQ(plan_of(one.out).needed, kWeights - (1280 - 1152) / 4 * kVocabRowBytes) << one.out;
  EXPECT_TRUE(contains(one.out, ", verified\n")) << one.out;
}

TEST_F(LoadCli, BadInputsAreOneClearErrorEach) {
  const fs::path checkpoint = write("weights", "safetensors");
  const Outcome three = load(checkpoint, {"--tp", "3"});
  EXPECT_EQ(three.exit_code, 2) << three.describe();
  EXPECT_TRUE(contains(
      three.err,
      "--tp 3: num_attention_heads (32) is not divisible by tp (3); valid tp for load-cli: "
      "1, 2, 4, 8"))
      << three.err;
  const Outcome rank = load(checkpoint, {"--tp", "4", "--rank", "4"});
  EXPECT_EQ(rank.exit_code, 2) << rank.describe();
  EXPECT_TRUE(contains(rank.err, "--rank 4 is out of range: --tp 4 has inference ranks 0 to 3"))
      << rank.err;
  const Outcome lone = load(checkpoint, {"--rank", "1"});
  EXPECT_EQ(lone.exit_code, 2) << lone.describe();
  EXPECT_TRUE(contains(lone.err, "--rank requires --tp")) << lone.err;
  for (const std::string gap : {"-1", "64k", "many"}) {
    const Outcome bad = load(checkpoint, {"--tp", "4", "--gap-bytes", gap});
    EXPECT_EQ(bad.exit_code, 2) << bad.describe();
    EXPECT_TRUE(
        contains(bad.err,
                 "--gap-bytes: give a number of bytes, 0 or more (e.g. 65536; 0 reads the exact "
                 "ranges only), not \"" +
                     gap + "\""))
        << bad.err;
  }
  const Outcome whole = load(checkpoint, {"--gap-bytes", "0"});
  EXPECT_EQ(whole.exit_code, 2) << whole.describe();
  EXPECT_TRUE(contains(whole.err, "--gap-bytes requires --tp")) << whole.err;

  // Writer rank 0 alone: the other TP half of every split tensor is stored nowhere.
  const fs::path partial = write("weights", "raw", "[ranks]\nselect = \"list\"\nlist = [0]\n");
  const Outcome half = load(partial, {"--tp", "1"});
  EXPECT_EQ(half.exit_code, 2) << half.describe();
  EXPECT_TRUE(contains(half.err, "--tp 1: ")) << half.err;
  EXPECT_TRUE(
      contains(half.err,
               "tensor model.embed_tokens.weight (weight): global element [160, 0] (flat 40960) is "
               "stored in no piece of the checkpoint"))
      << half.err;
  EXPECT_TRUE(contains(half.err, "this checkpoint holds writer ranks [0] of 2; with --rank"))
      << half.err;
  // Inference rank 0 of TP 2 needs writer rank 0's slices only.
  EXPECT_EQ(load(partial, {"--tp", "2", "--rank", "0"}).exit_code, 0);
  // A backend of its own format (hdf5) reads no raw checkpoint.
  const Outcome raw = load(partial, {"--tp", "2", "--backend", "hdf5", "--method", "read"});
  EXPECT_EQ(raw.exit_code, 2) << raw.describe();
  EXPECT_TRUE(contains(raw.err, "--backend hdf5 reads only the files of its own format"))
      << raw.err;

  // The null backend stores nothing: its manifest lists weights its files do not hold.
  const fs::path nothing = write("weights", "raw", "[backend]\nname = \"null\"\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--tp", "2"}, std::vector<std::string>{}}) {
    const Outcome none = load(nothing, args);
    EXPECT_EQ(none.exit_code, 2) << none.describe();
    EXPECT_TRUE(contains(none.err, "written with backend.name = \"null\", which stores no data"))
        << none.err;
  }

  // hdf5 stores datasets, not bytes at the manifest's offsets (where this build has it): its TP
  // slices load as hyperslabs through hdf5 itself, not whole and not through another backend;
  // hdf5 reads no raw checkpoint either.
  if (!std::regex_search(ckptbench({"backends"}).out, std::regex("\nhdf5 +yes"))) return;
  const fs::path datasets = write("weights", "raw", "[backend]\nname = \"hdf5\"\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--tp", "2"}, std::vector<std::string>{}}) {
    const Outcome hdf5 = load(datasets, args);
    EXPECT_EQ(hdf5.exit_code, 2) << hdf5.describe();
    EXPECT_TRUE(contains(hdf5.err,
                         "written with backend.name = \"hdf5\", which stores its own "
                         "self-describing format, not the raw bytes at the manifest's offsets "
                         "that `ckptbench load` reads " +
                             std::string(args.empty() ? "whole" : "through --backend posix") +
                             "; load its TP slices with --tp N --backend hdf5"))
        << hdf5.err;
  }
  // A file per rank holds each rank's slices as datasets of their own shapes: TP 4 reads
  // hyperslabs of them, inference rank 1's vocabulary rows from both files.
  const Outcome slices = load(datasets, {"--tp", "4", "--backend", "hdf5", "--method", "read"});
  EXPECT_EQ(slices.exit_code, 0) << slices.describe();
  EXPECT_TRUE(contains(slices.out, ", backend hdf5, verified\n")) << slices.out;
}

}  // namespace
}  // namespace ckpt::integration
