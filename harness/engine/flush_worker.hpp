#pragma once

// The background flush of async and lazy: one std::jthread per checkpoint, started when the
// checkpoint is due and joined when it is collected. It writes the snapshot from the host pool
// through the backend (one Backend::write per modeled rank, as the sync path), after the
// snapshot copy itself for lazy. Errors come back as values with the checkpoint's context.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::harness {

struct FlushJob {
  std::string what;                            // "checkpoint of iteration 7 (<dir>)", for errors
  std::vector<backends::IoPlan> plans;         // per modeled rank, paths in the checkpoint's directory
  std::vector<std::int64_t> ranks;             // the modeled rank of each plan
  std::vector<backends::MemoryView> memory;    // each plan's bytes in the pool
  std::function<void()> snapshot;              // lazy: the copy into the pool, run first; may be empty
  std::function<std::string()> prepare;        // then: creates the files' directories; returns a problem or ""
  // Last, once every write succeeded: the commit, where no other process must agree (one
  // process without MPI); returns a problem or "". Empty: the caller commits after collect().
  std::function<std::string()> commit;
};

struct FlushResult {
  std::string error;          // "" when every write succeeded
  double copy_seconds = 0;    // the snapshot copy on the worker (lazy)
  double flush_seconds = 0;   // the writes
  std::uint64_t bytes = 0;    // bytes written
  bool committed = false;     // FlushJob::commit ran and succeeded
  std::chrono::steady_clock::time_point committed_at;
};

class FlushWorker {
 public:
  FlushWorker() = default;
  FlushWorker(const FlushWorker&) = delete;
  FlushWorker& operator=(const FlushWorker&) = delete;
  ~FlushWorker() = default;  // the jthread joins

  // Starts `job` on a new thread. Precondition: !busy(). The backend is used by the worker alone
  // until collect() (the caller makes no other call on it meanwhile).
  void start(backends::Backend& backend, FlushJob job);
  bool busy() const { return thread_.joinable(); }
  // The worker has returned (its result is ready); thread-safe.
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // Blocks until the job's snapshot copy is done (at once when it has none or none is running).
  void wait_snapshot();
  // Joins the worker and hands its result over. Precondition: busy().
  FlushResult collect();

 private:
  void run(backends::Backend& backend, FlushJob job);

  std::jthread thread_;
  std::atomic<bool> finished_{false};
  std::mutex mutex_;
  std::condition_variable snapshot_done_cv_;
  bool snapshot_done_ = true;
  FlushResult result_;  // written by the worker before finished_, read after the join
};

}  // namespace ckpt::harness
