#include "harness/report/console_reporter.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/common/elapsed.hpp"
#include "harness/common/text_format.hpp"
#include "harness/report/recovery_table.hpp"
#include "harness/report/run_input.hpp"
#include "harness/report/verdict.hpp"
#include "harness/results/dlio_metrics.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

// A [training] case's write column: its flush bandwidth (all processes' bytes / the slowest
// process's flush), median [min–max] over the committed checkpoints; "-" without one.
std::string flush_cell(const TrainingSummary& t, BandwidthUnit unit) {
  std::vector<double> values;
  for (const CheckpointRecord& c : t.checkpoints) {
    if (c.committed && c.flush_gib_s > 0) values.push_back(c.flush_gib_s * kGiB / unit_bytes(unit));
  }
  if (values.empty()) return "-";
  const double median = t.flush_gib_s() * kGiB / unit_bytes(unit);
  const int decimals = significant_decimals(median);
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  if (values.size() == 1) return fmt::format("{:.{}f}", median, decimals);
  return fmt::format("{:.{}f} [{:.{}f}–{:.{}f}]", median, decimals, *low, decimals, *high,
                     decimals);
}

// One table row's cells, in column order; `training`: with the stall and durable columns.
std::vector<std::string> row_cells(const CaseResult& r, BandwidthUnit unit, bool training) {
  std::vector<std::string> cells{std::to_string(r.config.index),
                                 swept_label(r.config.swept),
                                 format_bytes(static_cast<std::int64_t>(r.bytes_per_checkpoint)),
                                 std::to_string(r.files_per_checkpoint),
                                 !r.training     ? bandwidth_cell(r, r.write, unit)
                                 : r.stores_data ? flush_cell(*r.training, unit)
                                                 : "—",
                                 bandwidth_cell(r, r.read, unit)};
  if (training) {
    const bool has = r.training && r.training->committed_iteration >= 0;
    cells.push_back(has ? format_significant(r.training->stall_seconds()) : "-");
    cells.push_back(has ? format_significant(r.training->time_to_durable_seconds()) : "-");
  }
  cells.push_back(r.verified ? "yes" : "no");
  cells.push_back(r.status == "ok" ? r.status : r.status + ": " + r.error);
  return cells;
}

// Columns aligned right (numbers) or left (text): swept, verified and status are text; the last
// one is not padded.
bool right_aligned(std::size_t column, std::size_t columns) {
  return column != 1 && column + 2 < columns;
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], display_width(row[c]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      line += (c == 0 ? "" : "  ") + (right_aligned(c, row.size()) ? pad_left(row[c], width[c])
                                      : last                       ? row[c]
                                                                   : pad_right(row[c], width[c]));
    }
    fmt::print(out, "{}\n", line);
  }
}

// "model.scale = 128: shards 1/128 of full size", or nothing when every case is at full size.
std::string scale_note(const std::vector<CaseResult>& results) {
  std::set<std::int64_t> scales;
  for (const CaseResult& r : results) scales.insert(r.config.scale);
  if (scales.empty() || (scales.size() == 1 && *scales.begin() == 1)) return "";
  if (scales.size() == 1)
    return fmt::format("model.scale = {0}: shards 1/{0} of full size", *scales.begin());
  std::string list;
  for (std::int64_t s : scales) list += (list.empty() ? "" : ", ") + std::to_string(s);
  return fmt::format("model.scale differs per case ({}): shards 1/scale of full size", list);
}

// "—: backend null stores nothing; …", or nothing when every backend stores its data.
std::string no_data_note(const std::vector<CaseResult>& results) {
  std::set<std::string> backends;
  for (const CaseResult& r : results) {
    if (!r.stores_data) backends.insert(r.config.backend);
  }
  if (backends.empty()) return "";
  std::string list;
  for (const std::string& b : backends) list += (list.empty() ? "" : ", ") + b;
  return fmt::format("—: backend {} stores nothing; its times measure the harness's own overhead",
                     list);
}

// "case 2: restore TP4×PP8×DP1 from TP8×PP4×DP1, read exact: needed 1.2 GiB, read 1.2 GiB (1.00×),
// 96 requests (per rank 12 [12–12]), per-rank read 150 MiB [150 MiB–150 MiB]".
std::string reshard_line(const CaseResult& r) {
  const ReshardSummary& s = *r.reshard;
  const auto bytes = [](double b) { return format_bytes(static_cast<std::int64_t>(b)); };
  return fmt::format(
      "case {}: restore {} from {}, read {}: needed {}, read {} ({:.2f}×), {} requests (per rank "
      "{} "
      "[{}–{}]), per-rank read {} [{}–{}]{}",
      r.config.index, s.to, s.from, s.read, bytes(static_cast<double>(s.bytes_needed)),
      bytes(static_cast<double>(s.bytes_read)), s.amplification(), s.requests,
      s.rank_requests.median, s.rank_requests.min, s.rank_requests.max,
      bytes(s.rank_bytes_read.median), bytes(s.rank_bytes_read.min), bytes(s.rank_bytes_read.max),
      s.padding_bytes > 0
          ? ", vocabulary padding not stored " + bytes(static_cast<double>(s.padding_bytes))
          : "");
}

// "case 3: load pipelined (4 threads, O_DIRECT) into host, TP 4 from a TP 2 checkpoint (4 ranks):
// 120 MiB in 1,024 requests, time to loaded 0.41 s (median)".
std::string load_line(const CaseResult& r) {
  const LoadSummary& s = *r.load;
  const double loaded = s.time_to_loaded_seconds.empty() ? 0 : median(s.time_to_loaded_seconds);
  return fmt::format(
      "case {}: load {} ({} threads{}) into {}, TP {} from a TP {} checkpoint ({} ranks): {} in {} "
      "requests, time to loaded {} s (median){}",
      r.config.index, s.method, s.threads, s.direct ? ", O_DIRECT" : "", s.memory, s.tp,
      s.checkpoint_tp, s.ranks, format_bytes(static_cast<std::int64_t>(s.bytes)), s.requests,
      format_significant(loaded),
      r.config.memory_space == MemorySpaceKind::cuda && !s.h2d_seconds.empty()
          ? fmt::format(", h2d {} s inside it", format_significant(median(s.h2d_seconds)))
          : "");
}

// "case 2: compression bytegroup level 3 per shard (2 threads): stored 76.5 MiB of 100 MiB
// (1.31×), encode 0.41 s (CPU 0.8 s), decode 0.12 s (CPU 0.2 s) (medians)".
std::string compression_line(const CaseResult& r) {
  const CompressionSummary& z = *r.compression;
  const auto timed = [](const char* what, const std::vector<double>& wall,
                        const std::vector<double>& cpu) {
    if (wall.empty()) return std::string();
    return fmt::format(", {} {} s (CPU {} s)", what, format_significant(median(wall)),
                       format_significant(cpu.empty() ? 0.0 : median(cpu)));
  };
  const double ratio = z.stored_bytes > 0 ? static_cast<double>(z.logical_bytes) /
                                                static_cast<double>(z.stored_bytes)
                                          : 0.0;
  return fmt::format(
      "case {}: compression {} level {} per {} ({} threads): stored {} of {} ({:.2f}×){}{} "
      "(medians)",
      r.config.index, z.codec, z.level, z.unit, z.threads,
      format_bytes(static_cast<std::int64_t>(z.stored_bytes)),
      format_bytes(static_cast<std::int64_t>(z.logical_bytes)), ratio,
      timed("encode", z.encode_seconds, z.encode_cpu_seconds),
      timed("decode", z.decode_seconds, z.decode_cpu_seconds));
}

// "case 0: fp8_block weights: 1.60 MiB per checkpoint against 2.23 MiB unquantized, 655200 bytes
// (28.0 %) saved" (the whole job at model.scale = 1).
std::string quantized_weights_line(const CaseResult& r) {
  const QuantizedWeightsSummary& q = *r.quantized_weights;
  const double plain = static_cast<double>(q.unquantized_bytes);
  return fmt::format(
      "case {}: {} weights: {} per checkpoint against {} unquantized, {} bytes ({:.1f} %) saved",
      r.config.index, q.format, format_bytes(static_cast<std::int64_t>(q.bytes)),
      format_bytes(static_cast<std::int64_t>(q.unquantized_bytes)), q.unquantized_bytes - q.bytes,
      plain > 0 ? 100 * (plain - static_cast<double>(q.bytes)) / plain : 0.0);
}

// "case 2: selective every 3: wrote 33.6 MiB of 100 MiB per checkpoint (median 33.6 %), the
// newest needs step_0000001; restored step_0000003, also reading step_0000001, step_0000002".
std::string selective_line(const CaseResult& r) {
  const SelectiveSummary& z = *r.selective;
  std::string text =
      z.experts > 0
          ? fmt::format("case {}: partial experts, {} per checkpoint", r.config.index, z.experts)
      : z.delta_every > 1
          ? fmt::format("case {}: delta, full every {}", r.config.index, z.delta_every)
          : fmt::format("case {}: selective every {}", r.config.index, z.every);
  if (!z.written_bytes.empty()) {
    std::vector<double> written(z.written_bytes.begin(), z.written_bytes.end());
    const double bytes = median(written);
    text += fmt::format(": wrote {} of {} per checkpoint (median {:.1f} %), the newest needs {}",
                        format_bytes(static_cast<std::int64_t>(bytes)),
                        format_bytes(static_cast<std::int64_t>(z.full_bytes)),
                        z.full_bytes > 0 ? 100 * bytes / static_cast<double>(z.full_bytes) : 0.0,
                        z.oldest_needed.back());
  }
  if (!z.restored.empty()) {
    text += "; restored " + z.restored +
            (z.restored_from.empty() ? " (it holds every piece)" : ", also reading ");
    for (std::size_t i = 0; i < z.restored_from.size(); ++i)
      text += (i == 0 ? "" : ", ") + z.restored_from[i];
    if (z.full_bytes > 0)
      text += fmt::format(
          " (chain of {}, read {:.2f} bytes per byte restored)", z.restore_chain_length,
          static_cast<double>(z.restore_read_bytes) / static_cast<double>(z.full_bytes));
  }
  return text;
}

std::string seconds_with_unit(double seconds) {
  return format_significant(seconds) + " s";
}

}  // namespace

void ConsoleReporter::begin(const RunInfo&) {
  results_.clear();
}

void ConsoleReporter::add(const CaseResult& result) {
  results_.push_back(result);
}

void ConsoleReporter::end() {
  print_summary(out_, results_, unit_);
}

std::string wall_time_line(const CaseResult& r) {
  std::string parts;
  for (const auto& [part, seconds] : r.wall.parts)
    parts += (parts.empty() ? "" : ", ") + part + " " + seconds_with_unit(seconds);
  // Rounded down: 100% only when nothing is left over.
  const double percent = std::floor(r.wall.covered_percent() * 10) / 10;
  return fmt::format("case {}: phases cover {:.1f}% of the {} wall time ({})", r.config.index,
                     percent, seconds_with_unit(r.wall.seconds), parts);
}

namespace {

// Megatron's distributed-optimizer gather (phases.write.gather), or "" when the case has none.
std::string gather_line(const CaseResult& r) {
  if (!r.write || r.write->iteration_gather.empty()) return "";
  return fmt::format(
      "case {}: gather of the DP shards onto DP rank 0 {} (median, before the write, not in its "
      "time): "
      "{} over MPI, {} copied inside processes",
      r.config.index, seconds_with_unit(r.write->gather_seconds),
      format_bytes(static_cast<std::int64_t>(r.write->gather_bytes)),
      format_bytes(static_cast<std::int64_t>(r.write->gather_local_bytes)));
}

// DLIO's metric (MLPerf Storage's) beside ckptbench's aggregate, one line per direction; the
// MLPerf rules checker's label for an [mlperf] case.
std::vector<std::string> mlperf_lines(const CaseResult& r, BandwidthUnit unit) {
  std::vector<std::string> lines;
  const double per_gib = unit == BandwidthUnit::gib ? 1.0 : 1.073741824;
  const std::string u = unit_label(unit);
  for (const auto& [name, phase] : {std::pair{"write", &r.write}, std::pair{"read", &r.read}}) {
    if (!phase->has_value()) continue;
    const DlioMetrics m =
        dlio_metrics(r.bytes_per_checkpoint, (*phase)->iteration_process0_seconds);
    if (m.gib_per_s.empty()) continue;
    lines.push_back(fmt::format(
        "case {}: {} DLIO/MLPerf {:.3f} +- {:.3f} {} (mean +- stdev over {} checkpoints of bytes / "
        "process 0's time), ckptbench {:.3f} {} (median of all bytes / (latest end - earliest "
        "start))",
        r.config.index, name, m.mean_gib_per_s * per_gib, m.stdev_gib_per_s * per_gib, u,
        m.gib_per_s.size(), (*phase)->gib_per_s * per_gib, u));
  }
  if (r.config.mlperf && r.mlperf) {
    lines.push_back(fmt::format("case {}: MLPerf Storage {} ({} division): {}", r.config.index,
                                r.config.mlperf->model, r.config.mlperf->division,
                                r.mlperf->label));
    for (const std::string& reason : r.mlperf->reasons) lines.push_back("  " + reason);
  }
  return lines;
}

// The report's verdict over these results, read back from their records as `ckptbench report`
// reads results.jsonl, so that both say the same. "" when there is nothing to compare.
std::string verdict_line(const std::vector<CaseResult>& results, BandwidthUnit unit) {
  RunRecord run;
  run.name = "run";
  for (const CaseResult& r : results)
    run.cases.push_back(parse_case(to_json(r), {"the run's results", 0, ""}));
  return verdict(build_report({std::move(run)}, {}), unit);
}

}  // namespace

void print_summary(std::ostream& out, const std::vector<CaseResult>& results, BandwidthUnit unit) {
  if (results.empty()) return;
  const std::string u = unit_label(unit);
  // [training] cases add the loop's stall and time to durable (medians over checkpoints).
  const bool training =
      std::any_of(results.begin(), results.end(), [](const CaseResult& r) { return r.training; });
  std::vector<std::string> header{"case",  "swept",      "checkpoint",
                                  "files", "write " + u, "read " + u};
  if (training) header.insert(header.end(), {"stall s", "durable s"});
  header.insert(header.end(), {"verified", "status"});
  std::vector<std::vector<std::string>> rows{header};
  for (const CaseResult& r : results) rows.push_back(row_cells(r, unit, training));
  fmt::print(out, "\n");
  print_table(out, rows);
  fmt::print(out, "\nwrite and read: median [min–max] over the timed iterations; {} = {} bytes/s\n",
             u, unit == BandwidthUnit::gib ? "2^30" : "10^9");
  if (training) {
    fmt::print(out,
               "stall: the training loop blocked per checkpoint; durable: checkpoint due -> "
               "manifest committed "
               "(medians over checkpoints); write of a [training] case: its flush bandwidth, "
               "median [min–max] over "
               "checkpoints\n");
  }
  for (const std::string& note : {scale_note(results), no_data_note(results)}) {
    if (!note.empty()) fmt::print(out, "{}\n", note);
  }
  for (const CaseResult& r : results) {
    if (r.reshard) fmt::print(out, "{}\n", reshard_line(r));
    if (r.load) fmt::print(out, "{}\n", load_line(r));
    if (r.compression) fmt::print(out, "{}\n", compression_line(r));
    if (r.selective) fmt::print(out, "{}\n", selective_line(r));
    if (r.quantized_weights) fmt::print(out, "{}\n", quantized_weights_line(r));
  }
  for (const CaseResult& r : results) {
    if (const std::string line = gather_line(r); !line.empty()) fmt::print(out, "{}\n", line);
  }
  for (const CaseResult& r : results) {
    if (r.training && r.training->recovery)
      fmt::print(out, "case {}: {}\n", r.config.index, recovery_text(*r.training->recovery));
  }
  for (const CaseResult& r : results) {
    for (const std::string& line : mlperf_lines(r, unit)) fmt::print(out, "{}\n", line);
  }
  for (const CaseResult& r : results) {
    for (const std::string& warning : integrity_warnings(integrity_inputs(r)))
      fmt::print(out, "case {}: integrity warning: {}\n", r.config.index, warning);
  }
  for (const CaseResult& r : results) fmt::print(out, "{}\n", wall_time_line(r));
  if (const std::string line = verdict_line(results, unit); !line.empty())
    fmt::print(out, "summary: {}\n", line);
}

}  // namespace ckpt::harness
