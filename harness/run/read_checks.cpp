#include "harness/run/read_checks.hpp"

#include <fmt/format.h>

#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/checkpoint/selective_sources.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/loadplan/reshard_restore.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// A restore of a kept checkpoint that fails (a file gone, short or changed) says what else the
// case directory holds; a checkpoint this run just wrote (--phase both) has no other to offer.
// Collective.
std::string damage_advice(CaseState& s) {
  if (!s.context.reads_stored_checkpoint()) return "";
  std::string advice;
  if (s.context.comm.rank() == 0)
    advice = " — " + s.store.damage_advice(s.context.c, s.data.planned_dir);
  return s.context.comm.broadcast(advice);
}

// A manifest naming files outside the checkpoint is refused like a missing one (exit 2;
// read_manifest refused one this version cannot check).
std::string unreadable_checkpoint(CaseCheckpoints& store, const Case& writer, const fs::path& dir,
                                  const Manifest& manifest) {
  if (auto problem = manifest_path_problem(manifest, dir)) {
    return damaged_manifest(store, writer, dir, *problem);
  }
  // A selective checkpoint is whole only with the earlier checkpoints it points at.
  return selective_source_problem(manifest, dir).value_or("");
}

// The manifest's tensor list against the plans of the writer's ranks (each process checks its
// share of them), its checkpoint_hash, and a safetensors checkpoint's headers and index. Damage
// fails the case (exit 1, as a failed verification).
bool written_as_planned(CaseState& s, const Case& writer, const fs::path& dir,
                        const Manifest& manifest) {
  const CaseContext& context = s.context;
  Comm& comm = context.comm;
  std::string mine;
  try {
    const std::vector<RankPlan> planned = plan_ranks(
        context.layout, writer, process_share(context.selected, comm.rank(), comm.size()), dir);
    mine = damaged_checkpoint_problem(manifest, dir, planned,
                                      comm.rank() == 0 ? &context.selected : nullptr, comm.rank(),
                                      comm.size(), s.store.store())
               .value_or("");
  } catch (const std::exception& e) {
    mine = fmt::format("{}: {}", (dir / kManifestName).string(), e.what());
  }
  if (const std::string problem = comm.first_problem(mine); !problem.empty()) {
    return s.record.fail(fmt::format("damaged checkpoint: {}{}", problem, damage_advice(s)));
  }
  return true;
}

// The checkpoints of one run from `oldest` to `newest`, both included: one per step, or under
// [training] one per training.checkpoint_every iterations.
std::int64_t chain_checkpoints(const Manifest& oldest, const Manifest& newest) {
  const auto training = newest.config.find("training");
  if (!oldest.training_iteration || !newest.training_iteration || training == newest.config.end() ||
      !training->is_object())
    return newest.step - oldest.step + 1;
  const auto every = training->find("checkpoint_every");
  if (every == training->end() || !every->is_number_integer() || every->get<std::int64_t>() < 1)
    return newest.step - oldest.step + 1;
  return (*newest.training_iteration - *oldest.training_iteration) / every->get<std::int64_t>() + 1;
}

}  // namespace

std::string damaged_manifest(CaseCheckpoints& store, const Case& writer, const fs::path& dir,
                             const std::string& problem) {
  return fmt::format("{}: damaged manifest: {} — {}", (dir / kManifestName).string(), problem,
                     store.damage_advice(writer, dir));
}

bool open_stored_checkpoint(CaseState& s, const Case& writer, fs::path& dir, Manifest& manifest) {
  Comm& comm = s.context.comm;
  s.store.open();
  s.store.lock();
  agree(comm, s.store.find_restorable(writer, dir, manifest));
  agree(comm, unreadable_checkpoint(s.store, writer, dir, manifest));
  s.data.planned_dir = dir;
  s.record.result.checkpoint_dir = dir.string();
  if (manifest.writer.selective.enabled()) {
    std::vector<std::string> sources = source_checkpoints(manifest);
    // The oldest source was read and checked above (unreadable_checkpoint).
    const std::int64_t chain =
        sources.empty()
            ? 1
            : chain_checkpoints(read_manifest(dir.parent_path() / sources.front()), manifest);
    s.record.result.selective =
        SelectiveSummary{.every = manifest.writer.selective.every,
                         .experts = manifest.writer.selective.experts,
                         .delta_every = manifest.writer.selective.delta_every,
                         .restored = dir.filename().string(),
                         .restored_from = std::move(sources),
                         .restore_chain_length = chain};
  }
  return written_as_planned(s, writer, dir, manifest);
}
ProcessPlans plan_stored_reads(CaseState& s, const Case& writer, const fs::path& dir,
                               const Manifest& manifest, const std::string& reshard_context) {
  const CaseContext& context = s.context;
  Comm& comm = context.comm;
  std::string problem;
  ProcessPlans plans;
  try {
    plans = plan_process(context.layout, context.c, context.phase, context.selected, comm.rank(),
                         comm.size(), dir, &manifest);
  } catch (const ReshardError& e) {
    problem = reshard_context + e.what();
  } catch (const std::exception& e) {
    problem = damaged_manifest(s.store, writer, dir, e.what());
  }
  agree(comm, problem);
  return plans;
}

bool finish_read(CaseState& s, const char* what, const ProcessSample& sample,
                 const IterationTiming& timing, const std::vector<RankPlan>& plans,
                 const ProcessBuffer& buffer, bool verify, std::vector<IterationTiming>* timings) {
  Comm& comm = s.context.comm;
  CaseRecorder& record = s.record;
  const std::string dir = s.data.planned_dir.string();
  if (!comm.all(sample.error.empty())) {
    return record.fail(fmt::format("{} of {} failed: {}{}", what, dir,
                                   comm.broadcast(timing.first_error), damage_advice(s)));
  }
  if (verify) {
    const auto start = Clock::now();
    const std::string mine = verify_plans(plans, buffer, s.context.c.data);
    const double seconds = comm.max(seconds_since(start));
    const std::string problem = comm.first_problem(mine);
    record.charge("verify", start);
    if (!problem.empty())
      return record.fail(fmt::format("{}: {}{}", dir, problem, damage_advice(s)));
    if (timings != nullptr) record.timed.verify.push_back(seconds);
    record.report.verify_seconds = seconds;
  }
  const auto bytes = static_cast<double>(record.result.bytes_per_checkpoint);
  record.report.read_gib_s = bytes / timing.seconds / kGiB;
  record.report.read_seconds = timing.seconds;
  record.report.cache_policy = record.result.cache_policy_applied;
  if (timings != nullptr) timings->push_back(timing);
  return true;
}

}  // namespace ckpt::harness
