#pragma once

// MLPerf Storage checkpointing results as rows: a published system's (from the results
// repository's DLIO summary.json files, kept as a committed table) or a local ckptbench run's
// (from the summary.json it writes beside results.jsonl). Both are read by one importer, so a
// local run and a published system are measured by the same definitions: DLIO's mean of
// per-checkpoint rates, each the checkpoint's bytes over rank 0's duration, in GiB/s.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/common/json_input.hpp"

namespace ckpt::harness {

struct MlperfRow {
  std::string id;                 // unique in its table
  std::string organization;       // the submitter ("" for a local run)
  std::string system;             // the system under test, as the results name it
  std::string storage;            // e.g. "file", "object (S3)"
  std::string division;           // closed | open; a local run: ckptbench's label
  std::string model;              // llama3-8b | llama3-70b | llama3-405b | llama3-1t
  std::int64_t hosts = 0;         // client hosts (summary.json num_hosts)
  std::int64_t accelerators = 0;  // simulated accelerators = processes (num_accelerators)
  double checkpoint_gib = 0;      // one checkpoint (checkpoint_size_GB, GiB despite the name)
  std::optional<double> write_gib_per_s, write_seconds, read_gib_per_s, read_seconds;
  std::string write_end;   // `end` of the invocation that wrote ("" when none or combined)
  std::string read_start;  // `start` of the invocation that read ("" when none or combined)
  std::vector<std::string> sources;  // the summary.json files it was made of
};

// A row of DLIO summary.json files: the write figures are the mean over the files that wrote,
// the read figures over those that read (mlpstorage's report generator, Rules.md 4.3.6).
// Throws ConfigError naming the file and key for a file that is no DLIO checkpointing summary,
// and for files that disagree on the hosts, accelerators or checkpoint size. A directory stands
// for the one *summary.json it holds.
MlperfRow row_from_summaries(const std::vector<std::filesystem::path>& files);

nlohmann::json to_json(const MlperfRow& row);

struct MlperfTable {
  std::string source;  // where the rows come from
  std::vector<MlperfRow> rows;
};

// A table file: {"source": "...", "rows": [row, ...]} with the rows as to_json writes them.
MlperfTable load_mlperf_table(const std::filesystem::path& path);

// Seconds from the end of the writing invocation to the start of the reading one (Rules.md
// 4.7.1 allows at most 30); nullopt unless the row has both.
std::optional<double> invocation_gap_seconds(const MlperfRow& row);

// The local run beside the published rows: DLIO's write and read GiB/s, per client host and
// per accelerator, and seconds per checkpoint; then what is and is not comparable.
void print_side_by_side(const MlperfRow& local, const std::vector<MlperfRow>& published,
                        const std::string& table_source, bool markdown, std::ostream& out);

}  // namespace ckpt::harness
