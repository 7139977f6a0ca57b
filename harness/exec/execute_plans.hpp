#pragma once

// The one executor: a process's plans moved between memory and storage through the backend
// contract, call by call. The timed transfers of the write and restore phases and of the engines'
// synchronous checkpoints (timed_transfer) and the engines' flush of a whole host pool
// (write_whole) run it one Backend::write or Backend::read a call; the loader's read strategies
// and the engines' flush through a ring of chunks (write_through_ring) run it with their files
// kept open across the parts of each (Opening::kept_open).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "harness/memory/staging.hpp"

namespace ckpt::harness {

// One backend call: a plan, the memory its memory offsets count from, and whom it moves bytes
// for, as its error names them ("rank 3", "ranks 0-3"; "": nobody).
struct PlanCall {
  const backends::IoPlan* plan = nullptr;
  backends::MemoryView memory;
  std::uint64_t base = 0;  // staged calls: where `memory` starts in the stager's buffer
  std::string who;
  // Opening::kept_open only: the call moves this part of `plan` (one of split_plan(*plan)), whose
  // bytes `memory` holds from its offset 0 (a chunk of a ring), instead of the plan's ranges. A
  // part without files moves nothing: the call opens the plan's files if they are not open.
  const StagedPart* part = nullptr;
};

// What the calls made gave, summed over them.
struct Execution {
  // Per call made: the call, staging copies included (Opening::kept_open: per run of calls
  // through the same open files: open, transfers, sync, close).
  std::vector<double> seconds;
  std::uint64_t bytes = 0;
  backends::PhaseTimes phases;
  std::map<std::string, std::uint64_t> counters;
  std::optional<backends::LatencyHistogram> latency;
  std::vector<std::string> notes;  // without repeats
  double copy_seconds = 0;         // staging: device <-> pinned host copies
  std::string error;               // "<who>: <error>" of the call that failed, "" when none did
};

// What a call that throws (a plan the backend refuses: a broken precondition) does: goes through
// to the caller, or becomes that call's error (a flush thread reports it and goes on living).
enum class OnThrow { propagate, record };

// Makes `calls` in order through `backend`, one Backend::write or Backend::read a call (through
// `stager`, when given, for device memory the backend cannot address), and stops after the first
// that fails. `write`: Backend::write, else Backend::read.
Execution execute_plans(backends::Backend& backend, const std::vector<PlanCall>& calls, bool write,
                        Stager* stager = nullptr, OnThrow on_throw = OnThrow::propagate);

// When the executor opens and closes the files of its calls.
enum class Opening {
  // Each call is one Backend::write or Backend::read: it opens, moves, syncs and closes its files.
  per_call,
  // Streamed (Backend::begin, through a PartStream): a call naming the files of the call before
  // it (the same paths in the same order) moves its bytes through the files that call opened; a
  // call naming others closes those (sync, close) and opens its own; finish() closes the last.
  // What a reader of files in parts does (the loader's read strategies: a run of ranges into
  // place, a chunk into a pool slot, a piece into a bounce buffer): one open a file, not one a
  // part. Collective backends cannot stream (Backend::begin throws std::invalid_argument).
  kept_open,
};

struct ExecutorOptions {
  // Device memory the backend cannot address goes through it; per_call only.
  Stager* stager = nullptr;
  OnThrow on_throw = OnThrow::propagate;
  Opening opening = Opening::per_call;
};

// The one executor: calls made one at a time, as the caller has them ready (a reader thread with
// a pool slot free, a flush thread with a chunk copied), their outcomes summed. execute_plans is
// it over a list of calls. Used by one thread; the backend and the stager must outlive it.
class PlanExecutor {
 public:
  // Throws std::invalid_argument for a stager with Opening::kept_open.
  PlanExecutor(backends::Backend& backend, bool write, const ExecutorOptions& options);
  PlanExecutor(const PlanExecutor&) = delete;
  PlanExecutor& operator=(const PlanExecutor&) = delete;
  ~PlanExecutor();

  // Makes `call` unless one has failed; returns whether every call so far succeeded (kept_open
  // closes the files of a failed transfer at once, so its error is known here). Throws what
  // the backend throws for a plan it refuses, with OnThrow::propagate.
  bool call(const PlanCall& call);
  // kept_open: closes the files kept open (sync, close), so that the next call opens its own even
  // when it names the same files (each modeled rank's files opened as that rank would open them).
  // Returns whether every call so far succeeded.
  bool close_files();
  // kept_open: releases the files kept open without syncing them (a write abandoned midway); what
  // moved through them is not counted. The next call opens its own.
  void drop_files();
  // Closes the files kept open and hands over what every call gave (done() is empty after).
  // Call once, after the last call.
  Execution finish();
  // What the calls gave so far; `error` names the call that failed ("<who>: <error>").
  const Execution& done() const { return done_; }

 private:
  void call_once(const PlanCall& call);
  void call_streamed(const PlanCall& call);
  void close_stream();

  backends::Backend& backend_;
  bool write_;
  ExecutorOptions options_;
  Execution done_;
  // kept_open: the open files (their plan without ranges) and the stream through them.
  std::unique_ptr<backends::IoPlan> open_;
  std::unique_ptr<PartStream> stream_;
  std::string who_;  // of the last call through the stream
};

// `more` merged into `sum` (a copy of it when `sum` is empty).
void add_latency(std::optional<backends::LatencyHistogram>& sum,
                 const backends::LatencyHistogram& more);

}  // namespace ckpt::harness
