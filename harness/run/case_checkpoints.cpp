#include "harness/run/case_checkpoints.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "backends/object_store.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/selective_sources.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/results/environment.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

namespace {

// The earlier checkpoints a selective checkpoint `dir` points at, which go with it; none when its
// manifest does not read (the read of it says why, if it is ever restored).
std::vector<std::string> earlier_checkpoints(const fs::path& dir) {
  try {
    return source_checkpoints(read_manifest(dir));
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

CaseCheckpoints::CaseCheckpoints(const CaseContext& context, CaseRecorder& record)
    : context_(context), record_(record) {}

void CaseCheckpoints::open() {
  if (store_) return;
  const Case& c = context_.c;
  std::string problem;
  try {
    store_ = make_checkpoint_store(c, context_.comm.rank());
  } catch (const std::exception& e) {
    problem = fmt::format("backend.name = \"{}\": {}", c.backend, e.what());
  }
  agree(context_.comm, problem);
}

void CaseCheckpoints::prepare_target() {
  Comm& comm = context_.comm;
  std::string problem;
  if (comm.rank() == 0) {
    try {
      problem = store_->prepare_target(context_.c).value_or("");
    } catch (const std::exception& e) {
      problem = fmt::format("campaign.target: {}", e.what());
    }
  }
  agree(comm, comm.broadcast(problem));
}

// A keeping run owns its case directory: process 0 holds its lock, and every process stops when
// another run holds it. A restore holds it shared, so that no keeping run retires the checkpoint
// it reads.
void CaseCheckpoints::lock() {
  const Case& c = context_.c;
  Comm& comm = context_.comm;
  const bool restoring = context_.reads_stored_checkpoint();
  if (!context_.keeping() && !restoring && !store_->objects()) return;
  std::string problem, note;
  if (comm.rank() == 0) lock_ = store_->lock(c, restoring, problem, note);
  if (const std::string first = comm.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: {}", c.index, first));
  }
  if (note = comm.broadcast(note); !note.empty()) record_.add_notes({note});
}

// Checkpoints kept by an earlier run with campaign.overwrite stay untouched until this run's
// first checkpoint is complete. Process 0 alone looks (other processes may not see the directory
// yet, or a stale view). Only the complete one `latest` names is superseded; claim() makes each
// step directory exclusively.
void CaseCheckpoints::continue_numbering() {
  Comm& comm = context_.comm;
  std::string problem;
  if (comm.rank() == 0) {
    try {
      fs::path latest;
      if (!store_->find_latest(context_.c, latest) && store_->has_manifest(latest)) {
        previous_dirs_.insert(latest);
        for (const std::string& name : earlier_checkpoints(latest))
          previous_dirs_.insert(latest.parent_path() / name);
      }
      first_step_ = store_->next_step_number(context_.c);
    } catch (const std::exception& e) {
      problem = fmt::format("campaign.target: {}", e.what());
    }
  }
  agree(comm, comm.broadcast(problem));
  first_step_ = std::stoll(comm.broadcast(std::to_string(first_step_)));
}

fs::path CaseCheckpoints::step_dir(int iteration) const {
  return case_directory(context_.c) /
         checkpoint_dir_name(context_.c.directory_layout, first_step_ + iteration);
}

// Process 0 claims the step directory (on a file system an exclusive mkdir, moving to the next
// number when the name exists: a run without the lock, or a leftover), so no two runs share one.
bool CaseCheckpoints::claim(int iteration, fs::path& dir) {
  const Case& c = context_.c;
  Comm& comm = context_.comm;
  std::string problem;
  if (comm.rank() == 0) {
    try {
      first_step_ = store_->claim_step(first_step_ + iteration, [&](std::int64_t step) {
        return case_directory(c) / checkpoint_dir_name(c.directory_layout, step);
      }) - iteration;
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = comm.broadcast(problem);
  first_step_ = std::stoll(comm.broadcast(std::to_string(first_step_)));
  dir = step_dir(iteration);
  if (!problem.empty())
    return record_.fail(fmt::format("checkpoint {}: {}", dir.string(), problem));
  return true;
}

// After its restore verified (or, for --phase checkpoint, as it commits).
void CaseCheckpoints::name_latest(const fs::path& dir, std::int64_t step) {
  Comm& comm = context_.comm;
  std::string problem;
  if (comm.rank() == 0) {
    try {
      record_latest_checkpoint(*store_, context_.c, dir, step);
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = comm.broadcast(problem);
  if (!problem.empty()) {
    record_.fail(
        fmt::format("checkpoint {}: recording it as the latest failed: {}", dir.string(), problem));
    return;
  }
  record_.result.checkpoint_dir = dir.string();
}

// A keeping run removes the checkpoints a timed one replaces; warm-up checkpoints, and every
// checkpoint of a run that keeps none, go at once (earlier runs' checkpoints stay). Process 0
// removes; everyone waits. A timed iteration's retire time (process 0's, until everyone has
// waited) is reported beside the checkpoint, never in it.
bool CaseCheckpoints::retire(const fs::path& current, bool timed,
                             const std::set<std::string>& needed) {
  const auto start = Clock::now();
  const bool keeping = context_.keeping();
  std::vector<std::string> failures;
  if (context_.comm.rank() == 0) {
    // An interrupted run's checkpoints are complete too: they supersede the older ones alike.
    const bool complete = record_.ok() || record_.result.status == "interrupted";
    if (keeping && timed && complete) {
      std::set<fs::path> kept = {current};
      for (const fs::path& old : previous_dirs_) {
        if (needed.contains(old.filename().string())) {
          kept.insert(old);
        } else if (old != current) {
          failures.push_back(store_->remove_checkpoint(old));
        }
      }
      previous_dirs_ = std::move(kept);
    } else if (!keeping || !timed) {
      failures.push_back(store_->remove_checkpoint(current));
    }
  }
  std::erase(failures, std::string());
  record_.add_notes(failures);  // process 0's; space left taken, never a checkpoint broken
  context_.comm.barrier();
  if (timed) record_.timed.retire.push_back(seconds_since(start));
  record_.charge("retire", start);
  return keeping && timed;
}

// A failed checkpoint, made by this run (claim), goes at once so that it cannot fill the store
// for later runs. Process 0 removes it once every process stopped writing: its manifest first, so
// that a removal cut short never leaves a failed checkpoint that looks complete.
std::string CaseCheckpoints::discard(const fs::path& dir) {
  Comm& comm = context_.comm;
  std::string outcome;
  if (comm.rank() == 0) outcome = store_->remove_failed(dir);
  return comm.broadcast(outcome);
}

// On a file system every process reads `latest` and the manifest itself, as before; an object
// store is asked once, by process 0, which hands the manifest to the others.
std::string CaseCheckpoints::find_restorable(const Case& writer, fs::path& dir,
                                             Manifest& manifest) {
  Comm& comm = context_.comm;
  if (!store_->objects())
    return find_restorable_checkpoint(*store_, writer, dir, manifest).value_or("");
  std::string problem, text;
  if (comm.rank() == 0) {
    try {
      problem = find_restorable_checkpoint(*store_, writer, dir, manifest).value_or("");
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem.empty()) text = manifest_json(manifest).dump();
  }
  problem = comm.broadcast(problem);
  dir = comm.broadcast(dir.string());
  text = comm.broadcast(text);
  if (problem.empty() && comm.rank() != 0) manifest = parse_manifest(text, dir / kManifestName);
  return problem;
}

// An object store is listed by process 0 only: the others say where to look.
std::string CaseCheckpoints::damage_advice(const Case& c, const fs::path& dir) {
  if (!store_->objects() || context_.comm.rank() == 0) {
    try {
      return damaged_checkpoint_advice(*store_, c, dir);
    } catch (const std::exception& e) {
      return fmt::format("listing the other checkpoints failed: {}", e.what());
    }
  }
  const fs::path case_dir = case_directory(c);
  return fmt::format(
      "ckptbench does not fall back to another checkpoint on its own; to restore another complete "
      "checkpoint of {}, write its name into {}",
      case_dir.string(), (case_dir / "latest").string());
}

namespace {

// How long the observer polls before it calls a checkpoint invisible.
constexpr double kVisibleWaitSeconds = 10;

// Polls until `seen` (a listing names checkpoint `dir`'s manifest and its first byte reads back)
// holds; the seconds that took, or the problem.
std::optional<double> poll_visible(const std::function<bool()>& seen, const fs::path& dir,
                                   std::string& problem) {
  const auto start = Clock::now();
  for (;;) {
    if (seen()) return seconds_since(start);
    if (seconds_since(start) > kVisibleWaitSeconds) {
      problem = fmt::format(
          "checkpoint {}: its manifest was not visible to another process {} s "
          "after the commit",
          dir.string(), kVisibleWaitSeconds);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Through the observer's own connection: a LIST names the manifest, a ranged GET reads a byte.
bool object_seen(backends::ObjectStore& objects, const fs::path& dir) {
  const std::string manifest = (dir / kManifestName).string();
  bool listed = false;
  for (const backends::StoredObject& o : objects.list(manifest)) listed |= o.path == manifest;
  return listed && objects.get_range(manifest, 0, 1).has_value();
}

// Through this process's own view of the file system (on another host: what its client's
// caches let it see): the directory's listing names the manifest and a fresh open reads a byte.
bool file_seen(CheckpointStore& files, const fs::path& dir) {
  if (!files.file_sizes(dir).contains(std::string(kManifestName))) return false;
  try {
    return files.read_bytes(dir / kManifestName, 0, 1).size() == 1;
  } catch (const std::runtime_error&) {
    return false;  // listed, not yet readable
  }
}

}  // namespace

bool CaseCheckpoints::observes_visibility() const {
  return store_->objects() || context_.comm.size() > 1;
}

int CaseCheckpoints::observer() {
  if (!observer_) {
    Comm& comm = context_.comm;
    const bool elsewhere = comm.broadcast(host_name()) != host_name();
    const double first_elsewhere =
        comm.min(elsewhere ? static_cast<double>(comm.rank()) : static_cast<double>(comm.size()));
    observer_ = first_elsewhere < comm.size() ? static_cast<int>(first_elsewhere)
                                              : (comm.size() > 1 ? 1 : 0);
  }
  return *observer_;
}

std::optional<double> CaseCheckpoints::time_until_visible(const fs::path& dir,
                                                          backends::Backend& observer_backend) {
  Comm& comm = context_.comm;
  const int observing = observer();
  double seconds = -1;
  std::string problem;
  if (comm.rank() == observing) {
    try {
      if (store_->objects()) {
        auto* objects = dynamic_cast<backends::ObjectStore*>(&observer_backend);
        if (objects == nullptr) throw std::logic_error("the data backend is no object store");
        seconds =
            poll_visible([&] { return object_seen(*objects, dir); }, dir, problem).value_or(-1);
        objects->take_counters();  // the observer's, neither the data's nor the store's
      } else {
        seconds = poll_visible([&] { return file_seen(*store_, dir); }, dir, problem).value_or(-1);
      }
    } catch (const std::exception& e) {
      problem = fmt::format("checkpoint {}: looking for it from another process failed: {}",
                            dir.string(), e.what());
    }
  }
  seconds = comm.max(seconds);
  if (const std::string note = comm.first_problem(problem); !note.empty())
    record_.add_notes({note});
  if (seconds < 0) return std::nullopt;
  return seconds;
}

void CaseCheckpoints::requests(std::map<std::string, std::uint64_t>& total,
                               std::map<std::string, std::uint64_t>& most) {
  const std::map<std::string, std::uint64_t> mine =
      store_ ? store_->take_counters() : std::map<std::string, std::uint64_t>{};
  for (const std::string& text : context_.comm.gather(nlohmann::json(mine).dump())) {
    const nlohmann::json counts = nlohmann::json::parse(text);
    for (const auto& [name, count] : counts.items()) {
      const auto n = count.get<std::uint64_t>();
      total[name] += n;
      most[name] = std::max(most[name], n);
    }
  }
}

}  // namespace ckpt::harness
