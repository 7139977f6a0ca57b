#include "harness/exec/iteration.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <span>

#include "harness/common/elapsed.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/memory/data_pattern.hpp"

namespace ckpt::harness {
std::string create_parent_directories(const std::vector<RankPlan>& plans) {
  std::set<std::filesystem::path> dirs;
  for (const RankPlan& p : plans) {
    for (const auto& f : p.io.files) dirs.insert(std::filesystem::path(f.path).parent_path());
  }
  for (const std::filesystem::path& d : dirs) {
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    if (ec) return fmt::format("cannot create directory {}: {}", d.string(), ec.message());
  }
  return "";
}

namespace {

// The calls of one transfer: one per rank plan, or for a collective backend or a read in file
// order one with the whole process's share (`merged`, which must outlive the calls), made even
// with no ranks.
std::vector<PlanCall> transfer_calls(const std::vector<RankPlan>& plans,
                                     const ProcessBuffer& buffer, bool one_call,
                                     TransferOrder order, backends::IoPlan& merged) {
  std::vector<PlanCall> calls;
  if (one_call) {
    merged = order == TransferOrder::by_file ? process_plan_in_file_order(plans, buffer)
                                             : process_plan(plans, buffer);
    const std::string who =
        plans.empty() ? "" : fmt::format("ranks {}-{}", plans.front().rank, plans.back().rank);
    calls.push_back({&merged, buffer.view(), 0, who});
    return calls;
  }
  for (std::size_t i = 0; i < plans.size(); ++i) {
    calls.push_back({&plans[i].io, buffer.rank_view(i), buffer.offset(i),
                     fmt::format("rank {}", plans[i].rank)});
  }
  return calls;
}

}  // namespace

CpuSeconds process_cpu_seconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

void CpuSeconds::charge_since(const CpuSeconds& before, ProcessSample& sample) {
  const CpuSeconds now = process_cpu_seconds();
  sample.cpu_user_seconds = now.user - before.user;
  sample.cpu_system_seconds = now.system - before.system;
}

ProcessSample timed_transfer(backends::Backend& backend, const std::vector<RankPlan>& plans,
                             const ProcessBuffer& buffer, bool write, Comm& comm,
                             TransferOrder order) {
  ProcessSample sample;
  const bool one_call = backend.capabilities().collective || order == TransferOrder::by_file;
  comm.barrier();
  const CpuSeconds cpu = process_cpu_seconds();
  const auto start = Clock::now();
  sample.start_wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // An object store has no directories to make.
  if (write && !backend.capabilities().object_store) {
    sample.error = comm.first_problem(create_parent_directories(plans));
    sample.mkdir_seconds = seconds_since(start);
    if (!sample.error.empty()) {
      sample.seconds = sample.mkdir_seconds;
      return sample;
    }
  }
  backends::IoPlan merged;
  Execution done = execute_plans(backend, transfer_calls(plans, buffer, one_call, order, merged),
                                 write, buffer.stager());
  sample.phases = done.phases;
  sample.counters = std::move(done.counters);
  sample.latency = std::move(done.latency);
  sample.notes = std::move(done.notes);
  sample.copy_seconds = done.copy_seconds;
  sample.error = std::move(done.error);
  // One call for the process: its time counts for each of its ranks.
  sample.rank_seconds =
      one_call ? std::vector<double>(plans.size(), done.seconds.front()) : std::move(done.seconds);
  sample.seconds = seconds_since(start);
  CpuSeconds::charge_since(cpu, sample);
  return sample;
}

namespace {

// The phases a straggler is named for, as gather_timing sends them.
constexpr std::array<std::pair<const char*, const char*>, 6> kStragglerPhases{{{"mkdir", "m"},
                                                                               {"open", "o"},
                                                                               {"transfer", "t"},
                                                                               {"sync", "y"},
                                                                               {"close", "c"},
                                                                               {"total", "s"}}};

// Keeps, per phase, the first process with the longest time.
void note_stragglers(IterationTiming& timing, const nlohmann::json& sample, int process) {
  if (timing.stragglers.empty()) {
    for (const auto& [phase, key] : kStragglerPhases)
      timing.stragglers.push_back({phase, process, sample.at(key)});
    return;
  }
  for (std::size_t i = 0; i < kStragglerPhases.size(); ++i) {
    const double seconds = sample.at(kStragglerPhases[i].second).get<double>();
    if (seconds > timing.stragglers[i].seconds)
      timing.stragglers[i] = {kStragglerPhases[i].first, process, seconds};
  }
}

}  // namespace

double aggregate_seconds(const std::vector<ProcessWindow>& windows) {
  double slowest = 0;
  for (const ProcessWindow& w : windows) slowest = std::max(slowest, w.seconds);
  const bool all_started =
      !windows.empty() && std::all_of(windows.begin(), windows.end(),
                                      [](const ProcessWindow& w) { return w.start_wall > 0; });
  if (!all_started) return slowest;
  double first_start = windows.front().start_wall;
  for (const ProcessWindow& w : windows) first_start = std::min(first_start, w.start_wall);
  // Offsets from the earliest start, so that one process (or processes that start together)
  // gives exactly its own duration: no rounding through the epoch's magnitude.
  double span = 0;
  for (const ProcessWindow& w : windows)
    span = std::max(span, (w.start_wall - first_start) + w.seconds);
  return std::max(slowest, span);
}

IterationTiming gather_timing(const ProcessSample& mine, Comm& comm) {
  const nlohmann::json j{
      {"s", mine.seconds},
      {"w", mine.start_wall},
      {"m", mine.mkdir_seconds},
      {"o", mine.phases.open},
      {"t", mine.phases.transfer},
      {"y", mine.phases.sync},
      {"c", mine.phases.close},
      {"e", mine.error},
      {"r", mine.rank_seconds},
      {"n", mine.notes},
      {"d", mine.copy_seconds},
      {"l", mine.latency ? nlohmann::json(mine.latency->serialize()) : nlohmann::json(nullptr)},
      {"k", mine.counters},
      {"cu", mine.cpu_user_seconds},
      {"cs", mine.cpu_system_seconds}};
  IterationTiming timing;
  std::vector<double> seconds;
  std::vector<ProcessWindow> windows;
  std::vector<double> ranks;
  double slowest = -1;
  int process = 0;
  for (const std::string& text : comm.gather(j.dump())) {
    const auto p = nlohmann::json::parse(text);
    note_stragglers(timing, p, process++);
    for (double r : p.at("r")) ranks.push_back(r);
    for (const auto& n : p.at("n")) {
      const auto note = n.get<std::string>();
      if (std::find(timing.notes.begin(), timing.notes.end(), note) == timing.notes.end())
        timing.notes.push_back(note);
    }
    const double s = p.at("s").get<double>();
    if (seconds.empty()) timing.process0_seconds = s;
    seconds.push_back(s);
    windows.push_back({p.at("w").get<double>(), s});
    if (s >= slowest) {
      slowest = s;
      timing.phases = {p.at("o").get<double>(), p.at("t").get<double>(), p.at("y").get<double>(),
                       p.at("c").get<double>()};
      timing.copy_seconds = p.at("d").get<double>();
      timing.mkdir_seconds = p.at("m").get<double>();
    }
    if (timing.first_error.empty()) timing.first_error = p.at("e").get<std::string>();
    timing.cpu_user_seconds += p.at("cu").get<double>();
    timing.cpu_system_seconds += p.at("cs").get<double>();
    for (const auto& [name, count] : p.at("k").items())
      timing.counters[name] += count.get<std::uint64_t>();
    if (p.at("l").is_string())
      add_latency(timing.latency, backends::LatencyHistogram::parse(p.at("l").get<std::string>()));
  }
  timing.processes = process;
  timing.seconds = aggregate_seconds(windows);
  timing.process_seconds = spread(seconds);
  timing.rank_seconds = spread(ranks);
  return timing;
}

std::vector<std::uint64_t> buffer_offsets(const std::vector<RankPlan>& plans,
                                          const ProcessBuffer& buffer) {
  std::vector<std::uint64_t> offsets;
  for (std::size_t p = 0; p < plans.size(); ++p) offsets.push_back(buffer.offset(p));
  return offsets;
}

namespace {

// The first header byte of `plans` that differs from what was planned, as a message, or "".
std::string header_problem(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer) {
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const FileHeader& h : plans[p].headers) {
      std::string found(h.bytes.size(), '\0');
      buffer.memory().copy_to_host(buffer.offset(p) + h.memory_offset,
                                   std::as_writable_bytes(std::span(found)));
      const auto diff = std::mismatch(h.bytes.begin(), h.bytes.end(), found.begin());
      if (diff.first == h.bytes.end()) continue;
      return fmt::format(
          "verification failed: header of file {} (rank {}) at byte {}: expected 0x{:02x}, found "
          "0x{:02x}",
          h.file, plans[p].rank, diff.first - h.bytes.begin(),
          static_cast<unsigned char>(*diff.first), static_cast<unsigned char>(*diff.second));
    }
  }
  return "";
}

}  // namespace

// Verification runs in the buffer's memory space (device kernels for cuda, Kokkos kernels for
// kokkos); only the first wrong byte comes back.
std::string verify_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer,
                         DataPattern pattern) {
  std::vector<std::pair<std::size_t, std::size_t>> owner;
  const std::vector<PatternRange> ranges =
      shard_pattern_ranges(plans, buffer_offsets(plans, buffer), &owner);
  if (ranges.empty()) return "";
  const std::optional<Mismatch> bad = buffer.memory().first_mismatch(ranges, pattern);
  if (!bad) return header_problem(plans, buffer);
  const PatternRange& run = ranges[bad->range];
  const PlacedShard& ps = plans[owner[bad->range].first].shards[owner[bad->range].second];
  const std::uint64_t global_byte = run.global_offset + bad->offset;
  const auto element = static_cast<std::int64_t>(
      global_byte / static_cast<std::uint64_t>(ps.geometry.element_bytes));
  const std::uint64_t shard_byte = run.offset -
                                   buffer_offsets(plans, buffer)[owner[bad->range].first] -
                                   ps.memory_offset + bad->offset;
  // A resharded shard comes from several stored pieces: no one file to name.
  const std::string where =
      ps.file.empty() ? ""
                      : fmt::format(" (file {} offset {})", ps.file, ps.file_offset + shard_byte);
  return fmt::format(
      "verification failed: tensor {} ({}, rank {}) at global element {} (flat {}, shape {}), byte "
      "{} "
      "of the shard{}: expected 0x{:02x}, found 0x{:02x}",
      ps.shard.name, workloads::state_kind_name(ps.shard.state), ps.rank,
      global_index_text(ps.geometry.global_shape, element), element,
      fmt::format("[{}]", fmt::join(ps.geometry.global_shape, ", ")), shard_byte, where,
      expected_byte(pattern, run.key, global_byte), static_cast<unsigned>(bad->found));
}

std::vector<std::vector<std::uint64_t>> fill_plans(const std::vector<RankPlan>& plans,
                                                   ProcessBuffer& buffer, DataPattern pattern) {
  std::vector<std::vector<std::uint64_t>> checksums(plans.size());
  const std::vector<PatternRange> ranges =
      shard_pattern_ranges(plans, buffer_offsets(plans, buffer));
  if (ranges.empty()) return checksums;
  buffer.memory().fill(ranges, pattern);
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const FileHeader& h : plans[p].headers) {
      buffer.memory().copy_from_host(buffer.offset(p) + h.memory_offset,
                                     std::as_bytes(std::span(h.bytes)));
    }
  }
  return shard_checksums(plans, buffer);
}

std::vector<std::vector<std::uint64_t>> shard_checksums(const std::vector<RankPlan>& plans,
                                                        const ProcessBuffer& buffer) {
  std::vector<std::vector<std::uint64_t>> checksums(plans.size());
  // The manifest's checksums are of whole shards (a dim-1 slice is several pattern runs).
  std::vector<PatternRange> whole;
  const std::vector<std::uint64_t> offsets = buffer_offsets(plans, buffer);
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const PlacedShard& ps : plans[p].shards)
      whole.push_back({offsets[p] + ps.memory_offset, ps.bytes, ps.data_key});
  }
  if (whole.empty()) return checksums;
  const std::vector<std::uint64_t> sums = buffer.memory().checksums(whole);
  std::size_t next = 0;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    checksums[p].assign(sums.begin() + static_cast<std::ptrdiff_t>(next),
                        sums.begin() + static_cast<std::ptrdiff_t>(next + plans[p].shards.size()));
    next += plans[p].shards.size();
  }
  return checksums;
}

void retarget(std::vector<RankPlan>& plans, const std::filesystem::path& from,
              const std::filesystem::path& to) {
  if (from == to) return;
  for (RankPlan& p : plans) {
    for (auto& f : p.io.files)
      f.path = (to / std::filesystem::path(f.path).lexically_relative(from)).string();
  }
}

}  // namespace ckpt::harness
