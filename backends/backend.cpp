#include "backends/backend.hpp"

#include <chrono>
#include <cstring>

namespace ckpt::backends {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Every extent must lie inside the memory view.
void check_plan(const IoPlan& plan, const MemoryView& memory) {
  for (const FilePlan& file : plan.files) {
    for (const Extent& e : file.extents) {
      if (e.memory_offset + e.length > memory.size) {
        throw std::invalid_argument("plan extent of " + file.path + " at file offset " +
                                    std::to_string(e.file_offset) + " reaches memory byte " +
                                    std::to_string(e.memory_offset + e.length) + " beyond the " +
                                    std::to_string(memory.size) + "-byte buffer");
      }
    }
  }
}

// Device memory only for backends that address it.
void check_memory_kind(const Backend& backend, const MemoryView& memory) {
  if (memory.kind == MemoryKind::device && !backend.capabilities().device_memory) {
    throw std::invalid_argument(
        std::string(backend.name()) +
        ": cannot transfer device memory (capabilities: device_memory = false); stage it "
        "through host memory");
  }
}

}  // namespace

void check_settings(std::string_view backend, const Capabilities& caps,
                    const IoSettings& settings) {
  const auto refuse = [&](const std::string& setting, const std::string& problem) {
    std::string message = std::string(backend) + ": `backend." + setting + "` " + problem;
    if (const auto advice = caps.advice.find(setting); advice != caps.advice.end())
      message += ": " + advice->second;
    throw std::invalid_argument(message);
  };
  if (settings.threads < 1)
    refuse("threads", "must be at least 1 (got " + std::to_string(settings.threads) + ")");
  if (settings.threads > 1 && !caps.threads) {
    refuse("threads", "must be 1 (got " + std::to_string(settings.threads) +
                          "; capabilities: threads = false)");
  }
  if (settings.queue_depth < 1 || settings.queue_depth > caps.max_queue_depth) {
    refuse("queue_depth", "must be from 1 to " + std::to_string(caps.max_queue_depth) + " (got " +
                              std::to_string(settings.queue_depth) + ")");
  }
  if (settings.direct && !caps.direct_io)
    refuse("direct", "is not supported (capabilities: direct_io = false)");
  if (settings.fallocate && !caps.fallocate)
    refuse("fallocate", "is not supported (capabilities: fallocate = false)");
  if (settings.sqpoll && !caps.sqpoll)
    refuse("sqpoll", "is not supported (capabilities: sqpoll = false)");
  if (settings.request_latency && !caps.request_latency) {
    throw std::invalid_argument(
        std::string(backend) +
        ": `measure.latency = true` is not supported (capabilities: request_latency = false): "
        "only backends that issue requests themselves (posix, uring) time them; set it to false");
  }
}

void Backend::add_request_latency(const LatencyHistogram& latencies) {
  if (latency_) {
    latency_->merge(latencies);
  } else {
    latency_ = latencies;
  }
}

std::uint64_t IoPlan::bytes() const {
  std::uint64_t total = 0;
  for (const FilePlan& f : files) {
    for (const Extent& e : f.extents) total += e.length;
  }
  return total;
}

std::uint64_t IoPlan::extents() const {
  std::uint64_t total = 0;
  for (const FilePlan& f : files) total += f.extents.size();
  return total;
}

IoError::IoError(std::string_view backend, std::string_view operation, const std::string& path,
                 int error_number, std::uint64_t offset, std::uint64_t length)
    : std::runtime_error(
          std::string(backend) + ": " + std::string(operation) + " " + path +
          (length > 0
               ? " at offset " + std::to_string(offset) + ", length " + std::to_string(length)
               : std::string()) +
          ": " + (error_number != 0 ? std::strerror(error_number) : "short transfer")),
      errno_(error_number) {}

IoOutcome Backend::write(const IoPlan& plan, MemoryView memory) {
  return run(plan, memory, Direction::write);
}

IoOutcome Backend::read(const IoPlan& plan, MemoryView memory) {
  return run(plan, memory, Direction::read);
}

IoOutcome Backend::run(const IoPlan& plan, MemoryView memory, Direction direction) {
  check_plan(plan, memory);
  check_memory_kind(*this, memory);
  IoOutcome outcome;
  latency_.reset();
  try {
    auto start = Clock::now();
    std::unique_ptr<OpenFiles> files = open(plan, direction);
    outcome.phases.open = seconds_since(start);
    start = Clock::now();
    transfer(*files, plan, memory, direction);
    outcome.phases.transfer = seconds_since(start);
    start = Clock::now();
    sync(*files, direction);
    outcome.phases.sync = seconds_since(start);
    start = Clock::now();
    close(*files);
    outcome.phases.close = seconds_since(start);
    outcome.bytes = plan.bytes();
  } catch (const IoError& e) {
    outcome.error = e.what();
  }
  outcome.notes = notes();
  outcome.counters = counters();
  outcome.latency = std::move(latency_);
  latency_.reset();
  return outcome;
}

std::unique_ptr<MappedFile> Backend::map(const std::string& path) {
  if (!capabilities().mmap) {
    throw std::invalid_argument(std::string(name()) +
                                ": cannot map files (capabilities: mmap = false)");
  }
  return map_file(path);
}

std::unique_ptr<MappedFile> Backend::map_file(const std::string& path) {
  throw IoError(std::string(name()) + ": map " + path + ": this backend maps no files");
}

std::unique_ptr<Backend::Stream> Backend::begin(const IoPlan& plan, bool write) {
  if (capabilities().collective) {
    throw std::invalid_argument(
        std::string(name()) +
        ": a collective backend cannot stream a plan in parts; hand it the whole plan");
  }
  return std::unique_ptr<Stream>(
      new Stream(*this, plan, write ? Direction::write : Direction::read));
}

Backend::Stream::Stream(Backend& backend, const IoPlan& plan, Direction direction)
    : backend_(backend), direction_(direction) {
  for (const FilePlan& f : plan.files) paths_.push_back(f.path);
  backend_.latency_.reset();
  try {
    const auto start = Clock::now();
    files_ = backend_.open(plan, direction_);
    outcome_.phases.open = seconds_since(start);
  } catch (const IoError& e) {
    outcome_.error = e.what();
  }
}

void Backend::Stream::transfer(const IoPlan& part, MemoryView memory) {
  // Paths are compared only where the part moves something: a part of a plan with thousands of
  // files touches a few.
  bool same_files = part.files.size() == paths_.size();
  for (std::size_t i = 0; same_files && i < paths_.size(); ++i) {
    const FilePlan& f = part.files[i];
    same_files = (f.extents.empty() && f.datasets.empty()) || f.path == paths_[i];
  }
  if (!same_files) {
    throw std::invalid_argument(std::string(backend_.name()) +
                                ": a streamed part must list the plan's files in the plan's order");
  }
  check_plan(part, memory);
  check_memory_kind(backend_, memory);
  if (!outcome_.ok()) return;
  try {
    const auto start = Clock::now();
    backend_.transfer(*files_, part, memory, direction_);
    outcome_.phases.transfer += seconds_since(start);
    outcome_.bytes += part.bytes();
  } catch (const IoError& e) {
    outcome_.error = e.what();
  }
}

IoOutcome Backend::Stream::finish() {
  if (outcome_.ok() && files_) {
    try {
      auto start = Clock::now();
      backend_.sync(*files_, direction_);
      outcome_.phases.sync = seconds_since(start);
      start = Clock::now();
      backend_.close(*files_);
      outcome_.phases.close = seconds_since(start);
    } catch (const IoError& e) {
      outcome_.error = e.what();
    }
  }
  files_.reset();
  outcome_.notes = backend_.notes();
  outcome_.counters = backend_.counters();
  outcome_.latency = std::move(backend_.latency_);
  backend_.latency_.reset();
  return outcome_;
}

}  // namespace ckpt::backends
