#include "harness/engine/flush_worker.hpp"

#include <chrono>
#include <exception>
#include <fmt/format.h>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {

void FlushWorker::start(FlushJob job) {
  finished_.store(false, std::memory_order_relaxed);
  {
    const std::lock_guard lock(mutex_);
    snapshot_done_ = !job.snapshot;
  }
  result_ = {};
  thread_ = std::jthread([this, job = std::move(job)]() mutable { run(std::move(job)); });
}

std::string FlushWorker::copy(FlushJob& job, double& copy_seconds) {
  std::string error;
  const auto start = Clock::now();
  try {
    job.snapshot();
  } catch (const std::exception& e) {
    error = fmt::format("{}: snapshot copy failed: {}", job.what, e.what());
    if (job.abandon) job.abandon();
  }
  copy_seconds = seconds_since(start);
  {
    const std::lock_guard lock(mutex_);
    snapshot_done_ = true;
  }
  snapshot_done_cv_.notify_all();
  return error;
}

void FlushWorker::run(FlushJob job) {
  FlushResult result;
  std::string copy_error;
  std::jthread copier;
  if (job.snapshot && job.snapshot_alongside) {
    copier = std::jthread([this, &job, &copy_error, &result] { copy_error = copy(job, result.copy_seconds); });
  } else if (job.snapshot) {
    result.error = copy(job, result.copy_seconds);
  }
  const auto start = Clock::now();
  if (result.error.empty() && job.prepare) {
    if (std::string problem = job.prepare(); !problem.empty()) result.error = fmt::format("{}: {}", job.what, problem);
  }
  if (result.error.empty() && job.write) {
    FlushWrites writes = job.write();
    result.bytes = writes.bytes;
    result.error = std::move(writes.error);
  }
  if (!result.error.empty() && job.abandon) job.abandon();
  result.flush_seconds = seconds_since(start);
  if (copier.joinable()) copier.join();
  if (!copy_error.empty()) result.error = copy_error;  // the cause of a write that ran out of chunks
  if (result.error.empty() && job.commit) {
    try {
      result.error = job.commit();
    } catch (const std::exception& e) {
      result.error = fmt::format("{}: commit failed: {}", job.what, e.what());
    }
    result.committed = result.error.empty();
    result.committed_at = Clock::now();
  }
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
  return std::move(result_);
}

}  // namespace ckpt::harness
