// results/SCHEMA.md against real records: small campaigns run through the binary — write and
// restore (DCP and Megatron layouts, the DP gather, calibration, request latency), a kept
// checkpoint restored into another layout and loaded as inference weights, and the training loop
// under each engine — and every key path of their records must be named in the doc, every key
// path the doc names must be in one of them, in the convention schema_doc::doc_paths reads. The
// same for the tables of DLIO's summary.json (docs/mlperf.md) and of the checkpoint manifest
// (docs/checkpoint-format.md) against the files a run leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/memory/memory_spaces.hpp"
#include "harness/results/schema_version.hpp"
#include "tests/cli/schema_paths.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

using schema_doc::DocPath;
using schema_doc::Path;

const fs::path kSchemaDoc = fs::path(CKPT_SOURCE_DIR) / "results" / "SCHEMA.md";

// Only a record of device memory staged for a backend that cannot address it has these; the
// device test below checks them where there is a CUDA device.
const std::set<std::string> kDeviceOnly{"staging.mode", "staging.chunk_bytes", "staging.buffers",
                                        "phases.write.d2h", "phases.read.h2d"};
// Only a record of a backend that counts its requests (s3, against a server) has these, and only it
// or a run of several processes has checkpoint_visible_seconds; tests/backends/s3 and RunRecord
// (two processes under mpirun) check them.
const std::set<std::string> kObjectStoreOnly{
    "phases.write.counters.<name>", "phases.read.counters.<name>", "store_requests.<name>",
    "store_requests_max.<name>",    "training.counters.<name>",    "checkpoint_visible_seconds"};

std::vector<DocPath> doc_paths_of(const fs::path& page) {
  std::ifstream in(page);
  std::stringstream text;
  text << in.rdbuf();
  return schema_doc::doc_paths(text.str());
}

std::vector<DocPath> schema_doc_paths() {
  return doc_paths_of(kSchemaDoc);
}

// The tiny model's full training state, kept, two timed iterations after a warm-up, caches left
// alone, then `rest`.
std::string campaign(const Scratch& dir, const std::string& name, const std::string& rest) {
  return tiny_full_state_campaign(dir, name, 2, 1, rest);
}

// The records of `ckptbench run FILE --output OUT ARGS...`, which must succeed.
std::vector<nlohmann::json> run_campaign(const Scratch& dir, const std::string& name,
                                         const std::string& text,
                                         const std::vector<std::string>& args = {}) {
  const fs::path file = dir.write(name + ".toml", text);
  const fs::path output = dir / ("out-" + name + std::to_string(args.size()));
  std::vector<std::string> argv{"run", file.string(), "--output", output.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const Outcome o = ckptbench(argv);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  const std::vector<nlohmann::json> records = read_results(output);
  for (const nlohmann::json& r : records) {
    EXPECT_EQ(r.at("status"), "ok") << r.dump();
    EXPECT_EQ(r.at("schema_version"), harness::kResultsSchemaVersion);
  }
  return records;
}

// An [mlperf] case: the 8B preset, with mlperf_sets one checkpoint at a smaller scale.
std::string mlperf_preset() {
  return read_text(fs::path(CKPT_SOURCE_DIR) / "configs" / "mlperf" / "llama3-8b.toml");
}

std::vector<std::string> mlperf_sets(const Scratch& dir) {
  return {"--set", "campaign.target=" + (dir / "target").string(),
          "--set", "model.scale=4096",
          "--set", "campaign.iterations=1",
          "--set", "cache.policy=fadvise"};
}

// Every phase and engine: write + restore, resharding restore, load, compressed, training.
std::vector<nlohmann::json> records_of_every_phase(const Scratch& dir) {
  std::vector<nlohmann::json> all;
  const auto add = [&all](const std::vector<nlohmann::json>& records) {
    EXPECT_FALSE(records.empty());
    all.insert(all.end(), records.begin(), records.end());
  };
  // DCP writes .metadata; Megatron's gathered optimizer moves the DP ranks' shards; calibration
  // samples and request latencies.
  add(run_campaign(dir, "bandwidth", campaign(dir, "bandwidth", R"([parallel]
dp = 2
zero = 1
[strategy]
layout = ["dcp", "megatron"]
[measure]
calibration = true
latency = true
)")));
  const std::string tp2 = campaign(dir, "kept", "[parallel]\ntp = 2\n");
  add(run_campaign(dir, "kept", tp2, {"--phase", "checkpoint"}));
  add(run_campaign(dir, "kept", tp2, {"--phase", "restore", "--set", "restore.tp=1"}));
  add(run_campaign(dir, "kept", tp2,
                   {"--phase", "load", "--set", "load.tp=1", "--set",
                    R"(load.method=["pipelined","mmap","read"])"}));
  // DP ranks 1 and 2 given DP rank 0's weights, each stored piece read once (one process: the
  // copies go between its ranks).
  const std::string dp3 = campaign(dir, "replicas", R"([parallel]
dp = 3
zero = 1
[restore]
replicas = "cooperative"
)");
  add(run_campaign(dir, "replicas", dp3, {"--phase", "checkpoint"}));
  add(run_campaign(dir, "replicas", dp3,
                   {"--phase", "restore", "--set", "restore.replicas=cooperative"}));
  add(run_campaign(dir, "compressed",
                   campaign(dir, "compressed", "[strategy]\ncompression = \"bytegroup\"\n")));
  // Selective checkpoints written, then restored from the two they span.
  const std::string selective = campaign(dir, "selective", "[strategy]\nselective_every = 2\n");
  add(run_campaign(dir, "selective", selective, {"--phase", "checkpoint"}));
  add(run_campaign(dir, "selective-restore", selective, {"--phase", "restore"}));
  // Linear weights in FP8 with their block scales: what they save against bf16.
  add(run_campaign(dir, "fp8", campaign(dir, "fp8", ""),
                   {"--set", "model.weights=fp8_block", "--set", "state.scope=weights"}));
  add(run_campaign(dir, "training", campaign(dir, "training", R"([training]
iterations = 4
iteration_seconds = 0.01
checkpoint_every = 2
[engine]
name = ["sync", "async", "lazy"]
)")));
  // The tiered engine in one process (one node, F = 1), then node 0 lost: recovered from the
  // backend.
  add(run_campaign(dir, "tiered", campaign(dir, "tiered", R"([training]
iterations = 4
iteration_seconds = 0.01
checkpoint_every = 2
[engine]
name = "tiered"
[tiers]
replicas = 1
lost_nodes = [0]
local_dir = ")" + (dir / "local").string() + "\"\n")));
  add(run_campaign(dir, "mlperf", mlperf_preset(), mlperf_sets(dir)));
  return all;
}

std::set<Path> paths_of(const std::vector<nlohmann::json>& records) {
  std::set<Path> paths;
  for (const nlohmann::json& r : records) paths.merge(schema_doc::record_paths(r));
  return paths;
}

// What a record has that the doc does not name, one per line.
std::string undocumented(const std::set<Path>& paths, const std::vector<DocPath>& doc) {
  std::string out;
  for (const Path& p : paths) {
    if (!schema_doc::documented(p, doc)) out += schema_doc::path_text(p) + "\n";
  }
  return out;
}

TEST(DocsResultsSchema, ReadsTheConventionOfKeyPathTables) {
  const std::vector<DocPath> doc = schema_doc::doc_paths(
      "| field | type |\n|---|---|\n| `ignored` | int |\n\n"
      "| key path | type | meaning |\n|---|---|---|\n"
      "| `a`, `b.c[].d` | int | `not.a.path` |\n"
      "| `m.<any key>` | map | values described in words |\n"
      "| `p.{x,y}.{s,t}` | float | four paths |\n");
  std::vector<std::string> written;
  for (const DocPath& d : doc) written.push_back(schema_doc::path_text(d.path));
  EXPECT_EQ(written, (std::vector<std::string>{"a", "b.c[].d", "m.<any key>", "p.x.s", "p.x.t",
                                               "p.y.s", "p.y.t"}));
  const nlohmann::json record = nlohmann::json::parse(
      R"({"a": 1, "b": {"c": [{"d": 1}, {"d": 2, "e": 3}]}, "m": {"k": {"deep": 1}},
          "p": {"x": {"s": 1, "t": 2}, "y": {"s": 1, "t": 2}}, "q": [1, 2]})");
  // b.c[].e and q are in the record, not in the doc.
  EXPECT_EQ(undocumented(schema_doc::record_paths(record), doc), "b.c[].e\nq\n");
  // A doc path no record has.
  const std::set<Path> without_a = schema_doc::record_paths(nlohmann::json{{"b", 1}});
  EXPECT_FALSE(schema_doc::in_some_record(doc[0], without_a));
  EXPECT_TRUE(schema_doc::in_some_record(doc[0], schema_doc::record_paths(record)));
  EXPECT_THROW(schema_doc::doc_paths("| key path |\n|---|\n| `a..b` |\n"), std::invalid_argument);
}

TEST(DocsResultsSchema, NamesEveryKeyPathOfTheRecordsOfEveryPhaseAndEngineAndNoOther) {
  const Scratch dir;
  const std::vector<nlohmann::json> records = records_of_every_phase(dir);
  ASSERT_EQ(records.size(), 18u);
  const std::set<Path> paths = paths_of(records);
  const std::vector<DocPath> doc = schema_doc_paths();
  ASSERT_GT(doc.size(), 100u) << kSchemaDoc << " has no `key path` tables";
  EXPECT_EQ(undocumented(paths, doc), "")
      << "key paths of real records that " << kSchemaDoc << " does not name";
  std::string absent;
  for (const DocPath& d : doc) {
    if (!kDeviceOnly.contains(d.written) && !kObjectStoreOnly.contains(d.written) &&
        !schema_doc::in_some_record(d, paths))
      absent += d.written + "\n";
  }
  EXPECT_EQ(absent, "") << "key paths " << kSchemaDoc << " names that no record has";
  for (const std::string& path : kDeviceOnly) {
    EXPECT_TRUE(std::any_of(doc.begin(), doc.end(), [&path](const DocPath& d) {
      return d.written == path;
    })) << path;
  }
}

TEST(DocsResultsSchema, DeviceStagingKeyPathsAreInARecordOfDeviceMemory) {
  if (const auto why = harness::MemorySpaces().unavailable(harness::MemorySpaceKind::cuda))
    GTEST_SKIP() << "memory.space = \"cuda\": " << *why;
  const Scratch dir;
  const std::set<Path> paths = paths_of(
      run_campaign(dir, "device", campaign(dir, "device", "[memory]\nspace = \"cuda\"\n")));
  const std::vector<DocPath> doc = schema_doc_paths();
  EXPECT_EQ(undocumented(paths, doc), "");
  for (const DocPath& d : doc) {
    if (kDeviceOnly.contains(d.written)) {
      EXPECT_TRUE(schema_doc::in_some_record(d, paths)) << d.written;
    }
  }
}

// The `key path` table of `page` against `object`: every key path of the object is in the
// table, and every path the table names is in the object.
void expect_table_names_exactly(const fs::path& page, const nlohmann::json& object) {
  const std::vector<DocPath> doc = doc_paths_of(page);
  ASSERT_GT(doc.size(), 20u) << page << " has no `key path` table";
  const std::set<Path> paths = schema_doc::record_paths(object);
  EXPECT_EQ(undocumented(paths, doc), "") << "key paths that " << page << " does not name";
  std::string absent;
  for (const DocPath& d : doc) {
    if (!schema_doc::in_some_record(d, paths)) absent += d.written + "\n";
  }
  EXPECT_EQ(absent, "") << "key paths " << page << " names that the file does not have";
}

// docs/mlperf.md against the summary.json of an [mlperf] case that wrote and read.
TEST(DocsMlperfSummary, NamesEveryKeyPathOfDliosSummaryJsonAndNoOther) {
  const Scratch dir;
  const fs::path file = dir.write("mlperf.toml", mlperf_preset());
  const fs::path output = dir / "out";
  std::vector<std::string> argv{"run", file.string(), "--output", output.string()};
  for (const std::string& set : mlperf_sets(dir)) argv.push_back(set);
  const Outcome o = ckptbench(argv);
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  expect_table_names_exactly(
      fs::path(CKPT_SOURCE_DIR) / "docs" / "mlperf.md",
      nlohmann::json::parse(read_text(run_directory(output) / "summary.json")));
}

// docs/checkpoint-format.md against the manifest of a [training] loop's kept checkpoint whose
// Megatron optimizer shards were gathered (training_iteration and holder set).
TEST(DocsManifest, NamesEveryKeyPathOfAManifestAndNoOther) {
  const Scratch dir;
  const fs::path file = dir.write("m.toml", campaign(dir, "m", R"([parallel]
dp = 2
zero = 1
[strategy]
layout = "megatron"
[training]
iterations = 2
iteration_seconds = 0.01
checkpoint_every = 1
)"));
  const Outcome o = ckptbench(
      {"run", file.string(), "--phase", "checkpoint", "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const fs::path kept = latest_checkpoint(dir / "target" / "m" / "case-0000");
  ASSERT_FALSE(kept.empty()) << o.describe();
  expect_table_names_exactly(fs::path(CKPT_SOURCE_DIR) / "docs" / "checkpoint-format.md",
                             read_manifest(kept));
}

}  // namespace
}  // namespace ckpt::integration
