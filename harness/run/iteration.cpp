#include "harness/run/iteration.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/memory/data_pattern.hpp"

namespace ckpt::harness {
namespace {

using Clock = std::chrono::steady_clock;

void add_phases(backends::PhaseTimes& sum, const backends::PhaseTimes& more) {
  sum.open += more.open;
  sum.transfer += more.transfer;
  sum.sync += more.sync;
  sum.close += more.close;
}

}  // namespace

Spread spread(const std::vector<double>& values) {
  if (values.empty()) return {};
  return {*std::min_element(values.begin(), values.end()), median(values),
          *std::max_element(values.begin(), values.end())};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {

void add_outcome(ProcessSample& sample, const backends::IoOutcome& outcome) {
  add_phases(sample.phases, outcome.phases);
  for (const std::string& note : outcome.notes) {
    if (std::find(sample.notes.begin(), sample.notes.end(), note) == sample.notes.end()) sample.notes.push_back(note);
  }
}

// A collective backend: one call with the whole process's share, made even with no ranks.
void transfer_process(backends::Backend& backend, const std::vector<RankPlan>& plans, const ProcessBuffer& buffer,
                      bool write, ProcessSample& sample) {
  const backends::IoPlan plan = process_plan(plans, buffer);
  const backends::IoOutcome outcome = write ? backend.write(plan, buffer.view()) : backend.read(plan, buffer.view());
  add_outcome(sample, outcome);
  sample.rank_seconds.assign(plans.size(), outcome.phases.total());
  if (!outcome.ok()) {
    sample.error = plans.empty() ? *outcome.error
                                 : fmt::format("ranks {}-{}: {}", plans.front().rank, plans.back().rank, *outcome.error);
  }
}

}  // namespace

ProcessSample timed_transfer(backends::Backend& backend, const std::vector<RankPlan>& plans,
                             const ProcessBuffer& buffer, bool write, Comm& comm) {
  ProcessSample sample;
  const bool collective = backend.capabilities().collective;
  comm.barrier();
  const auto start = Clock::now();
  if (collective) {
    transfer_process(backend, plans, buffer, write, sample);
  } else {
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const backends::IoOutcome outcome =
          write ? backend.write(plans[i].io, buffer.rank_view(i)) : backend.read(plans[i].io, buffer.rank_view(i));
      add_outcome(sample, outcome);
      sample.rank_seconds.push_back(outcome.phases.total());
      if (!outcome.ok()) {
        sample.error = fmt::format("rank {}: {}", plans[i].rank, *outcome.error);
        break;
      }
    }
  }
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return sample;
}

IterationTiming gather_timing(const ProcessSample& mine, Comm& comm) {
  const nlohmann::json j{{"s", mine.seconds}, {"o", mine.phases.open}, {"t", mine.phases.transfer},
                         {"y", mine.phases.sync}, {"c", mine.phases.close}, {"e", mine.error},
                         {"r", mine.rank_seconds}, {"n", mine.notes}};
  IterationTiming timing;
  std::vector<double> seconds;
  std::vector<double> ranks;
  for (const std::string& text : comm.gather(j.dump())) {
    const auto p = nlohmann::json::parse(text);
    for (double r : p.at("r")) ranks.push_back(r);
    for (const auto& n : p.at("n")) {
      const auto note = n.get<std::string>();
      if (std::find(timing.notes.begin(), timing.notes.end(), note) == timing.notes.end()) timing.notes.push_back(note);
    }
    const double s = p.at("s").get<double>();
    seconds.push_back(s);
    if (s >= timing.seconds) {
      timing.seconds = s;
      timing.phases = {p.at("o").get<double>(), p.at("t").get<double>(), p.at("y").get<double>(),
                       p.at("c").get<double>()};
    }
    if (timing.first_error.empty()) timing.first_error = p.at("e").get<std::string>();
  }
  timing.process_seconds = spread(seconds);
  timing.rank_seconds = spread(ranks);
  return timing;
}

std::string verify_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer, DataPattern pattern) {
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const PlacedShard& ps : plans[p].shards) {
      const std::byte* data = buffer.rank_data(p) + ps.memory_offset;
      const auto bad = first_mismatch(data, ps.bytes, pattern, ps.data_key);
      if (!bad) continue;
      return fmt::format("verification failed: tensor {} ({}, rank {}) at byte {} (file {} offset {}): expected 0x{:02x}, "
                         "found 0x{:02x}",
                         ps.shard.name, workloads::state_kind_name(ps.shard.state), ps.rank, *bad, ps.file,
                         ps.file_offset + *bad, expected_byte(pattern, ps.data_key, *bad),
                         static_cast<unsigned>(data[*bad]));
    }
  }
  return "";
}

std::vector<std::vector<std::uint64_t>> fill_plans(const std::vector<RankPlan>& plans, ProcessBuffer& buffer,
                                                   DataPattern pattern) {
  std::vector<std::vector<std::uint64_t>> checksums(plans.size());
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const PlacedShard& ps : plans[p].shards) {
      std::byte* data = buffer.rank_data(p) + ps.memory_offset;
      fill_pattern(data, ps.bytes, pattern, ps.data_key);
      checksums[p].push_back(checksum64(data, ps.bytes));
    }
  }
  return checksums;
}

}  // namespace ckpt::harness
