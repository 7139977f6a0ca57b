#include "harness/cli/mlperf_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <stdexcept>

#include "harness/cli/choice_validator.hpp"
#include "harness/report/mlperf_rows.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultTable = "results/published/mlperf-storage-v3.0-checkpointing.json";

std::vector<fs::path> paths(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

// A run's name: its directory's (the summary's directory when a file is named).
std::string run_name(const std::string& name) {
  std::error_code ec;
  fs::path p = fs::absolute(name).lexically_normal();
  if (!fs::is_directory(p, ec)) p = p.parent_path();
  return p.filename().string();
}

int run_import(const MlperfCommandOptions& o, std::ostream& out) {
  MlperfRow row = row_from_summaries(paths(o.summaries));
  if (!o.model.empty()) row.model = o.model;
  if (row.model.empty())
    throw std::runtime_error(
        "the summaries do not name their model (DLIO's do not): give --model, e.g. --model "
        "llama3-8b");
  row.id = o.id.empty() ? run_name(o.summaries.front()) : o.id;
  row.organization = o.organization;
  row.system = o.system.empty() ? run_name(o.summaries.front()) : o.system;
  if (!o.storage.empty()) row.storage = o.storage;
  if (row.division.empty()) row.division = o.division;  // ckptbench's summaries carry their label
  fmt::print(out, "{}\n", to_json(row).dump(2));
  return 0;
}

int run_side_by_side(const MlperfCommandOptions& o, std::ostream& out) {
  MlperfRow local = row_from_summaries(paths(o.runs));
  local.system = run_name(o.runs.front());
  if (o.runs.size() > 1) local.system += " + " + run_name(o.runs.back());
  const std::string table_path = o.table.empty() ? kDefaultTable : o.table;
  std::error_code ec;
  if (!fs::exists(table_path, ec))
    throw std::runtime_error(fmt::format(
        "{}: no such table of published rows — run from the source tree or give --table FILE",
        table_path));
  const MlperfTable table = load_mlperf_table(table_path);
  std::vector<MlperfRow> chosen;
  for (const std::string& id : o.rows) {
    const auto it = std::find_if(table.rows.begin(), table.rows.end(),
                                 [&](const MlperfRow& r) { return r.id == id; });
    if (it == table.rows.end())
      throw std::runtime_error(fmt::format("--row {}: {} has no such row", id, table_path));
    chosen.push_back(*it);
  }
  if (o.rows.empty()) {
    std::copy_if(table.rows.begin(), table.rows.end(), std::back_inserter(chosen),
                 [&](const MlperfRow& r) { return r.model == local.model; });
  }
  print_side_by_side(local, chosen, table.source, o.markdown, out);
  if (chosen.empty())
    fmt::print(out, "{} holds no row of {}; name rows with --row\n", table_path, local.model);
  return 0;
}

}  // namespace

CLI::App* add_mlperf_command(CLI::App& app, MlperfCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("mlperf",
                                     "MLPerf Storage checkpointing: import published rows, and put "
                                     "a run beside them");
  cmd->require_subcommand(1);
  cmd->footer(
      "Exit status: 0 printed; 2 bad input: a command-line error, a file that is no DLIO "
      "checkpointing summary (file and key named), summaries of different runs, a missing table "
      "or row.");
  CLI::App* import = cmd->add_subcommand(
      "import",
      "Print one table row made of DLIO summary.json files (a write and a read run, or "
      "one combined run)");
  import->add_option("SUMMARY", o.summaries, "summary.json files, or directories holding one")
      ->required();
  import->add_option("--id", o.id, "The row's name (default: the first run's directory)");
  import->add_option("--organization", o.organization, "The submitter");
  import->add_option("--system", o.system, "The system under test (default: the run's directory)");
  import->add_option("--storage", o.storage, "The storage kind, e.g. file, object (S3)");
  import
      ->add_option("--division", o.division,
                   "closed or open (a ckptbench summary keeps its own label)")
      ->check(one_of({"closed", "open"}))
      ->capture_default_str();
  import->add_option("--model", o.model, "llama3-8b, llama3-70b, llama3-405b or llama3-1t")
      ->check(one_of({"llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"}));
  CLI::App* compare = cmd->add_subcommand(
      "compare",
      "Put an MLPerf run of ckptbench (its write run and read run) beside published "
      "rows: DLIO's GiB/s, per host and per accelerator");
  compare
      ->add_option("RUN", o.runs,
                   "Run directories (or their summary.json): the write run, "
                   "then the read run; or one run that did both")
      ->required()
      ->expected(1, 2);
  compare->add_option("--table", o.table,
                      std::string("Table of published rows (default: ") + kDefaultTable + ")");
  compare->add_option("--row", o.rows,
                      "A row of the table to show (repeatable; default: every row of the run's "
                      "model)");
  compare->add_flag("--markdown", o.markdown, "Print a Markdown table");
  return cmd;
}

int run_mlperf(const CLI::App& command, const MlperfCommandOptions& o, std::ostream& out) {
  if (command.get_subcommand("import")->parsed()) return run_import(o, out);
  return run_side_by_side(o, out);
}

}  // namespace ckpt::harness
