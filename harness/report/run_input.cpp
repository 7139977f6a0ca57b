#include "harness/report/run_input.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "harness/common/elapsed.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string text_of(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::vector<double> number_list(const json& j, const char* key, const std::string& where) {
  std::vector<double> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array()) throw std::runtime_error(where + ": samples." + key + " is not an array");
  for (const json& v : j[key]) {
    if (!v.is_number()) throw std::runtime_error(where + ": samples." + key + " holds a non-number");
    out.push_back(v.get<double>());
  }
  return out;
}

std::map<std::string, double> phase_map(const json& phases, const char* direction) {
  std::map<std::string, double> out;
  if (!phases.is_object() || !phases.contains(direction) || !phases[direction].is_object()) return out;
  for (const auto& [name, value] : phases[direction].items()) {
    if (value.is_number()) out[name] = value.get<double>();
  }
  return out;
}

std::optional<double> optional_number(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

// The value of a dotted campaign key in the swept keys, else in `config` (null when neither has it).
const json& lookup(const CaseRecord& c, const std::string& key) {
  static const json none;
  if (c.swept.contains(key)) return c.swept[key];
  std::string pointer = "/" + key;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  const json::json_pointer ptr(pointer);
  return c.config.contains(ptr) && !c.config[ptr].is_object() ? c.config[ptr] : none;
}

}  // namespace

std::string CaseRecord::label() const { return swept_label(swept); }

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

CaseRecord parse_case(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": not a JSON object");
  for (const char* key : {"case", "status", "bytes_per_checkpoint"}) {
    if (!j.contains(key)) throw std::runtime_error(where + ": no `" + key + "` field (is this a ckptbench results.jsonl?)");
  }
  if (!j["bytes_per_checkpoint"].is_number_unsigned()) throw std::runtime_error(where + ": bytes_per_checkpoint is not a byte count");
  CaseRecord c;
  c.swept = j["case"].is_object() ? j["case"] : json::object();
  c.status = text_of(j["status"]);
  c.bytes = j["bytes_per_checkpoint"].get<std::uint64_t>();
  c.case_index = j.value("case_index", std::int64_t{0});
  c.backend = j.value("backend", std::string());
  c.config_hash = j.value("config_hash", std::string());
  c.stores_data = j.value("stores_data", true);
  if (j.contains("config") && j["config"].is_object()) c.config = j["config"];
  if (j.contains("environment") && j["environment"].is_object()) c.environment = j["environment"];
  if (j.contains("calibration") && j["calibration"].is_object()) c.calibration = j["calibration"];
  const json samples = j.value("samples", json::object());
  if (!samples.is_object()) throw std::runtime_error(where + ": samples is not an object");
  c.write.seconds = number_list(samples, "write_seconds", where);
  c.read.seconds = number_list(samples, "read_seconds", where);
  const json phases = j.value("phases", json::object());
  c.write.phases = phase_map(phases, "write");
  c.read.phases = phase_map(phases, "read");
  if (j.contains("training") && j["training"].is_object()) {
    const json& t = j["training"];
    c.stall_seconds = optional_number(t, "stall_seconds");
    c.time_to_durable_seconds = optional_number(t, "time_to_durable_seconds");
    c.engine = t.value("engine", std::string());
  }
  if (j.contains("world_size") && j["world_size"].is_number_integer()) c.world_size = j["world_size"].get<std::int64_t>();
  if (j.contains("full_scale_bytes_per_checkpoint") && j["full_scale_bytes_per_checkpoint"].is_number_unsigned()) {
    c.full_scale_bytes = j["full_scale_bytes_per_checkpoint"].get<std::uint64_t>();
  }
  if (j.contains("latency") && j["latency"].is_object()) {
    for (const char* direction : {"write", "read"}) c.latency.emplace(direction, phase_map(j["latency"], direction));
    std::erase_if(c.latency, [](const auto& entry) { return entry.second.empty(); });
  }
  if (!c.stall_seconds) c.stall_seconds = optional_number(j, "stall_seconds");
  if (!c.time_to_durable_seconds) c.time_to_durable_seconds = optional_number(j, "time_to_durable_seconds");
  return c;
}

RunRecord load_run(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw std::runtime_error(path.string() + ": no such run directory or results file");
  RunRecord run;
  run.file = fs::is_directory(path, ec) ? path / "results.jsonl" : path;
  if (!fs::is_regular_file(run.file, ec)) throw std::runtime_error(path.string() + ": holds no results.jsonl");
  const fs::path dir = run.file.parent_path();
  run.name = fs::is_directory(path, ec) ? fs::absolute(path).lexically_normal().filename().string()
                                        : (run.file.filename() == "results.jsonl" && !dir.empty() ? fs::absolute(dir).lexically_normal().filename().string()
                                                                                                  : run.file.stem().string());
  if (run.name.empty()) run.name = run.file.string();
  std::ifstream in(run.file);
  if (!in) throw std::runtime_error(run.file.string() + ": cannot be read");
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = run.file.string() + ":" + std::to_string(line);
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      throw std::runtime_error(where + ": not JSON (" + e.what() + ")");
    }
    CaseRecord c = parse_case(j, where);
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
