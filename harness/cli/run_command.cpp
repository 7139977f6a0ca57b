#include "harness/cli/run_command.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <set>

#include "backends/registry.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/comm/comm.hpp"
#include "harness/comm/mpi_io_choice.hpp"
#include "harness/common/config_error.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/report/console_reporter.hpp"
#include "harness/report/results_files.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/run/signal_guard.hpp"
#include "harness/common/text_format.hpp"

namespace ckpt::harness {
namespace {

std::optional<PhaseSelection> parse_phase(const std::string& phase) {
  if (phase == "checkpoint") return PhaseSelection::checkpoint;
  if (phase == "restore") return PhaseSelection::restore;
  if (phase == "both") return PhaseSelection::both;
  return std::nullopt;
}

// --dry-run: what each case would write and need, without any I/O.
void describe_cases(const Campaign& campaign, int processes, std::ostream& out) {
  fmt::print(out, "campaign {} ({}): {} cases, {} process(es)\n\n", campaign.name, campaign.source,
             campaign.cases.size(), processes);
  fmt::print(out, "{:>4}  {:>6} {:>12} {:>9} {:>9} {:>14}  {}\n", "case", "ranks", "checkpoint", "files", "extents",
             "memory/process", "swept");
  for (const Case& c : campaign.cases) {
    const workloads::Layout layout(c.model, c.parallel, c.state);
    const auto ranks = selected_ranks(c, layout.world_size());
    const auto plans = plan_ranks(layout, c, ranks, c.target / "dry-run");
    std::uint64_t bytes = 0, extents = 0, largest = 0;
    std::set<std::string> files;
    for (const RankPlan& p : plans) {
      bytes += p.payload_bytes;
      extents += p.io.extents();
      largest = std::max(largest, p.buffer_bytes);
      for (const auto& f : p.io.files) files.insert(f.path);
    }
    const std::uint64_t per_process = (ranks.size() + static_cast<std::size_t>(processes) - 1) /
                                      static_cast<std::size_t>(processes) * largest;
    fmt::print(out, "{:>4}  {:>6} {:>12} {:>9} {:>9} {:>14}  {}\n", c.index, ranks.size(),
               format_bytes(static_cast<std::int64_t>(bytes)), files.size(), extents,
               format_bytes(static_cast<std::int64_t>(per_process)), swept_label(c.swept));
  }
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "Run a TOML campaign: timed checkpoints and restores, verified");
  cmd->add_option("campaign", o.campaign, "Campaign TOML file (see configs/)")->required();
  cmd->add_option("--set", o.overrides, "Override a campaign key: dotted.key=value (repeatable)");
  cmd->add_option("--output", o.output, "Directory that receives the run's result directory")->capture_default_str();
  cmd->add_flag("--dry-run", o.dry_run, "Print the cases, bytes, files and memory each needs; no I/O");
  cmd->add_option("--phase", o.phase, "checkpoint: write and keep; restore: read an existing checkpoint; both")
      ->check(CLI::IsMember({"checkpoint", "restore", "both"}));
  cmd->add_option("--units", o.units, "Bandwidths in the summary table: GiB (GiB/s, 2^30 B/s) or GB (GB/s, 10^9 B/s)")
      ->check(CLI::IsMember({"GiB", "GB"}))
      ->capture_default_str();
  return cmd;
}

namespace {

int run_cases(const RunOptions& o, Comm& comm, std::ostream& out, std::ostream& err);

}  // namespace

namespace {

// A case whose backend this build or machine cannot run (not compiled in, no cuFile library,
// no GPU) fails the campaign before any case writes anything.
void check_backends_available(const Campaign& campaign) {
  const std::vector<backends::BackendInfo> infos = backends::list_backends();
  for (const Case& c : campaign.cases) {
    const auto info = std::find_if(infos.begin(), infos.end(),
                                   [&](const backends::BackendInfo& b) { return b.name == c.backend; });
    if (info == infos.end() || info->available) continue;  // unknown names: the backend's own message
    throw SetupError(fmt::format("{}: case {} needs backend.name = \"{}\", which is unavailable here: {} (CMake "
                                 "option {}; `ckptbench backends` lists what this build can run)",
                                 campaign.source, c.index, c.backend, info->reason, info->cmake_option));
  }
}

// Every case's memory space must be usable by every process (a cuda case needs a GPU), checked
// before anything is written.
void check_memory_spaces_available(const Campaign& campaign, const MemorySpaces& spaces, Comm& comm) {
  std::string problem;
  for (const Case& c : campaign.cases) {
    if (const auto why = spaces.unavailable(c.memory_space)) {
      problem = fmt::format("memory.space = \"{}\": {} — case {} of {}{}; run it where the space is available, or "
                            "choose memory.space = \"host\" or \"pinned\"",
                            memory_space_name(c.memory_space), *why, c.index, campaign.source,
                            comm.size() > 1 ? fmt::format(" on process {}", comm.rank()) : "");
      break;
    }
  }
  if (const std::string first = comm.first_problem(problem); !first.empty()) throw SetupError(first);
}

// What must be settled before MPI starts, from the campaign: whether a run outside mpirun must
// start MPI anyway (a case uses a backend that needs it: mpiio, hdf5), and the MPI-IO
// implementation to ask for (campaign.mpi_io). A campaign that does not load is reported by
// run_cases, after MPI started.
struct BeforeMpi {
  bool need_mpi = false;
  MpiIoChoice mpi_io = MpiIoChoice::library_default;
};

BeforeMpi before_mpi(const RunOptions& o) {
  BeforeMpi settings;
  if (o.dry_run) return settings;
  std::set<std::string> needing;
  for (const backends::BackendInfo& info : backends::list_backends()) {
    if (info.needs_mpi && info.available) needing.insert(info.name);
  }
  try {
    const Campaign campaign = load_campaign(o.campaign, o.overrides);
    settings.need_mpi = !launched_by_mpi() && std::any_of(campaign.cases.begin(), campaign.cases.end(),
                                                          [&](const Case& c) { return needing.contains(c.backend); });
    if (!campaign.cases.empty()) settings.mpi_io = campaign.cases.front().mpi_io;
  } catch (const std::exception&) {
  }
  return settings;
}

}  // namespace

int run_campaign(const RunOptions& o, std::ostream& out, std::ostream& err) {
  const BeforeMpi settings = before_mpi(o);
  const std::optional<std::string> mpi_io_problem = request_mpi_io(settings.mpi_io);
  const std::unique_ptr<Comm> owned = make_comm(settings.need_mpi);
  Comm& comm = *owned;
  try {
    if (mpi_io_problem) throw SetupError(o.campaign + ": " + *mpi_io_problem);
    return run_cases(o, comm, out, err);
  } catch (const ConfigError& e) {
    if (comm.rank() == 0) err << "ckptbench: error: " << e.what() << '\n';
    return 2;
  } catch (const SetupError& e) {
    if (comm.rank() == 0) err << "ckptbench: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    // Only this process failed: end them all rather than leave the others in a collective.
    err << "ckptbench: error on process " << comm.rank() << ": " << e.what() << '\n';
    if (comm.size() > 1) comm.abort(3);
    return 3;
  }
}

namespace {

int run_cases(const RunOptions& o, Comm& comm, std::ostream& out, std::ostream& err) {
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
  if (const std::string first = comm.first_problem(problem); !first.empty()) throw SetupError(first);
  const Campaign& campaign = *loaded;
  if (o.dry_run) {
    if (root) describe_cases(campaign, comm.size(), out);
    return 0;
  }
  check_backends_available(campaign);
  MemorySpaces spaces;  // outlives every case's buffers
  check_memory_spaces_available(campaign, spaces, comm);
  const SignalGuard signals;
  // Process 0 reports; the results directory appears with the first case's result.
  const auto results_dir = std::make_shared<RunDirectory>(o.output, campaign.name);
  if (const std::string bad = comm.first_problem(root ? results_dir->problem() : ""); !bad.empty()) throw SetupError(bad);
  std::vector<std::unique_ptr<Reporter>> reporters;
  if (root) {
    reporters.push_back(std::make_unique<JsonlReporter>(results_dir));
    reporters.push_back(std::make_unique<CsvReporter>(results_dir));
    reporters.push_back(std::make_unique<ConsoleReporter>(out, parse_bandwidth_unit(o.units).value_or(BandwidthUnit::gib)));
  }
  for (const auto& r : reporters) r->begin({campaign.name, campaign.source, campaign.cases.size(), comm.size()});
  RunContext ctx{comm, parse_phase(o.phase), signals.flag(), err, spaces};
  int status = 0;
  for (const Case& c : campaign.cases) {
    if (root) fmt::print(err, "case {}/{}: {}\n", c.index + 1, campaign.cases.size(), swept_label(c.swept));
    const CaseResult result = run_case(c, ctx);
    if (result.status == "interrupted") status = 130;
    else if (result.status != "ok") status = std::max(status, 1);
    if (root) {
      for (const auto& r : reporters) r->add(result);
      if (result.status != "ok") fmt::print(err, "ckptbench: case {} {}: {}\n", c.index, result.status, result.error);
    }
    if (status == 130) break;
  }
  for (const auto& r : reporters) r->end();
  if (results_dir->created()) fmt::print(out, "\nresults: {}\n", (results_dir->path() / "results.jsonl").string());
  return status;
}

}  // namespace

}  // namespace ckpt::harness
