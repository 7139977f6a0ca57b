#include "harness/engine/flush_worker.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <new>
#include <stdexcept>
#include <system_error>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {

std::string describe_exception(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

namespace {

// Releases the other side after a failure (ring: close); a failure to do so changes nothing more.
void abandon(FlushJob& job) noexcept {
  try {
    if (job.abandon) job.abandon();
  } catch (...) {
  }
}

}  // namespace

void FlushWorker::start(FlushJob job) {
  finished_.store(false, std::memory_order_relaxed);
  {
    const std::lock_guard lock(mutex_);
    snapshot_done_ = !job.snapshot;
  }
  result_ = {};
  what_ = job.what;
  copy_failure_ = nullptr;
  failure_ = nullptr;
  failed_step_ = "";
  try {
    thread_ = std::jthread([this, job = std::move(job)]() mutable { run(job); });
  } catch (const std::system_error& e) {  // no memory for its stack, or too many threads
    throw std::runtime_error(fmt::format("cannot start the flush thread: {}", e.what()));
  }
}

void FlushWorker::mark_snapshot_done() noexcept {
  {
    const std::lock_guard lock(mutex_);
    snapshot_done_ = true;
  }
  snapshot_done_cv_.notify_all();
}

void FlushWorker::copy(FlushJob& job, FlushResult& result) noexcept {
  const auto start = Clock::now();
  result.copy_started_at = start;
  try {
    job.snapshot();
  } catch (...) {
    // Kept as thrown: formatting a message here could itself throw (std::bad_alloc).
    copy_failure_ = std::current_exception();
    abandon(job);
  }
  result.copy_seconds = seconds_since(start);
  mark_snapshot_done();
}

void FlushWorker::execute(FlushJob& job, FlushResult& result) {
  std::jthread copier;
  if (job.snapshot && job.snapshot_alongside) {
    copier = std::jthread([this, &job, &result] { copy(job, result); });
  } else if (job.snapshot) {
    copy(job, result);
  }
  // An alongside copy's failure is read only after the join (it shows as a write out of chunks).
  const bool copied = !job.snapshot || job.snapshot_alongside || !copy_failure_;
  const auto start = Clock::now();
  result.flush_started_at = start;
  try {
    if (copied && job.prepare) {
      if (std::string problem = job.prepare(); !problem.empty())
        result.error = fmt::format("{}: {}", job.what, problem);
    }
    if (copied && result.error.empty() && job.write) {
      FlushWrites writes = job.write();
      result.bytes = writes.bytes;
      result.counters = std::move(writes.counters);
      result.error = std::move(writes.error);
    }
  } catch (...) {
    failure_ = std::current_exception();
    failed_step_ = "flush";
  }
  if (!result.error.empty() || failure_)
    abandon(job);  // before the join: the copy may wait for chunks
  result.flush_seconds = seconds_since(start);
  if (copier.joinable()) copier.join();
  if (copy_failure_ || failure_ || !result.error.empty() || !job.commit) return;
  result.commit_started_at = Clock::now();
  try {
    result.error = job.commit();
  } catch (...) {
    failure_ = std::current_exception();
    failed_step_ = "commit";
  }
  result.committed = result.error.empty() && !failure_;
  result.committed_at = Clock::now();
  if (!result.committed || !job.after_commit) return;
  try {
    job.after_commit();
  } catch (...) {  // an observation only: the commit stands
  }
}

void FlushWorker::run(FlushJob& job) noexcept {
  FlushResult result;
  try {
    execute(job, result);
  } catch (...) {  // the copy thread could not start
    failure_ = std::current_exception();
    failed_step_ = "flush";
    abandon(job);
  }
  mark_snapshot_done();  // an owner waiting for a copy that never ran goes on
  result_ = std::move(result);
  finished_.store(true, std::memory_order_release);
}

void FlushWorker::wait_snapshot() {
  std::unique_lock lock(mutex_);
  snapshot_done_cv_.wait(lock, [this] { return snapshot_done_; });
}

FlushResult FlushWorker::collect() {
  thread_.join();
  thread_ = std::jthread();
  FlushResult result = std::move(result_);
  const std::exception_ptr copy_failure = std::exchange(copy_failure_, nullptr);
  const std::exception_ptr failure = std::exchange(failure_, nullptr);
  // A failed copy is the cause of a write that ran out of chunks, so it is named first.
  if (copy_failure) {
    result.error =
        fmt::format("{}: snapshot copy failed: {}", what_, describe_exception(copy_failure));
  } else if (failure) {
    result.error =
        fmt::format("{}: {} failed: {}", what_, failed_step_, describe_exception(failure));
  }
  if (!result.error.empty()) result.committed = false;
  return result;
}

}  // namespace ckpt::harness
