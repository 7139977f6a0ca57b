#pragma once

// The background flush of async and lazy: one std::jthread per checkpoint, started when the
// checkpoint is due and joined when it is collected. It writes the snapshot from the host pool
// through the backend (write_whole, write_through_ring), after lazy's snapshot copy into a whole
// pool, or alongside it when the pool is a ring (the copy then runs on a second thread, so that the
// writes free the chunks it waits for). Errors come back as values with the checkpoint's context:
// no exception leaves the worker's threads (one thrown there, std::bad_alloc included, is kept as
// it is, without allocating, and described by collect() on the owner's thread).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "harness/engine/flush_writes.hpp"

namespace ckpt::harness {

struct FlushJob {
  std::string what;                // "checkpoint of iteration 7 (<dir>)", for errors
  std::function<void()> snapshot;  // lazy: the copy into the pool; may be empty
  bool snapshot_alongside =
      false;  // ring: the copy runs on its own thread while the writes consume it
  std::function<std::string()>
      prepare;  // before the writes: creates the files' directories; returns a problem or ""
  std::function<FlushWrites()> write;  // the writes through the backend
  std::function<void()>
      abandon;  // after a failure on either side: releases the other (ring: close)
  // Last, once every write succeeded: the commit, where no other process must agree (one
  // process without MPI); returns a problem or "". Empty: the caller commits after collect().
  std::function<std::string()> commit;
  // After a commit here succeeded and its end was taken: what is observed of it (may be empty).
  std::function<void()> after_commit;
};

struct FlushResult {
  std::string error;                              // "" when every write succeeded
  double copy_seconds = 0;                        // the snapshot copy on the worker (lazy)
  double flush_seconds = 0;                       // the writes
  std::uint64_t bytes = 0;                        // bytes written
  std::map<std::string, std::uint64_t> counters;  // the writes' backend counters
  bool committed = false;                         // FlushJob::commit ran and succeeded
  // When the copy, the writes and the commit began (each unset when it did not run).
  std::chrono::steady_clock::time_point copy_started_at, flush_started_at, commit_started_at;
  std::chrono::steady_clock::time_point committed_at;
};

// An exception kept as thrown (std::current_exception()), in words: "out of memory
// (std::bad_alloc)", its what(), or a note that it is not a std::exception.
std::string describe_exception(const std::exception_ptr& failure);

class FlushWorker {
 public:
  FlushWorker() = default;
  FlushWorker(const FlushWorker&) = delete;
  FlushWorker& operator=(const FlushWorker&) = delete;
  ~FlushWorker() = default;  // the jthread joins

  // Starts `job` on a new thread. Precondition: !busy(). The backend the job writes through is
  // used by the worker alone until collect() (the caller makes no other call on it meanwhile).
  void start(FlushJob job);
  bool busy() const { return thread_.joinable(); }
  // The worker has returned (its result is ready); thread-safe.
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // Blocks until the job's snapshot copy is done (at once when it has none or none is running).
  void wait_snapshot();
  // Joins the worker and hands its result over. Precondition: busy(). Throws only what
  // describing an exception of the worker throws (std::bad_alloc when memory is still short).
  FlushResult collect();

 private:
  // The thread's body: every exception is caught here, so none reaches std::terminate.
  void run(FlushJob& job) noexcept;
  void execute(FlushJob& job, FlushResult& result);
  // Runs job.snapshot, timed into copy_started_at and copy_seconds (the only fields of `result`
  // it writes: it may run beside the writes); an exception it throws is kept in copy_failure_.
  void copy(FlushJob& job, FlushResult& result) noexcept;
  void mark_snapshot_done() noexcept;

  std::jthread thread_;
  std::atomic<bool> finished_{false};
  std::mutex mutex_;
  std::condition_variable snapshot_done_cv_;
  bool snapshot_done_ = true;
  FlushResult result_;  // written by the worker before finished_, read after the join
  std::string what_;    // the job's `what`, kept on the owner's side for collect()'s messages
  // What escaped the copy, the writes or the commit (kept as thrown; read after the join).
  std::exception_ptr copy_failure_, failure_;
  const char* failed_step_ = "";  // the step failure_ came from: "flush" or "commit"
};

}  // namespace ckpt::harness
