#include "harness/cli/run_checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "backends/registry.hpp"
#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/checkpoint/selective_sources.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/exec/dp_gather.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/load/load_storage.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/results/environment.hpp"
#include "harness/run/process_memory.hpp"

namespace ckpt::harness {
namespace {

// A backend this build or machine cannot run (not compiled in, no cuFile library, no GPU), or
// options it does not take.
std::optional<std::string> backend_problem(const Case& c) {
  const std::vector<backends::BackendInfo> infos = backends::list_backends();
  const auto info = std::find_if(infos.begin(), infos.end(), [&](const backends::BackendInfo& b) {
    return b.name == c.backend;
  });
  if (info != infos.end() && !info->available) {
    return fmt::format(
        "backend.name = \"{}\" is unavailable here: {} (CMake option {}; `ckptbench backends` "
        "lists "
        "what this build can run)",
        c.backend, info->reason, info->cmake_option);
  }
  try {
    backends::validate_backend(c.backend, c.io, c.backend_options);
  } catch (const std::exception& e) {
    return fmt::format("backend.name = \"{}\": {}", c.backend, e.what());
  }
  return std::nullopt;
}

// A mapping that has several processes write one file, for a backend that writes each file whole
// from one process (an object store): its advice says why and what to choose instead.
std::optional<std::string> shared_file_problem(const Case& c, PhaseSelection phase) {
  if (phase == PhaseSelection::restore || phase == PhaseSelection::load ||
      !mapping_shares_files(c.mapping)) {
    return std::nullopt;
  }
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (b.name != c.backend || b.capabilities.shared_file) continue;
    const auto advice = b.capabilities.advice.find("shared_file");
    return fmt::format(
        "backend.name = \"{}\" cannot write strategy.mapping = \"{}\", whose files several "
        "processes write (capabilities: shared_file = false){}",
        c.backend, mapping_name(c.mapping),
        advice == b.capabilities.advice.end() ? "" : ": " + advice->second);
  }
  return std::nullopt;
}

// A backend the loader cannot read through as load.* asks (load_backend_problem).
std::optional<std::string> load_storage_problem(const Case& c) {
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (b.name == c.backend)
      return load_backend_problem(c.backend, b.capabilities, c.load.settings);
  }
  return std::nullopt;  // backend_problem names it
}

// [training]/[engine] combinations that cannot work (engine_problem).
std::optional<std::string> training_problem(const Case& c, std::uint64_t state_bytes,
                                            const std::optional<std::string>& mpi_thread_level) {
  const std::vector<backends::BackendInfo> infos = backends::list_backends();
  const auto info = std::find_if(infos.begin(), infos.end(), [&](const backends::BackendInfo& b) {
    return b.name == c.backend;
  });
  if (info == infos.end()) return std::nullopt;  // backend_problem names it
  return engine_problem(c, info->capabilities, state_bytes, mpi_thread_level);
}

std::optional<std::string> memory_space_problem(const Case& c, const MemorySpaces& spaces) {
  const auto why = spaces.unavailable(c.memory_space);
  if (!why) return std::nullopt;
  return fmt::format(
      "memory.space = \"{}\": {}; run it where the space is available, or choose memory.space = "
      "\"host\" or \"pinned\"",
      memory_space_name(c.memory_space), *why);
}

// A dry run plans every selected rank in this one process (a run plans only its own share):
// more than this many would take minutes and gigabytes (1,048,576 ZeRO-3 ranks: ~50 s, 7 GiB).
constexpr std::size_t kDryRunRanks = 16384;

std::optional<std::string> dry_run_ranks_problem(std::size_t selected, std::int64_t world_size) {
  if (selected <= kDryRunRanks) return std::nullopt;
  return fmt::format(
      "ranks.select: a dry run plans at most {} ranks, and this case selects {} of its {} ranks; "
      "select a node (ranks.select = \"node\") or a list of ranks (ranks.select = \"list\")",
      kDryRunRanks, selected, world_size);
}

// What the read path refuses of the checkpoint `writer` wrote in `dir` before it plans (files
// outside it; its tensor list, checkpoint_hash and safetensors files against the writer's plans),
// with the read path's words, as one process finds it.
std::optional<std::string> checkpoint_read_problem(const Case& writer, const Manifest& manifest,
                                                   const std::filesystem::path& dir) {
  if (auto problem = manifest_path_problem(manifest, dir)) {
    return fmt::format("{}: damaged manifest: {} — {}", (dir / kManifestName).string(), *problem,
                       damaged_checkpoint_advice(writer, dir));
  }
  const workloads::Layout layout(writer.model, writer.parallel, writer.state);
  const std::vector<std::int64_t> selected = selected_ranks(writer, layout.world_size());
  if (selected.size() > kDryRunRanks) return std::nullopt;  // dry_run_ranks_problem names it
  const std::vector<RankPlan> planned = plan_ranks(layout, writer, selected, dir);
  FileCheckpointStore files;
  if (auto problem = damaged_checkpoint_problem(manifest, dir, planned, &selected, 0, 1, files)) {
    return fmt::format("damaged checkpoint: {} — {}", *problem,
                       damaged_checkpoint_advice(writer, dir));
  }
  return std::nullopt;
}

// The load phase reads bf16 weights, which DeepSpeed's ZeRO-3 files do not hold.
std::optional<std::string> load_weights_problem(const Case& c) {
  const Case writer = load_source(c);
  if (!deepspeed_zero3_files(writer.directory_layout, writer.mapping, writer.parallel,
                             writer.state))
    return std::nullopt;
  return "the load phase reads bf16 weights, which strategy.layout = \"deepspeed\" with "
         "parallel.zero = 3 does not save (DeepSpeed keeps them only as the fp32 partition in the "
         "optimizer files): load a checkpoint of another strategy.layout, or set parallel.zero "
         "below 3";
}

}  // namespace

CaseCheck check_case(const Case& c, PhaseSelection phase, int processes, const MemorySpaces& spaces,
                     const std::optional<std::string>& mpi_thread_level, bool read_checks) {
  CaseCheck check;
  const auto note = [&](std::optional<std::string> problem) {
    if (problem) check.problems.push_back(std::move(*problem));
  };
  note(backend_problem(c));
  note(shared_file_problem(c, phase));
  if (phase == PhaseSelection::load) {
    note(load_storage_problem(c));
    if (auto problem = load_weights_problem(c)) {
      note(std::move(problem));
      return check;  // no load of it can be planned, so nothing more to say
    }
  }
  note(memory_space_problem(c, spaces));
  std::filesystem::path dir = case_directory(c) / "dry-run";
  Manifest manifest;
  bool have_manifest = false;
  // An object store's checkpoints, lock and target are checked by the run's process 0 once its
  // store is open (before any data moves), and never by a dry run (no network).
  const bool on_files = !stores_objects(c);
  // A tiered job's recovery may find its checkpoint in the local tiers alone (TierRestart).
  const bool restarting = recovers_from_tiers(c, phase);
  const bool reads =
      (phase == PhaseSelection::restore || phase == PhaseSelection::load) && !restarting;
  if (on_files && reads) {
    const Case writer = phase == PhaseSelection::load ? load_source(c) : c;
    const auto problem = find_restorable_checkpoint(writer, dir, manifest);
    note(problem);
    // The checks the read makes before planning, as it makes them: damage found there fails the
    // case when it runs, so it is not planned from here.
    std::optional<std::string> damage;
    if (!problem) {
      damage = read_checks ? checkpoint_read_problem(writer, manifest, dir)
                           : manifest_hash_problem(manifest, dir / kManifestName);
    }
    if (read_checks) note(damage);
    if (!problem) note(selective_source_problem(manifest, dir));
    have_manifest = !problem && !damage;
    note(lock_problem(c));  // a keeping run on this case, which may retire what would be restored
  } else if (on_files && restarting) {
    note(lock_problem(c));
  } else if (on_files) {
    note(target_problem(c));
    if (c.keep || phase == PhaseSelection::checkpoint)
      note(lock_problem(c));  // another keeping run on this case
  }
  const std::string strategy =
      c.selective.delta()       ? fmt::format("strategy.delta_every = {}", c.selective.delta_every)
      : c.selective.experts > 0 ? fmt::format("strategy.partial_experts = {}", c.selective.experts)
                                : fmt::format("strategy.selective_every = {}", c.selective.every);
  if (c.selective.enabled() && phase == PhaseSelection::both) {
    note(fmt::format(
        "{} is restored from the earlier checkpoints it points at, which --phase both does not "
        "keep: write with --phase checkpoint, then restore with --phase restore, or turn it off",
        strategy));
  }
  if (c.selective.delta() && phase == PhaseSelection::load) {
    note(fmt::format(
        "{} is restored (into the writer's layout or a [restore] layout, its changed runs over "
        "the base), not loaded into an inference layout: use --phase restore, or set "
        "strategy.delta_every = 1",
        strategy));
  }
  if (c.restore.replicas != ReplicaRead::written && phase == PhaseSelection::both) {
    note(
        fmt::format("restore.replicas = \"{}\" reads a kept checkpoint back: write it with --phase "
                    "checkpoint, then restore it with --phase restore",
                    replica_read_name(c.restore.replicas)));
  }
  if (c.restore.reshard && phase != PhaseSelection::restore && phase != PhaseSelection::load) {
    note(
        "restore.*: a restore into another layout reads a checkpoint written by an earlier run; "
        "run it with --phase "
        "restore (campaign.phase = \"restore\") after writing the checkpoint with --phase "
        "checkpoint");
  }
  const workloads::Layout layout(c.model, c.parallel, c.state);
  if (c.mlperf) {
    MlperfVerdict verdict =
        check_mlperf(c, *c.mlperf,
                     {.phase = phase,
                      .full_scale_bytes = static_cast<std::uint64_t>(layout.checkpoint_bytes()),
                      .client_memory_bytes = host_memory_bytes()});
    for (std::string& refusal : verdict.refusals) check.problems.push_back(std::move(refusal));
    check.mlperf = std::move(verdict);
  }
  const std::vector<std::int64_t> selected = selected_ranks(c, layout.world_size());
  check.ranks = selected.size();
  if (auto problem = dry_run_ranks_problem(selected.size(), layout.world_size())) {
    check.problems.push_back(std::move(*problem));
    return check;
  }
  std::set<std::string> files;
  std::uint64_t state_bytes = 0;  // the largest process's checkpoint buffer
  std::uint64_t exchange = 0;     // the largest process's exchange buffers (a cooperative read)
  try {
    plan_every_process(
        layout, c, restarting ? PhaseSelection::checkpoint : phase, selected, processes, dir,
        have_manifest ? &manifest : nullptr, [&](int, const ProcessPlans& plans) {
          // The DP gather's sources are left out here: planning them for every process of a large
          // job costs more than the dry run's bound (known gap: the run's own check counts them).
          check.memory_per_process =
              std::max(check.memory_per_process, process_memory_bytes(c, plans, DpGather()));
          state_bytes = std::max(state_bytes, ProcessBuffer::bytes_for(plans.write));
          exchange = std::max(exchange, plans.exchange.buffer_bytes());
          for (const RankPlan& plan : plans.write.empty() ? plans.read : plans.write) {
            check.bytes += plan.payload_bytes;
            check.extents += plan.io.extents();
            for (const auto& f : plan.io.files) files.insert(f.path);
          }
        });
  } catch (const ReshardError& e) {
    note(e.what());
  } catch (const std::exception& e) {
    note(fmt::format("{}: damaged manifest: {} — {}", (dir / kManifestName).string(), e.what(),
                     damaged_checkpoint_advice(c, dir)));
  }
  check.files = files.size();
  if (phase != PhaseSelection::restore && phase != PhaseSelection::load) {
    note(training_problem(c, state_bytes, mpi_thread_level));
    note(tier_problem(c, processes, state_bytes));
  } else if (restarting) {
    note(tier_problem(c, processes, state_bytes));
  }
  note(memory_budget_problem(c, check.memory_per_process, selected.size(), processes, exchange));
  return check;
}

std::vector<std::string> problem_lines(const Campaign& campaign,
                                       const std::vector<CaseCheck>& checks) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>>
      grouped;  // problem -> cases, first seen first
  for (std::size_t i = 0; i < checks.size(); ++i) {
    for (const std::string& problem : checks[i].problems) {
      auto it = std::find_if(grouped.begin(), grouped.end(),
                             [&](const auto& g) { return g.first == problem; });
      if (it == grouped.end()) it = grouped.insert(grouped.end(), {problem, {}});
      it->second.push_back(campaign.cases[i].index);
    }
  }
  std::vector<std::string> lines;
  for (const auto& [problem, cases] : grouped) {
    lines.push_back(fmt::format("{} {}: {}", cases.size() == 1 ? "case" : "cases",
                                fmt::join(cases, ", "), problem));
  }
  return lines;
}

}  // namespace ckpt::harness
