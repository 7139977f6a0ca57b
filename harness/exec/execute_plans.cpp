#include "harness/exec/execute_plans.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

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

}  // namespace

void StreamedReads::read(const backends::FilePlan& part, backends::MemoryView memory) {
  if (!stream_ || path_ != part.path) {
    finish();
    backends::IoPlan file;
    file.files.push_back({.path = part.path});
    stream_ = backend_.begin(file, false);
    path_ = part.path;
  }
  backends::IoPlan plan;
  plan.files.push_back(part);
  if (stream_->ok()) stream_->transfer(plan, memory);
  if (!stream_->ok()) finish();  // throws its error
}

void StreamedReads::finish() {
  if (!stream_) return;
  const backends::IoOutcome outcome = stream_->finish();
  stream_.reset();
  add_outcome(done_, outcome);
  if (!outcome.ok()) throw std::runtime_error(named(who_, *outcome.error));
}

void add_latency(std::optional<backends::LatencyHistogram>& sum,
                 const backends::LatencyHistogram& more) {
  if (sum) {
    sum->merge(more);
  } else {
    sum = more;
  }
}

Execution execute_plans(backends::Backend& backend, const std::vector<PlanCall>& calls, bool write,
                        Stager* stager, OnThrow on_throw) {
  Execution out;
  for (const PlanCall& call : calls) {
    Moved moved;
    try {
      moved = move_plan(backend, call, write, stager);
    } catch (const std::exception& e) {
      if (on_throw == OnThrow::propagate) throw;
      out.error = named(call.who, e.what());
      break;
    }
    add_outcome(out, moved.io);
    out.copy_seconds += moved.copy_seconds;
    out.seconds.push_back(moved.seconds);
    if (!moved.io.ok()) {
      out.error = named(call.who, *moved.io.error);
      break;
    }
  }
  return out;
}

}  // namespace ckpt::harness
