#pragma once

// The one executor: a process's plans moved between memory and storage through the backend
// contract, one Backend::write or Backend::read per call. The timed transfers of the write and
// restore phases and of the engines' synchronous checkpoints (timed_transfer) and the engines'
// flush of a whole host pool (write_whole) all run it; the loader's read strategies run its
// streamed form (StreamedReads).

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
};

// What the calls made gave, summed over them.
struct Execution {
  std::vector<double> seconds;  // per call made: the call, staging copies included
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

// Makes `calls` in order through `backend` (through `stager`, when given, for device memory the
// backend cannot address) and stops after the first that fails. `write`: Backend::write, else
// Backend::read.
Execution execute_plans(backends::Backend& backend, const std::vector<PlanCall>& calls, bool write,
                        Stager* stager = nullptr, OnThrow on_throw = OnThrow::propagate);

// The executor's streamed form, for callers that read files in parts into memory they fill piece
// by piece or reuse (the loader's read strategies: a run of ranges straight into place, a chunk
// into a pool slot, a piece into a bounce buffer): one Backend::Stream per file, kept open while
// consecutive parts are of that file, its outcome summed as execute_plans sums its calls. Used by
// one thread; the backend must outlive it.
class StreamedReads {
 public:
  // `who` prefixes every error, as PlanCall::who does ("load": "load: posix: read ...").
  StreamedReads(backends::Backend& backend, std::string who)
      : backend_(backend), who_(std::move(who)) {}
  // Reads `part`'s extents (memory offsets relative to `memory`, host-addressable). Throws
  // std::runtime_error with the backend's error (operation, path, offset, errno text).
  void read(const backends::FilePlan& part, backends::MemoryView memory);
  // Closes the open file. Throws std::runtime_error as read() does.
  void finish();
  // What the files read so far gave (bytes, phases, counters, notes), summed over them.
  const Execution& done() const { return done_; }

 private:
  backends::Backend& backend_;
  std::string who_;
  std::string path_;
  std::unique_ptr<backends::Backend::Stream> stream_;
  Execution done_;
};

// `more` merged into `sum` (a copy of it when `sum` is empty).
void add_latency(std::optional<backends::LatencyHistogram>& sum,
                 const backends::LatencyHistogram& more);

}  // namespace ckpt::harness
