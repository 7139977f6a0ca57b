#include "harness/engine/flush_worker.hpp"

#include <chrono>
#include <exception>
#include <fmt/format.h>

namespace ckpt::harness {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

void FlushWorker::start(backends::Backend& backend, FlushJob job) {
  finished_.store(false, std::memory_order_relaxed);
  {
    const std::lock_guard lock(mutex_);
    snapshot_done_ = !job.snapshot;
  }
  result_ = {};
  thread_ = std::jthread([this, &backend, job = std::move(job)]() mutable { run(backend, std::move(job)); });
}

void FlushWorker::run(backends::Backend& backend, FlushJob job) {
  FlushResult result;
  try {
    if (job.snapshot) {
      const auto start = Clock::now();
      job.snapshot();
      result.copy_seconds = seconds_since(start);
    }
  } catch (const std::exception& e) {
    result.error = fmt::format("{}: snapshot copy failed: {}", job.what, e.what());
  }
  {
    const std::lock_guard lock(mutex_);
    snapshot_done_ = true;
  }
  snapshot_done_cv_.notify_all();
  const auto start = Clock::now();
  if (result.error.empty() && job.prepare) {
    if (std::string problem = job.prepare(); !problem.empty()) result.error = fmt::format("{}: {}", job.what, problem);
  }
  for (std::size_t i = 0; i < job.plans.size() && result.error.empty(); ++i) {
    try {
      const backends::IoOutcome io = backend.write(job.plans[i], job.memory[i]);
      result.bytes += io.bytes;
      if (!io.ok()) result.error = fmt::format("{}: rank {}: {}", job.what, job.ranks[i], *io.error);
    } catch (const std::exception& e) {
      result.error = fmt::format("{}: rank {}: {}", job.what, job.ranks[i], e.what());
    }
  }
  result.flush_seconds = seconds_since(start);
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
