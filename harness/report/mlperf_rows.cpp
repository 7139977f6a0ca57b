#include "harness/report/mlperf_rows.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <cstdio>
#include <ctime>

#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSummaryFix =
    "is this a DLIO summary.json of an MLPerf Storage checkpointing run?";
constexpr const char* kTableFix = "is this a table of MLPerf rows (ckptbench mlperf import)?";
constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;

// One summary.json as far as a row needs it.
struct Summary {
  std::string file;
  std::int64_t hosts = 0, accelerators = 0;
  double checkpoint_gib = 0;
  std::optional<double> write_gib_per_s, write_seconds, read_gib_per_s, read_seconds;
  std::string start, end, model, label, storage;
};

std::optional<double> optional_number(const JsonField& j, const char* key) {
  const std::optional<JsonField> f = j.find(key);
  return f ? std::optional<double>(f->non_negative()) : std::nullopt;
}

std::string optional_text(const std::optional<JsonField>& j, const char* key) {
  if (!j) return "";
  const std::optional<JsonField> f = j->find(key);
  return f ? f->string() : "";
}

// A directory stands for the one *summary.json in it.
fs::path summary_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().filename().string().ends_with("summary.json")) found.push_back(entry.path());
  }
  if (found.size() == 1) return found.front();
  throw std::runtime_error(fmt::format("{}: holds {} *summary.json files; name the one to read",
                                       path.string(), found.size()));
}

Summary read_summary(const fs::path& path) {
  const JsonSource source{path.string(), 0, kSummaryFix};
  const nlohmann::json doc = read_untrusted_json_file(path, source);
  const JsonField j(doc, source);
  const JsonField metric = j.at("metric");
  Summary s;
  s.file = path.string();
  s.hosts = j.at("num_hosts").integer(1, kMaxCount);
  s.accelerators = j.at("num_accelerators").integer(1, kMaxCount);
  s.checkpoint_gib = metric.at("checkpoint_size_GB").non_negative();
  s.write_gib_per_s = optional_number(metric, "save_checkpoint_io_mean_GB_per_second");
  s.write_seconds = optional_number(metric, "save_checkpoint_duration_mean_seconds");
  s.read_gib_per_s = optional_number(metric, "load_checkpoint_io_mean_GB_per_second");
  s.read_seconds = optional_number(metric, "load_checkpoint_duration_mean_seconds");
  if (!s.write_gib_per_s && !s.read_gib_per_s)
    metric.fail("has neither save_ nor load_checkpoint_io_mean_GB_per_second: no checkpoint ran");
  s.start = j.at("start").string();
  s.end = j.at("end").string();
  const std::optional<JsonField> ours = j.find("ckptbench");  // written by ckptbench
  s.model = optional_text(ours, "mlperf_model");
  s.label = optional_text(ours, "label");
  s.storage = optional_text(ours, "storage");
  return s;
}

std::optional<double> mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

void require_same(const Summary& first, const Summary& other) {
  const auto differ = [&](const char* key, const std::string& a, const std::string& b) {
    throw ConfigError(
        other.file, 0, key,
        fmt::format("{} here, {} in {}: the files are of different runs", b, a, first.file));
  };
  if (other.hosts != first.hosts)
    differ("num_hosts", std::to_string(first.hosts), std::to_string(other.hosts));
  if (other.accelerators != first.accelerators)
    differ("num_accelerators", std::to_string(first.accelerators),
           std::to_string(other.accelerators));
  if (std::fabs(other.checkpoint_gib - first.checkpoint_gib) > 1e-9 * first.checkpoint_gib)
    differ("metric.checkpoint_size_GB", fmt::format("{}", first.checkpoint_gib),
           fmt::format("{}", other.checkpoint_gib));
}

// "2026-07-18T01:24:16.352638" as seconds since the epoch (UTC); nullopt when it is not one.
std::optional<double> dlio_seconds(const std::string& text) {
  std::tm t{};
  double seconds = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lf", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour,
                  &t.tm_min, &seconds) != 6)
    return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<double>(::timegm(&t)) + seconds;
}

std::string rate_cell(const std::optional<double>& value, std::int64_t divisor = 1) {
  if (!value) return "-";
  const double v = *value / static_cast<double>(divisor);
  return fmt::format("{:.{}f}", v, significant_decimals(v));
}

}  // namespace

MlperfRow row_from_summaries(const std::vector<fs::path>& files) {
  std::vector<Summary> summaries;
  for (const fs::path& f : files) summaries.push_back(read_summary(summary_file(f)));
  if (summaries.empty()) throw std::runtime_error("no summary.json to import");
  MlperfRow row;
  const Summary& first = summaries.front();
  std::vector<double> wr, ws, rr, rs;
  std::vector<const Summary*> writers, readers;
  for (const Summary& s : summaries) {
    require_same(first, s);
    if (s.write_gib_per_s) {
      wr.push_back(*s.write_gib_per_s);
      if (s.write_seconds) ws.push_back(*s.write_seconds);
      writers.push_back(&s);
    }
    if (s.read_gib_per_s) {
      rr.push_back(*s.read_gib_per_s);
      if (s.read_seconds) rs.push_back(*s.read_seconds);
      readers.push_back(&s);
    }
    row.sources.push_back(s.file);
    if (row.model.empty()) row.model = s.model;
    if (row.division.empty()) row.division = s.label;
    if (row.storage.empty()) row.storage = s.storage;
  }
  row.hosts = first.hosts;
  row.accelerators = first.accelerators;
  row.checkpoint_gib = first.checkpoint_gib;
  row.write_gib_per_s = mean_of(wr);
  row.write_seconds = mean_of(ws);
  row.read_gib_per_s = mean_of(rr);
  row.read_seconds = mean_of(rs);
  if (writers.size() == 1 && readers.size() == 1 && writers[0] != readers[0]) {
    row.write_end = writers[0]->end;
    row.read_start = readers[0]->start;
  }
  return row;
}

nlohmann::json to_json(const MlperfRow& r) {
  const auto number = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"id", r.id},
          {"organization", r.organization},
          {"system", r.system},
          {"storage", r.storage},
          {"division", r.division},
          {"model", r.model},
          {"hosts", r.hosts},
          {"accelerators", r.accelerators},
          {"checkpoint_gib", r.checkpoint_gib},
          {"write_gib_per_s", number(r.write_gib_per_s)},
          {"write_seconds", number(r.write_seconds)},
          {"read_gib_per_s", number(r.read_gib_per_s)},
          {"read_seconds", number(r.read_seconds)},
          {"write_end", r.write_end},
          {"read_start", r.read_start},
          {"sources", r.sources}};
}

MlperfTable load_mlperf_table(const fs::path& path) {
  const JsonSource source{path.string(), 0, kTableFix};
  const nlohmann::json doc = read_untrusted_json_file(path, source);
  const JsonField j(doc, source);
  MlperfTable table;
  table.source = j.at("source").string();
  for (const JsonField& f : j.at("rows").elements()) {
    MlperfRow r;
    r.id = f.at("id").string();
    r.organization = f.at("organization").string();
    r.system = f.at("system").string();
    r.storage = f.at("storage").string();
    r.division = f.at("division").string();
    r.model = f.at("model").string();
    r.hosts = f.at("hosts").integer(1, kMaxCount);
    r.accelerators = f.at("accelerators").integer(1, kMaxCount);
    r.checkpoint_gib = f.at("checkpoint_gib").non_negative();
    r.write_gib_per_s = optional_number(f, "write_gib_per_s");
    r.write_seconds = optional_number(f, "write_seconds");
    r.read_gib_per_s = optional_number(f, "read_gib_per_s");
    r.read_seconds = optional_number(f, "read_seconds");
    if (const auto e = f.find("write_end")) r.write_end = e->string();
    if (const auto s = f.find("read_start")) r.read_start = s->string();
    for (const JsonField& s : f.at("sources").elements()) r.sources.push_back(s.string());
    for (const MlperfRow& other : table.rows) {
      if (other.id == r.id) f.at("id").fail("\"" + r.id + "\" names two rows");
    }
    table.rows.push_back(std::move(r));
  }
  return table;
}

std::optional<double> invocation_gap_seconds(const MlperfRow& row) {
  const std::optional<double> end = dlio_seconds(row.write_end);
  const std::optional<double> start = dlio_seconds(row.read_start);
  if (!end || !start) return std::nullopt;
  return *start - *end;
}

void print_side_by_side(const MlperfRow& local, const std::vector<MlperfRow>& published,
                        const std::string& table_source, bool markdown, std::ostream& out) {
  Table table(
      {"system", "storage", "division", "hosts", "accel.", "ckpt GiB", "write GiB/s", "/host",
       "/accel.", "write s", "read GiB/s", "/host", "/accel.", "read s"},
      {false, false, false, true, true, true, true, true, true, true, true, true, true, true});
  const auto add = [&](const MlperfRow& r, const std::string& name) {
    table.add({name, r.storage, r.division, std::to_string(r.hosts), std::to_string(r.accelerators),
               rate_cell(r.checkpoint_gib), rate_cell(r.write_gib_per_s),
               rate_cell(r.write_gib_per_s, r.hosts), rate_cell(r.write_gib_per_s, r.accelerators),
               rate_cell(r.write_seconds), rate_cell(r.read_gib_per_s),
               rate_cell(r.read_gib_per_s, r.hosts), rate_cell(r.read_gib_per_s, r.accelerators),
               rate_cell(r.read_seconds)});
  };
  add(local, "this run: " + local.system);
  for (const MlperfRow& r : published) add(r, r.id + ": " + r.organization + " " + r.system);
  fmt::print(out, "MLPerf Storage {} checkpointing, DLIO's metric\n\n",
             local.model.empty() ? std::string("(model unknown)") : local.model);
  table.print(out, markdown);
  fmt::print(out,
             "\nComparable: every GiB/s above is DLIO's, the mean over the checkpoints of one "
             "checkpoint's bytes / rank 0's duration (ckptbench: process 0's); /host and /accel. "
             "divide it by the client hosts and the simulated accelerators (processes). "
             "ckptbench's own aggregate (all bytes / (latest end - earliest start)) is in "
             "results.jsonl and is not what MLPerf publishes.\n");
  for (const MlperfRow& r : published) {
    if (r.model != local.model)
      fmt::print(out, "Not comparable: {} is {}, this run {}.\n", r.id, r.model, local.model);
    else if (std::fabs(r.checkpoint_gib - local.checkpoint_gib) > 1e-4 * r.checkpoint_gib)
      fmt::print(out,
                 "Not the same work: {} wrote {} GiB per checkpoint, this run {} GiB "
                 "(model.scale, subset mode or ranks.select): its totals are not this run's; "
                 "/accel. is the nearer comparison, and still not an equal one.\n",
                 r.id, rate_cell(r.checkpoint_gib), rate_cell(local.checkpoint_gib));
  }
  if (local.division == "non-compliant")
    fmt::print(out,
               "This run is labelled non-compliant by ckptbench's rules checker (results.jsonl "
               "mlperf.reasons): no published row is its equal.\n");
  else if (!local.division.empty())
    fmt::print(out,
               "This run is labelled {} by ckptbench's rules checker, which checks the rules "
               "docs/mlperf.md lists; the published rows also passed MLPerf's review.\n",
               local.division);
  if (const std::optional<double> gap = invocation_gap_seconds(local)) {
    fmt::print(out,
               "Two invocations: the read started {:.1f} s after the write ended (Rules.md 4.7.1: "
               "within 30 s): {}.\n",
               *gap, *gap <= 30 ? "met" : "NOT met");
  }
  fmt::print(out, "Published rows: {}\n", table_source);
}

}  // namespace ckpt::harness
