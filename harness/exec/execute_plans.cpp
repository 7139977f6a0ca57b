#include "harness/exec/execute_plans.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

namespace ckpt::harness {
namespace {

void add_outcome(Execution& out, const backends::IoOutcome& io) {
  out.bytes += io.bytes;
  out.phases.open += io.phases.open;
  out.phases.transfer += io.phases.transfer;
  out.phases.sync += io.phases.sync;
  out.phases.close += io.phases.close;
  for (const auto& [name, count] : io.counters) out.counters[name] += count;
  if (io.latency) add_latency(out.latency, *io.latency);
  for (const std::string& note : io.notes) {
    if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end())
      out.notes.push_back(note);
  }
}

std::string named(const std::string& who, const std::string& error) {
  return who.empty() ? error : who + ": " + error;
}

struct Moved {
  backends::IoOutcome io;
  double seconds = 0;
  double copy_seconds = 0;
};

Moved move_plan(backends::Backend& backend, const PlanCall& call, bool write, Stager* stager) {
  if (stager != nullptr) {
    StagedOutcome out = write ? stager->write(backend, *call.plan, call.base)
                              : stager->read(backend, *call.plan, call.base);
    return {std::move(out.io), out.seconds, out.copy_seconds};
  }
  backends::IoOutcome io =
      write ? backend.write(*call.plan, call.memory) : backend.read(*call.plan, call.memory);
  const double seconds = io.phases.total();
  return {std::move(io), seconds, 0};
}

// Whether `plan` names the files of `open`, in the same order.
bool same_files(const backends::IoPlan& open, const backends::IoPlan& plan) {
  if (open.files.size() != plan.files.size()) return false;
  for (std::size_t i = 0; i < open.files.size(); ++i) {
    if (open.files[i].path != plan.files[i].path) return false;
  }
  return true;
}

}  // namespace

void add_latency(std::optional<backends::LatencyHistogram>& sum,
                 const backends::LatencyHistogram& more) {
  if (sum) {
    sum->merge(more);
  } else {
    sum = more;
  }
}

PlanExecutor::PlanExecutor(backends::Backend& backend, bool write, const ExecutorOptions& options)
    : backend_(backend), write_(write), options_(options) {
  if (options_.stager != nullptr && options_.opening == Opening::kept_open) {
    throw std::invalid_argument(
        "the executor keeps files open only for memory the backend addresses (no stager)");
  }
}

PlanExecutor::~PlanExecutor() = default;

bool PlanExecutor::call(const PlanCall& call) {
  if (!done_.error.empty()) return false;
  try {
    if (options_.opening == Opening::kept_open) {
      call_streamed(call);
    } else {
      call_once(call);
    }
  } catch (const std::exception& e) {
    drop_files();  // a transfer that threw leaves its files unsynced
    if (options_.on_throw == OnThrow::propagate) throw;
    done_.error = named(call.who, e.what());
  }
  return done_.error.empty();
}

void PlanExecutor::call_once(const PlanCall& call) {
  if (call.part != nullptr)
    throw std::invalid_argument("the executor moves a part of a plan only through files kept open");
  const Moved moved = move_plan(backend_, call, write_, options_.stager);
  add_outcome(done_, moved.io);
  done_.copy_seconds += moved.copy_seconds;
  done_.seconds.push_back(moved.seconds);
  if (!moved.io.ok()) done_.error = named(call.who, *moved.io.error);
}

void PlanExecutor::call_streamed(const PlanCall& call) {
  if (!stream_ || !same_files(*open_, *call.plan)) {
    close_stream();
    if (!done_.error.empty()) return;  // closing the files before failed
    open_ = std::make_unique<backends::IoPlan>(without_ranges(*call.plan));
    auto stream = std::make_unique<PartStream>(*open_);
    stream->begin(backend_, write_);  // may throw: then no stream is open
    stream_ = std::move(stream);
  }
  who_ = call.who;
  if (call.part != nullptr) {
    if (stream_->ok() && !call.part->files.empty()) stream_->transfer(*call.part, call.memory);
  } else if (stream_->ok()) {
    stream_->transfer(*call.plan, call.memory);
  }
  if (!stream_->ok()) close_stream();  // records the error
}

void PlanExecutor::close_stream() {
  if (!stream_) return;
  const backends::IoOutcome io = stream_->finish();
  stream_.reset();
  add_outcome(done_, io);
  done_.seconds.push_back(io.phases.total());
  if (!io.ok() && done_.error.empty()) done_.error = named(who_, *io.error);
}

void PlanExecutor::drop_files() {
  stream_.reset();
  open_.reset();
}

bool PlanExecutor::close_files() {
  close_stream();
  return done_.error.empty();
}

Execution PlanExecutor::finish() {
  close_stream();
  return std::move(done_);
}

Execution execute_plans(backends::Backend& backend, const std::vector<PlanCall>& calls, bool write,
                        Stager* stager, OnThrow on_throw) {
  PlanExecutor executor(backend, write, {.stager = stager, .on_throw = on_throw});
  for (const PlanCall& call : calls) {
    if (!executor.call(call)) break;
  }
  return executor.finish();
}

}  // namespace ckpt::harness
