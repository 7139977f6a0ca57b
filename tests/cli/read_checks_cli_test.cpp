// What every read path (--phase restore, a resharding restore, --phase load, `ckptbench load`
// with and without --tp) checks before it trusts a checkpoint: a [training] checkpoint of each
// engine verifies against the iteration its manifest names, padding rows of another TP included,
// and a flipped byte is still named; each kind of damage to a safetensors checkpoint or its
// manifest is refused with exit 1 and a message naming file, field and problem; manifest paths
// out of the checkpoint and paths that are not checkpoints are refused, each with its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// Two layers (PP 2), 32 heads (TP 4): the vocabulary 1100 pads to 1280 rows at TP 2 and 1536 at
// TP 4, so restoring TP 2 × PP 2 as TP 4 × PP 1 needs padding rows no file stores.
constexpr const char* kReadChecksModel = R"(name = "read-checks"
hidden_size = 256
intermediate_size = 512
num_hidden_layers = 2
num_attention_heads = 32
num_key_value_heads = 8
vocab_size = 1100
tie_word_embeddings = false
)";

void flip_byte(const fs::path& file, std::uint64_t at, char mask) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << file;
  f.seekg(static_cast<std::streamoff>(at));
  const char old = static_cast<char>(f.get());
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(old ^ mask));
}

class ReadChecks : public ::testing::Test {
 protected:
  // The campaign `name` with the keys of every case, then `more`.
  fs::path campaign(const std::string& name, const std::string& more) {
    return dir_.write(
        name + ".toml",
        campaign_toml(
            "rc", dir_ / "target",
            "create_target = true\noverwrite = true\nkeep = true\niterations = 1\nwarmup = 0\n"
            "[model]\nname = \"" +
                model_.string() + "\"\nscale = 4\n[cache]\npolicy = \"none\"\n" + more));
  }
  Outcome run(const fs::path& file, const std::string& phase) {
    const fs::path out = dir_ / ("out-" + std::to_string(runs_++));
    last_results_ = out;
    return ckptbench({"run", file.string(), "--output", out.string(), "--phase", phase, "-q"});
  }
  std::vector<nlohmann::json> results() const { return read_results(last_results_); }
  Outcome load(const fs::path& checkpoint, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"load", checkpoint.string(), "--no-drop-caches"};
    args.insert(args.end(), more.begin(), more.end());
    return ckptbench(args);
  }
  fs::path checkpoint() const { return latest_checkpoint(dir_ / "target" / "rc" / "case-0000"); }

  Scratch dir_;
  fs::path model_ = dir_.write("read-checks.toml", kReadChecksModel);
  fs::path last_results_;
  int runs_ = 0;
};

TEST_F(ReadChecks, TrainingCheckpointOfEachEngineVerifiesOnEveryReadPath) {
  // Each engine; the last flushes through a host pool smaller than the state (the chunk ring).
  std::string last_keys;
  for (const std::string engine :
       {"\"sync\"", "\"async\"", "\"lazy\"", "\"async\"\nhost_pool_bytes = \"256 KiB\""}) {
    SCOPED_TRACE("engine.name = " + engine);
    const std::string keys =
        "[parallel]\ntp = 2\npp = 2\n[state]\nscope = \"weights\"\n[training]\niterations = 2\n"
        "iteration_seconds = 0.01\ncheckpoint_every = 1\n[engine]\nname = " +
        engine + "\n";
    last_keys = keys;
    const Outcome written = run(campaign("c", keys), "checkpoint");
    ASSERT_EQ(written.exit_code, 0) << written.describe();
    const fs::path kept = checkpoint();
    // The state of the second iteration (0-based), not the state before any update.
    ASSERT_EQ(read_manifest(kept).at("training_iteration"), 1);

    const Outcome same = run(campaign("c", keys), "restore");
    ASSERT_EQ(same.exit_code, 0) << same.describe();
    EXPECT_EQ(results().at(0).at("verified"), true);
    // TP 4 × PP 1: padding rows 1280..1535 (/ 4) of both vocabulary tensors, written by the reader.
    const Outcome reshard = run(campaign("r", keys + "[restore]\ntp = 4\npp = 1\n"), "restore");
    ASSERT_EQ(reshard.exit_code, 0) << reshard.describe();
    EXPECT_EQ(results().at(0).at("verified"), true);
    EXPECT_EQ(results().at(0).at("reshard").at("padding_bytes"), (1536 - 1280) / 4 * 2 * 256 * 2);
    const Outcome phase = run(
        campaign("l", keys + "[load]\ntp = [2, 4]\nmethod = [\"pipelined\", \"mmap\", \"read\"]\n"),
        "load");
    ASSERT_EQ(phase.exit_code, 0) << phase.describe();
    ASSERT_EQ(results().size(), 6u);
    for (const nlohmann::json& r : results()) EXPECT_EQ(r.at("verified"), true) << r.dump();

    const Outcome whole = load(kept);
    EXPECT_EQ(whole.exit_code, 0) << whole.describe();
    EXPECT_TRUE(contains(whole.out, ", verified\n")) << whole.out;
    // Each method (the phase above ran each at both TPs through the same loader).
    for (const auto& [tp, method] :
         {std::pair{"2", "pipelined"}, std::pair{"4", "mmap"}, std::pair{"4", "read"}}) {
      const Outcome sliced = load(kept, {"--tp", tp, "--method", method});
      EXPECT_EQ(sliced.exit_code, 0) << "--tp " << tp << " --method " << method << "\n"
                                     << sliced.describe();
      EXPECT_TRUE(contains(sliced.out, ", verified\n")) << sliced.out;
    }
  }
  // One flipped byte of the first tensor's data (of the last engine's checkpoint) is still found,
  // and named, also after resharding.
  const fs::path kept = checkpoint();
  const nlohmann::json first = read_manifest(kept).at("tensors").at(0);
  const std::string name = first.at("name").get<std::string>();
  flip_byte(kept / first.at("file").get<std::string>(),
            first.at("file_offset").get<std::uint64_t>() + 7, 0x5a);
  const Outcome bad = load(kept, {"--tp", "4"});
  EXPECT_EQ(bad.exit_code, 1) << bad.describe();
  EXPECT_TRUE(contains(bad.out, "verification failed: tensor " + name + " (weight")) << bad.out;
  const Outcome bad_restore =
      run(campaign("r", last_keys + "[restore]\ntp = 4\npp = 1\n"), "restore");
  EXPECT_EQ(bad_restore.exit_code, 1) << bad_restore.describe();
  EXPECT_TRUE(contains(bad_restore.err, "verification failed: tensor " + name + " (weight"))
      << bad_restore.err;
}

// A safetensors file's header: its length word and its JSON text.
struct Header {
  std::uint64_t length = 0;
  std::string text;
};

Header header_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  Header h;
  unsigned char word[8] = {};
  in.read(reinterpret_cast<char*>(word), 8);
  for (int i = 7; i >= 0; --i) h.length = (h.length << 8) | word[i];
  h.text.resize(h.length);
  in.read(h.text.data(), static_cast<std::streamsize>(h.length));
  return h;
}

// Replaces the header's JSON by `text`, padded with spaces to the same length (as the format
// allows).
void rewrite_header(const fs::path& file, std::string text) {
  const std::uint64_t length = header_of(file).length;
  ASSERT_LE(text.size(), length);
  text.resize(length, ' ');
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(8);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// One kind of damage: what it does to the checkpoint in `dir`, and the message each read path
// gives: `run_message` from --phase restore and --phase load, `load_message` from `ckptbench load`.
struct Damage {
  std::string name;
  std::function<void(const fs::path& dir)> apply;
  std::string run_message;
  std::string load_message;
  bool safetensors_file = true;  // the official reader is asked about the first file too
};

std::vector<Damage> damages(const std::string& removed) {
  const std::string file = "model-00001-of-00002.safetensors";
  const auto manifest_edit = [](const std::function<void(nlohmann::json&)>& edit) {
    return [edit](const fs::path& dir) {
      nlohmann::json m = read_manifest(dir);
      edit(m);
      std::ofstream(dir / kManifest, std::ios::trunc) << m.dump();
    };
  };
  const std::string header_limit =
      file + ": header length: 9223372036854775808 bytes is over the 100000000-byte limit";
  const std::string overlap = "field \"data_offsets\": [";
  return {
      {"header length 2^63",
       [file](const fs::path& dir) {
         std::fstream f(dir / file, std::ios::in | std::ios::out | std::ios::binary);
         const char word[8] = {0, 0, 0, 0, 0, 0, 0, static_cast<char>(0x80)};
         f.write(word, 8);
       },
       header_limit, header_limit},
      {"a header byte flipped", [file](const fs::path& dir) { flip_byte(dir / file, 8, 0x01); },
       file + ": header JSON: ", file + ": header JSON: "},
      {"an unknown dtype",
       [file](const fs::path& dir) {
         std::string text = header_of(dir / file).text;
         text.replace(text.find("\"BF16\""), 6, "\"BX16\"");
         rewrite_header(dir / file, text);
       },
       "field \"dtype\": unknown dtype \"BX16\"", "field \"dtype\": unknown dtype \"BX16\""},
      {"overlapping data_offsets",
       [file](const fs::path& dir) {
         nlohmann::ordered_json h = nlohmann::ordered_json::parse(header_of(dir / file).text);
         for (auto& [name, t] : h.items()) {
           if (name == "__metadata__" || t.at("data_offsets").at(0) == 0) continue;
           t["data_offsets"] = {t["data_offsets"][0].get<std::uint64_t>() - 2,
                                t["data_offsets"][1].get<std::uint64_t>() - 2};
           break;
         }
         rewrite_header(dir / file, h.dump());
       },
       overlap, overlap},
      {"a header of nested arrays",
       [file](const fs::path& dir) {
         const std::size_t depth = header_of(dir / file).length / 2;
         rewrite_header(dir / file, std::string(depth, '[') + std::string(depth, ']'));
       },
       "header JSON: expected an object of tensors, found array",
       "header JSON: expected an object of tensors, found array"},
      {"4 KiB appended",
       [file](const fs::path& dir) {
         std::ofstream(dir / file, std::ios::app | std::ios::binary) << std::string(4096, '\0');
       },
       "(truncated or trailing bytes)", "(truncated or trailing bytes)"},
      {"the index deleted",
       [](const fs::path& dir) { fs::remove(dir / "model.safetensors.index.json"); },
       "model.safetensors.index.json: missing", "model.safetensors.index.json: missing", false},
      {"a tensors entry removed", manifest_edit([](nlohmann::json& m) { m["tensors"].erase(1); }),
       "tensors: tensor " + removed + " is missing", "checkpoint_hash: ", false},
      {"tensors: []",
       manifest_edit([](nlohmann::json& m) { m["tensors"] = nlohmann::json::array(); }),
       "is missing (the case writes ", "tensors: is [] — a checkpoint lists at least one tensor",
       false},
      {"a tensors entry's offset changed", manifest_edit([](nlohmann::json& m) {
         m["tensors"][1]["file_offset"] = m["tensors"][1]["file_offset"].get<std::uint64_t>() + 2;
       }),
       "tensors: tensor " + removed + ": field file_offset is ", "checkpoint_hash: ", false},
  };
}

class DamagedSafetensors : public ReadChecks {
 protected:
  // Applies damages()[first, last) each to a fresh copy of a TP 2 safetensors checkpoint and
  // expects every read path to refuse it; then the pristine copy passes them all.
  void expect_each_refused(std::size_t first, std::size_t last);
};

TEST_F(DamagedSafetensors, EachDamageToAFileIsRefusedOnEveryReadPath) {
  expect_each_refused(0, 7);
}

TEST_F(DamagedSafetensors, EachDamageToTheTensorListIsRefusedOnEveryReadPath) {
  expect_each_refused(7, 10);
}

void DamagedSafetensors::expect_each_refused(std::size_t first, std::size_t last) {
  const std::string keys =
      "[parallel]\ntp = 2\n[state]\nscope = \"weights\"\n[strategy]\nformat = \"safetensors\"\n";
  const fs::path write_file = campaign("c", keys);
  const fs::path load_file = campaign("l", keys + "[load]\ntp = 1\n");
  ASSERT_EQ(run(write_file, "checkpoint").exit_code, 0);
  const fs::path kept = checkpoint();
  const fs::path pristine = dir_ / "pristine";
  fs::copy(kept, pristine, fs::copy_options::recursive);
  const nlohmann::json second = read_manifest(kept).at("tensors").at(1);
  const std::string removed =
      second.at("name").get<std::string>() + " (weight, rank " + second.at("rank").dump() + ")";
  const std::vector<Damage> all = damages(removed);
  ASSERT_EQ(all.size(), 10u);
  const std::vector<Damage> kinds(all.begin() + static_cast<std::ptrdiff_t>(first),
                                  all.begin() + static_cast<std::ptrdiff_t>(last));
  const std::string python = std::string(CKPT_SOURCE_DIR) + "/.deps/venv/bin/python";
  const bool have_python = fs::exists(python);
  if (!have_python)
    std::cout << "note: " << python
              << " is missing (ci/setup.sh makes it): the official reader is not asked\n";
  for (const Damage& d : kinds) {
    SCOPED_TRACE(d.name);
    fs::remove_all(kept);
    fs::copy(pristine, kept, fs::copy_options::recursive);
    d.apply(kept);
    for (const std::string phase : {"restore", "load"}) {
      const Outcome o = run(phase == "load" ? load_file : write_file, phase);
      EXPECT_EQ(o.exit_code, 1) << "--phase " << phase << "\n" << o.describe();
      EXPECT_TRUE(contains(o.err, "damaged checkpoint: ")) << o.err;
      EXPECT_TRUE(contains(o.err, d.run_message)) << "--phase " << phase << "\n" << o.err;
    }
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{}, std::vector<std::string>{"--tp", "1"}}) {
      const Outcome o = load(kept, args);
      EXPECT_EQ(o.exit_code, 1) << o.describe();
      EXPECT_TRUE(contains(o.err, "ckptbench: error: damaged checkpoint: ")) << o.err;
      EXPECT_TRUE(contains(o.err, d.load_message)) << o.err;
    }
    if (!have_python || !d.safetensors_file) continue;
    // Hugging Face's reader refuses the same file.
    const Outcome hf = run_process({python, "-c",
                                    "import sys; from safetensors import safe_open; "
                                    "safe_open(sys.argv[1], framework='numpy')",
                                    (kept / "model-00001-of-00002.safetensors").string()},
                                   std::chrono::seconds(60));
    EXPECT_NE(hf.exit_code, 0) << hf.describe();
  }
  // The pristine checkpoint passes every path, and the official reader opens its files.
  fs::remove_all(kept);
  fs::copy(pristine, kept, fs::copy_options::recursive);
  EXPECT_EQ(run(write_file, "restore").exit_code, 0);
  EXPECT_EQ(run(load_file, "load").exit_code, 0);
  EXPECT_EQ(load(kept).exit_code, 0);
  if (have_python) {
    const Outcome hf = run_process({python, "-c",
                                    "import sys; from safetensors import safe_open; "
                                    "safe_open(sys.argv[1], framework='numpy')",
                                    (kept / "model-00001-of-00002.safetensors").string()},
                                   std::chrono::seconds(60));
    EXPECT_EQ(hf.exit_code, 0) << hf.describe();
  }
}

TEST_F(ReadChecks, LoadRefusesManifestPathsOutOfTheCheckpointAndANonIteration) {
  ASSERT_EQ(run(campaign("c", "[state]\nscope = \"weights\"\n"), "checkpoint").exit_code, 0);
  const fs::path kept = checkpoint();
  const nlohmann::json pristine = read_manifest(kept);
  dir_.write("outside.bin", std::string(1 << 20, 'x'));
  const std::string outside = (dir_ / "outside.bin").string();
  for (const std::string& path :
       {outside, std::string("../../../outside.bin"), std::string("sub/../../x")}) {
    for (const bool tensor : {true, false}) {
      nlohmann::json m = pristine;
      if (tensor) {
        m["tensors"][0]["file"] = path;
      } else {
        m["files"][0]["path"] = path;
      }
      std::ofstream(kept / kManifest, std::ios::trunc) << m.dump();
      for (const std::vector<std::string>& args :
           {std::vector<std::string>{}, std::vector<std::string>{"--tp", "1"}}) {
        const Outcome o = load(kept, args);
        EXPECT_EQ(o.exit_code, 2) << path << "\n" << o.describe();
        // A `files` path outside is refused when the manifest is read (naming the field), or
        // by the read paths' own check (naming the entry), whichever sees it first.
        EXPECT_TRUE(contains(o.err, "damaged manifest: " + std::string(tensor ? "tensor " : "")))
            << o.err;
        EXPECT_TRUE(contains(o.err, "names file \"" + path + "\", which is not a file inside "))
            << o.err;
      }
    }
  }
  // A training_iteration that is no iteration number is named with the manifest.
  nlohmann::json m = pristine;
  m["training_iteration"] = "x";
  std::ofstream(kept / kManifest, std::ios::trunc) << m.dump();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, std::vector<std::string>{"--tp", "1"}}) {
    const Outcome o = load(kept, args);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, (kept / kManifest).string() +
                                    ": damaged manifest: `training_iteration`: must be a whole "
                                    "number, found a string (\"x\")"))
        << o.err;
  }
}

TEST_F(ReadChecks, LoadSaysWhatAPathIsWhenItIsNotACheckpoint) {
  ASSERT_EQ(run(campaign("c", "[state]\nscope = \"weights\"\n"), "checkpoint").exit_code, 0);
  const fs::path case_dir = dir_ / "target" / "rc" / "case-0000";
  const fs::path kept = checkpoint();
  const struct {
    fs::path path;
    std::string message;
  } cases[] = {
      {dir_ / "nowhere",
       (dir_ / "nowhere").string() + ": no such file or directory — give a checkpoint directory"},
      {dir_ / "read-checks.toml",
       (dir_ / "read-checks.toml").string() + " is a file, not a checkpoint directory"},
      {kept / kManifest, (kept / kManifest).string() +
                             " is the manifest itself: give its directory, " + kept.string()},
      {case_dir,
       case_dir.string() +
           " is a case directory, not a checkpoint: give one of its checkpoints, e.g. the "
           "latest, " +
           kept.string()},
      {dir_.path(),
       dir_.path().string() +
           ": no ckptbench-manifest.json — not a checkpoint directory, or a checkpoint whose "
           "writer failed or was interrupted"},
  };
  for (const auto& [path, message] : cases) {
    const Outcome o = load(path);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, message)) << o.err;
    EXPECT_FALSE(contains(o.err, "the checkpoint is incomplete")) << o.err;
  }
  // A manifest of version 2 (its checkpoint_hash covers the configuration only) is refused by
  // every read path as an older ckptbench's, not as damage.
  nlohmann::json older = read_manifest(kept);
  older["version"] = 2;
  std::ofstream(kept / kManifest, std::ios::trunc) << older.dump();
  const std::string message =
      (kept / kManifest).string() + ": manifest version 2 was written by an older ckptbench";
  const Outcome loaded = load(kept);
  EXPECT_EQ(loaded.exit_code, 2) << loaded.describe();
  EXPECT_TRUE(contains(loaded.err, message)) << loaded.err;
  const Outcome restored = run(campaign("c", "[state]\nscope = \"weights\"\n"), "restore");
  EXPECT_EQ(restored.exit_code, 2) << restored.describe();
  EXPECT_TRUE(contains(restored.err, message)) << restored.err;
  EXPECT_TRUE(contains(restored.err, "write the checkpoint again")) << restored.err;
}

}  // namespace
}  // namespace ckpt::integration
