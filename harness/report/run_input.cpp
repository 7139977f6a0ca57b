#include "harness/report/run_input.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "harness/common/elapsed.hpp"
#include "harness/common/json_input.hpp"
#include "harness/report/report_format.hpp"
#include "harness/results/schema_version.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string text_of(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A results file is read whole into cases; a line is one case's object. Both are far larger than
// anything ckptbench writes, and small enough that a hostile file cannot exhaust memory.
constexpr std::uint64_t kResultsFileBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kResultsLineBytes = std::uint64_t{16} << 20;
// Timed iterations of one case: campaign.iterations allows far fewer.
constexpr std::size_t kMaxSamples = std::size_t{1} << 20;
constexpr const char* kResultsFix = "is this a ckptbench results.jsonl (results/SCHEMA.md)?";

[[noreturn]] void refuse_version(const JsonSource& source, const std::string& problem) {
  throw ConfigError(source.file, source.line, "schema_version", problem);
}

// Refuses a record of a version this reader does not know: none is converted, so every key
// parse_case relies on is there with the meaning results/SCHEMA.md gives it for that version.
void require_known_version(const json& record, const JsonSource& source) {
  JsonField(record, source).object();
  const std::string reads = "this ckptbench reads schema_version " +
                            std::to_string(kOldestReadResultsSchemaVersion) + " to " +
                            std::to_string(kResultsSchemaVersion);
  const std::string again = "run the campaign again with this ckptbench (results/SCHEMA.md)";
  const auto it = record.find("schema_version");
  if (it == record.end() || it->is_null()) {
    refuse_version(
        source, "missing — written by a ckptbench from before results carried a schema version; " +
                    reads + " and converts no other: " + again);
  }
  const std::int64_t version =
      JsonField(*it, {source.file, source.line, reads + " (results/SCHEMA.md)"}, "schema_version")
          .integer();
  static_assert(kOldestReadResultsSchemaVersion == 1 && kResultsSchemaVersion == 5,
                "a case below for every version read");
  switch (version) {
    // Version 1 lacks what version 2 added (`integrity`, `dlio`, `mlperf`, `compression`,
    // `workload_hash`, the `tiered` engine, ...), versions 1 and 2 what version 3 added
    // (`selective`), versions 1 to 3 what version 4 added (delta chains, the memory tier, exchange
    // rounds, `first_byte_us`), versions 1 to 4 what version 5 added (`store_requests_max`, the
    // tier bytes): parse_case takes each as absent. What version 5 changed in meaning
    // (`store_requests` summed over processes, `replicas.held_bytes` with TP copies) the report
    // shows as recorded, not compared across versions.
    case 1:
    case 2:
    case 3:
    case 4:
    case kResultsSchemaVersion:
      return;
    default:
      refuse_version(
          source,
          version < kResultsSchemaVersion
              ? std::to_string(version) + " — " + reads + " and converts no other: " + again
              : std::to_string(version) + " — written by a newer ckptbench; " + reads +
                    ": read it with the ckptbench that wrote it (its environment.git_revision) "
                    "or " +
                    again);
  }
}

std::vector<double> seconds_list(const JsonField& samples, const char* key) {
  std::vector<double> out;
  const std::optional<JsonField> list = samples.find(key);
  if (!list) return out;
  for (const JsonField& v : list->elements(kMaxSamples)) out.push_back(v.non_negative());
  return out;
}

// {"open": 0.5, ...} of `parent`.<direction> (empty when absent).
std::map<std::string, double> number_map(const std::optional<JsonField>& parent,
                                         const char* direction) {
  std::map<std::string, double> out;
  if (!parent) return out;
  const std::optional<JsonField> map = parent->find(direction);
  if (!map) return out;
  for (const auto& [name, value] : map->members()) {
    // `counters` is the backend's request counts (an object), not a step's seconds.
    if (name == "counters") continue;
    if (!value.is_null()) out[name] = value.non_negative();
  }
  return out;
}

// `parent`.`key` as request counts (empty when absent).
RequestCounts request_counts(const std::optional<JsonField>& parent, const char* key) {
  RequestCounts out;
  if (!parent) return out;
  if (const std::optional<JsonField> counts = parent->find(key)) {
    for (const auto& [name, value] : counts->members()) out[name] = value.count();
  }
  return out;
}

std::optional<double> optional_seconds(const JsonField& j, const char* key) {
  const std::optional<JsonField> field = j.find(key);
  return field ? std::optional<double>(field->non_negative()) : std::nullopt;
}

CompressionRecord parse_compression(const JsonField& z) {
  CompressionRecord out{.codec = z.at("codec").string(),
                        .unit = z.at("unit").string(),
                        .level = z.at("level").integer(),
                        .threads = z.at("threads").integer(0),
                        .logical_bytes = z.at("logical_bytes").count(),
                        .stored_bytes = z.at("stored_bytes").count()};
  out.encode_seconds = optional_seconds(z, "encode_seconds");
  out.encode_cpu_seconds = optional_seconds(z, "encode_cpu_seconds");
  out.decode_seconds = optional_seconds(z, "decode_seconds");
  out.decode_cpu_seconds = optional_seconds(z, "decode_cpu_seconds");
  return out;
}

SelectiveRecord parse_selective(const JsonField& z) {
  SelectiveRecord out{.every = z.at("every").integer(1),
                      .experts = z.at("experts").integer(0),
                      .full_bytes = z.at("full_bytes").count()};
  if (const std::optional<JsonField> n = z.find("delta_every")) out.delta_every = n->integer(1);
  const JsonField samples = z.at("samples");
  for (const JsonField& b : samples.at("written_bytes").elements())
    out.written_bytes.push_back(b.count());
  for (const JsonField& name : samples.at("oldest_needed").elements())
    out.oldest_needed.push_back(name.string());
  if (const std::optional<JsonField> chain = samples.find("chain_length")) {
    for (const JsonField& n : chain->elements()) out.chain_length.push_back(n.integer(1));
  }
  if (const std::optional<JsonField> restore = z.find("restore"); restore && !restore->is_null()) {
    out.restored = restore->at("checkpoint").string();
    for (const JsonField& name : restore->at("read_from").elements())
      out.read_from.push_back(name.string());
    if (const std::optional<JsonField> n = restore->find("chain_length"))
      out.restore_chain_length = n->integer(1);
    if (const std::optional<JsonField> a = restore->find("amplification"); a && !a->is_null())
      out.amplification = a->non_negative();
  }
  return out;
}

json optional_object(const JsonField& j, const char* key, json otherwise) {
  const std::optional<JsonField> field = j.find(key);
  return field ? field->object() : otherwise;
}

// The value of a dotted campaign key in the swept keys, else in `config` (null when neither has
// it).
const json& lookup(const CaseRecord& c, const std::string& key) {
  static const json none;
  if (c.swept.contains(key)) return c.swept[key];
  const json* at = &c.config;
  for (std::size_t start = 0; start <= key.size();) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    if (!at->is_object()) return none;
    const auto it = at->find(key.substr(start, dot - start));
    if (it == at->end()) return none;
    at = &*it;
    start = dot + 1;
  }
  return at->is_object() ? none : *at;
}

}  // namespace

std::string CaseRecord::label() const {
  return swept_label(swept);
}

std::optional<std::string> CaseRecord::value_of(const std::string& key) const {
  if (key == "run") return run;  // --by run: one group per run
  const json& value = lookup(*this, key);
  if (value.is_null()) return std::nullopt;
  return text_of(value);
}

std::optional<double> CaseRecord::number_of(const std::string& key) const {
  const json& value = lookup(*this, key);
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

CaseRecord parse_case(const json& record, const JsonSource& source) {
  require_known_version(record, source);
  const JsonField j(record, source);
  CaseRecord c;
  // `case` is null when nothing is swept.
  if (!record.contains("case")) j.at("case");
  if (const auto swept = j.find("case")) c.swept = swept->object();
  c.status = j.at("status").string();
  c.bytes = j.at("bytes_per_checkpoint").count();
  if (const auto f = j.find("campaign")) c.campaign = f->string();
  if (const auto f = j.find("case_index")) c.case_index = f->integer(0);
  if (const auto f = j.find("backend")) c.backend = f->string();
  if (const auto f = j.find("config_hash")) c.config_hash = f->string();
  if (const auto f = j.find("workload_hash")) c.workload_hash = f->string();
  if (const auto f = j.find("stores_data")) c.stores_data = f->boolean();
  c.config = optional_object(j, "config", json::object());
  c.environment = optional_object(j, "environment", json::object());
  c.calibration = optional_object(j, "calibration", json());
  if (const auto samples = j.find("samples")) {
    c.write.seconds = seconds_list(*samples, "write_seconds");
    c.read.seconds = seconds_list(*samples, "read_seconds");
  }
  const std::optional<JsonField> phases = j.find("phases");
  c.write.phases = number_map(phases, "write");
  c.read.phases = number_map(phases, "read");
  for (const char* direction : {"write", "read"}) {
    if (!phases) break;
    RequestCounts counts = request_counts(phases->find(direction), "counters");
    if (!counts.empty()) c.requests.emplace(direction, std::move(counts));
  }
  if (RequestCounts store = request_counts(std::optional<JsonField>(j), "store_requests");
      !store.empty())
    c.requests.emplace("store", std::move(store));
  // An object store's wait from the commit until another process sees the checkpoint: shown
  // beside the write's phases.
  if (const std::vector<double> visible = seconds_list(j, "checkpoint_visible_seconds");
      !visible.empty())
    c.write.phases["visible"] = median(visible);
  if (const auto t = j.find("training")) {
    c.stall_seconds = optional_seconds(*t, "stall_seconds");
    c.time_to_durable_seconds = optional_seconds(*t, "time_to_durable_seconds");
    if (const auto engine = t->find("engine")) c.engine = engine->string();
    c.training = parse_training(*t);
    if (RequestCounts counts = request_counts(t, "counters"); !counts.empty())
      c.requests.emplace("training", std::move(counts));
  }
  if (const auto integrity = j.find("integrity")) {
    if (const auto warnings = integrity->find("warnings")) {
      for (const JsonField& w : warnings->elements()) c.integrity_warnings.push_back(w.string());
    }
  }
  if (const auto f = j.find("world_size")) c.world_size = f->integer();
  if (const auto f = j.find("full_scale_bytes_per_checkpoint")) c.full_scale_bytes = f->count();
  if (const std::optional<JsonField> z = j.find("compression"))
    c.compression = parse_compression(*z);
  if (const std::optional<JsonField> z = j.find("selective")) c.selective = parse_selective(*z);
  if (const std::optional<JsonField> q = j.find("quantized_weights")) {
    c.quantized = QuantizedRecord{.format = q->at("format").string(),
                                  .bytes = q->at("bytes").count(),
                                  .unquantized_bytes = q->at("unquantized_bytes").count()};
  }
  if (const std::optional<JsonField> latency = j.find("latency")) {
    for (const char* direction : {"write", "read"})
      c.latency.emplace(direction, number_map(latency, direction));
    std::erase_if(c.latency, [](const auto& entry) { return entry.second.empty(); });
  }
  return c;
}

RunRecord load_run(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw std::runtime_error(path.string() + ": no such run directory or results file");
  RunRecord run;
  run.file = fs::is_directory(path, ec) ? path / "results.jsonl" : path;
  if (!fs::is_regular_file(run.file, ec))
    throw std::runtime_error(path.string() + ": holds no results.jsonl");
  const fs::path dir = run.file.parent_path();
  run.name = fs::is_directory(path, ec)
                 ? fs::absolute(path).lexically_normal().filename().string()
                 : (run.file.filename() == "results.jsonl" && !dir.empty()
                        ? fs::absolute(dir).lexically_normal().filename().string()
                        : run.file.stem().string());
  if (run.name.empty()) run.name = run.file.string();
  if (fs::file_size(run.file, ec) > kResultsFileBytes && !ec) {
    throw std::runtime_error(run.file.string() + ": larger than the " +
                             std::to_string(kResultsFileBytes >> 30) +
                             " GiB a results file may be — " + kResultsFix);
  }
  std::ifstream in(run.file);
  if (!in) throw std::runtime_error(run.file.string() + ": cannot be read");
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const JsonSource source{run.file.string(), static_cast<std::int64_t>(line), kResultsFix};
    CaseRecord c =
        parse_case(parse_untrusted_json(text, source, {.max_bytes = kResultsLineBytes}), source);
    c.run = run.name;
    c.file = run.file;
    c.line = line;
    run.cases.push_back(std::move(c));
  }
  if (run.cases.empty()) throw std::runtime_error(run.file.string() + ": holds no cases");
  return run;
}

std::vector<double> bandwidth_samples(const CaseRecord& c, const DirectionRecord& d) {
  std::vector<double> out;
  for (double s : d.seconds) out.push_back(s > 0 ? static_cast<double>(c.bytes) / s / kGiB : 0.0);
  return out;
}

}  // namespace ckpt::harness
