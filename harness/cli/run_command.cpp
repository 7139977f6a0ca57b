#include "harness/cli/run_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "backends/registry.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/cli/choice_validator.hpp"
#include "harness/cli/file_limit.hpp"
#include "harness/cli/run_checks.hpp"
#include "harness/comm/comm.hpp"
#include "harness/comm/mpi_io_choice.hpp"
#include "harness/common/config_error.hpp"
#include "harness/common/text_format.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/report/console_reporter.hpp"
#include "harness/report/results_files.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/run/signal_guard.hpp"

namespace ckpt::harness {
namespace {

std::optional<PhaseSelection> parse_phase(const std::string& phase) {
  if (phase == "checkpoint") return PhaseSelection::checkpoint;
  if (phase == "restore") return PhaseSelection::restore;
  if (phase == "both") return PhaseSelection::both;
  if (phase == "load") return PhaseSelection::load;
  return std::nullopt;
}

// --dry-run: what each case would write and need.
void describe_cases(const Campaign& campaign, const std::vector<CaseCheck>& checks, int processes,
                    std::ostream& out) {
  fmt::print(out, "campaign {} ({}): {} cases, {} process(es)\n\n", campaign.name, campaign.source,
             campaign.cases.size(), processes);
  fmt::print(out, "{:>4}  {:>6} {:>12} {:>9} {:>9} {:>14}  {}\n", "case", "ranks", "checkpoint",
             "files", "extents", "memory/process", "swept");
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const Case& c = campaign.cases[i];
    const CaseCheck& k = checks[i];
    fmt::print(out, "{:>4}  {:>6} {:>12} {:>9} {:>9} {:>14}  {}\n", c.index, k.ranks,
               format_bytes(static_cast<std::int64_t>(k.bytes)), k.files, k.extents,
               format_bytes(static_cast<std::int64_t>(k.memory_per_process)), swept_label(c.swept));
  }
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (!checks[i].mlperf) continue;
    fmt::print(out, "\ncase {}: MLPerf Storage {}: {}\n", campaign.cases[i].index,
               campaign.cases[i].mlperf->model, checks[i].mlperf->label);
    for (const std::string& reason : checks[i].mlperf->reasons) fmt::print(out, "  {}\n", reason);
  }
}

// Every line of a message with the program's prefix ("ckptbench: error: …").
void print_lines(std::ostream& err, const std::string& prefix, const std::string& message) {
  std::istringstream lines(message);
  for (std::string line; std::getline(lines, line);) err << prefix << line << '\n';
}

// What must be settled before MPI starts, from the campaign: whether a run outside mpirun must
// start MPI anyway (a case uses a backend that needs it: mpiio, hdf5; never for a dry run), and
// the MPI-IO implementation to ask for (campaign.mpi_io). A campaign that does not load is
// reported by run_cases, after MPI started.
struct BeforeMpi {
  bool need_mpi = false;
  bool thread_multiple = false;  // a case drives a collective backend from a flush thread
  MpiIoChoice mpi_io = MpiIoChoice::library_default;
};

BeforeMpi before_mpi(const RunOptions& o) {
  BeforeMpi settings;
  std::set<std::string> needing;
  std::map<std::string, backends::Capabilities> capabilities;
  for (const backends::BackendInfo& info : backends::list_backends()) {
    if (info.needs_mpi && info.available) needing.insert(info.name);
    capabilities.emplace(info.name, info.capabilities);
  }
  try {
    const Campaign campaign = load_campaign(o.campaign, o.overrides);
    settings.need_mpi = !o.dry_run && !launched_by_mpi() &&
                        std::any_of(campaign.cases.begin(), campaign.cases.end(),
                                    [&](const Case& c) { return needing.contains(c.backend); });
    settings.thread_multiple =
        !o.dry_run && std::any_of(campaign.cases.begin(), campaign.cases.end(), [&](const Case& c) {
          const auto it = capabilities.find(c.backend);
          return it != capabilities.end() && needs_mpi_thread_multiple(c, it->second);
        });
    if (!campaign.cases.empty()) settings.mpi_io = campaign.cases.front().mpi_io;
  } catch (const std::exception&) {
  }
  return settings;
}

int run_cases(const RunOptions& o, Comm& comm, const std::optional<std::string>& mpi_io_problem,
              std::ostream& out, std::ostream& err);

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("run", "Run a TOML campaign: timed checkpoints and restores, verified");
  cmd->add_option("campaign", o.campaign, "Campaign TOML file (see configs/)")->required();
  cmd->add_option("--set", o.overrides, "Override a campaign key: dotted.key=value (repeatable)");
  cmd->add_option("--output", o.output, "Directory that receives the run's result directory")
      ->capture_default_str();
  CLI::Option* dry_run = cmd->add_flag(
      "--dry-run", o.dry_run,
      "Print the cases, bytes, files and memory each needs, and check what the run checks; no I/O");
  cmd->add_option("--processes", o.processes,
                  "With --dry-run: plan for this many processes, as under mpirun -np N (default: "
                  "this run's)")
      ->check(CLI::PositiveNumber)
      ->needs(dry_run);
  cmd->add_option("--phase", o.phase,
                  "checkpoint: write and keep; restore: read an existing checkpoint; both; load: "
                  "load an existing "
                  "checkpoint's weights as an inference server does ([load])")
      ->check(one_of({"checkpoint", "restore", "both", "load"}));
  cmd->add_option("--units", o.units,
                  "Bandwidths in the summary table: GiB (GiB/s, 2^30 B/s) or GB (GB/s, 10^9 B/s)")
      ->check(one_of({"GiB", "GB"}))
      ->capture_default_str();
  return cmd;
}

int run_campaign(const RunOptions& o, std::ostream& out, std::ostream& err) {
  const BeforeMpi settings = before_mpi(o);
  std::optional<std::string> mpi_io_problem = request_mpi_io(settings.mpi_io);
  if (mpi_io_problem) mpi_io_problem = o.campaign + ": " + *mpi_io_problem;
  const std::unique_ptr<Comm> owned = make_comm(settings.need_mpi, settings.thread_multiple);
  Comm& comm = *owned;
  try {
    return run_cases(o, comm, mpi_io_problem, out, err);
  } catch (const ConfigError& e) {
    if (comm.rank() == 0) print_lines(err, "ckptbench: error: ", e.what());
    return 2;
  } catch (const SetupError& e) {
    if (comm.rank() == 0) print_lines(err, "ckptbench: error: ", e.what());
    return 2;
  } catch (const std::exception& e) {
    // Only this process failed (it cannot start or go on: no memory, a file system error): end
    // them all rather than leave the others in a collective.
    err << "ckptbench: error on process " << comm.rank() << ": " << e.what() << '\n';
    if (comm.size() > 1) comm.abort(2);
    return 2;
  }
}

namespace {

int run_cases(const RunOptions& o, Comm& comm, const std::optional<std::string>& mpi_io_problem,
              std::ostream& out, std::ostream& err) {
  const bool root = comm.rank() == 0;
  // Every process reads the campaign; they agree before going on, so that a file missing on
  // one node ends the run with its message instead of leaving the others waiting.
  std::optional<Campaign> loaded;
  std::string problem;
  try {
    loaded.emplace(load_campaign(o.campaign, o.overrides));
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (const std::string first = comm.first_problem(problem); !first.empty())
    throw SetupError(first);
  const Campaign& campaign = *loaded;
  const std::optional<PhaseSelection> phase = parse_phase(o.phase);
  if (root && o.verbosity != Verbosity::quiet) {
    for (const std::string& note : campaign.notes) fmt::print(err, "ckptbench: note: {}\n", note);
  }

  // What the run checks before any case (and before any results directory exists); a dry run
  // reports it instead.
  MemorySpaces spaces;  // outlives every case's buffers
  const int processes = o.processes > 0 ? o.processes : comm.size();
  std::vector<CaseCheck> checks;
  const std::optional<std::string> thread_level =
      o.dry_run ? std::nullopt : std::optional(comm.thread_level());
  for (const Case& c : campaign.cases) {
    checks.push_back(
        check_case(c, phase.value_or(c.phase), processes, spaces, thread_level, o.dry_run));
  }
  std::vector<std::string> problems = problem_lines(campaign, checks);
  if (mpi_io_problem) problems.insert(problems.begin(), *mpi_io_problem);
  // Process 0 reports; the results directory appears with the first case's result.
  const auto results_dir = std::make_shared<RunDirectory>(o.output, campaign.name);
  if (const std::string bad = results_dir->problem(); !bad.empty() && root) problems.push_back(bad);
  if (o.dry_run) {
    if (!root) return problems.empty() ? 0 : 2;
    describe_cases(campaign, checks, processes, out);
    for (const std::string& line : problems) fmt::print(err, "would fail: {}\n", line);
    if (problems.empty()) fmt::print(out, "\nevery check a run makes before its I/O passed\n");
    // A dry run contacts no server: say what only the run itself can find out.
    if (std::any_of(campaign.cases.begin(), campaign.cases.end(),
                    [](const Case& c) { return c.backend == "s3"; }))
      fmt::print(out,
                 "not checked by a dry run: whether the s3 endpoint answers, the credentials and "
                 "the bucket (the run checks them before any data moves)\n");
    return problems.empty() ? 0 : 2;
  }
  std::string all;
  for (const std::string& line : problems) {
    all += comm.size() > 1 ? fmt::format("{} (on process {})\n", line, comm.rank()) : line + "\n";
  }
  if (const std::string first = comm.first_problem(all); !first.empty()) throw SetupError(first);

  const SignalGuard signals;
  std::vector<std::unique_ptr<Reporter>> reporters;
  if (root) {
    reporters.push_back(std::make_unique<JsonlReporter>(results_dir));
    reporters.push_back(std::make_unique<CsvReporter>(results_dir));
    const auto mlperf_cases =
        static_cast<std::size_t>(std::count_if(campaign.cases.begin(), campaign.cases.end(),
                                               [](const Case& c) { return c.mlperf.has_value(); }));
    if (mlperf_cases > 0)
      reporters.push_back(std::make_unique<DlioSummaryReporter>(results_dir, mlperf_cases));
    reporters.push_back(std::make_unique<ConsoleReporter>(
        out, parse_bandwidth_unit(o.units).value_or(BandwidthUnit::gib)));
  }
  for (const auto& r : reporters)
    r->begin({campaign.name, campaign.source, campaign.cases.size(), comm.size()});
  RunProgress progress(err, root ? o.verbosity : Verbosity::quiet, campaign.cases.size());
  RunContext ctx{comm, phase, signals.flag(), spaces,
                 [&](const Case& c, const IterationReport& r) { progress.iteration_done(c, r); }};
  if (const std::string note = raise_open_file_limit(); !note.empty()) ctx.notes.push_back(note);
  int status = 0;
  for (const Case& c : campaign.cases) {
    progress.case_started(c);
    const CaseResult result = run_case(c, ctx);
    progress.case_done();
    if (result.status == "interrupted")
      status = 130;
    else if (result.status != "ok")
      status = std::max(status, 1);
    if (root) {
      for (const auto& r : reporters) r->add(result);
      if (result.status != "ok")
        fmt::print(err, "ckptbench: case {} {}: {}\n", c.index, result.status, result.error);
    }
    if (status == 130) break;
  }
  for (const auto& r : reporters) r->end();
  if (results_dir->created())
    fmt::print(out, "\nresults: {}\n", (results_dir->path() / "results.jsonl").string());
  return status;
}

}  // namespace

}  // namespace ckpt::harness
