#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/common/json_input.hpp"
#include "harness/report/training_record.hpp"

namespace ckpt::harness {

// One direction (write = checkpoint, read = restore) of a case as results.jsonl records it.
struct DirectionRecord {
  std::vector<double> seconds;           // samples: aggregate time of every timed iteration
  std::map<std::string, double> phases;  // phases.<write|read>: median seconds per phase
  bool ran() const { return !seconds.empty(); }
};

// One line of a results.jsonl (results/SCHEMA.md), with what report and compare read of it.
// strategy.compression's figures (the results' `compression` object): bytes of one checkpoint,
// median seconds (nullopt when the case ran no such step).
struct CompressionRecord {
  std::string codec, unit;
  std::int64_t level = 0;
  std::int64_t threads = 0;
  std::uint64_t logical_bytes = 0, stored_bytes = 0;
  std::optional<double> encode_seconds, encode_cpu_seconds, decode_seconds, decode_cpu_seconds;
};

// strategy.selective_every, partial_experts, delta_every (the results' `selective` object).
struct SelectiveRecord {
  std::int64_t every = 1;
  std::int64_t experts = 0;
  std::int64_t delta_every = 1;
  std::uint64_t full_bytes = 0;
  std::vector<std::uint64_t> written_bytes;  // per timed checkpoint
  std::vector<std::string> oldest_needed;    // per timed checkpoint
  std::vector<std::int64_t> chain_length;    // per timed checkpoint (absent in older records)
  std::string restored;                      // a restore's checkpoint ("" in a write)
  std::vector<std::string> read_from;        // the earlier checkpoints it read, oldest first
  std::int64_t restore_chain_length = 0;     // 0: not recorded
  std::optional<double> amplification;       // a restore's bytes read / bytes restored
};

// model.weights other than unquantized (the results' `quantized_weights` object).
struct QuantizedRecord {
  std::string format;
  std::uint64_t bytes = 0, unquantized_bytes = 0;
};

// A backend's request counts (`phases.<direction>.counters`, `training.counters`,
// `store_requests`): "requests.put", "retries", "backoff_us", ... summed over every process.
using RequestCounts = std::map<std::string, std::uint64_t>;

struct CaseRecord {
  std::string run;             // the run it came from (its directory's name)
  std::string campaign;        // campaign.name ("" in results that lack it)
  std::filesystem::path file;  // the results.jsonl
  std::size_t line = 0;        // 1-based line in it
  std::int64_t case_index = 0;
  nlohmann::json swept = nlohmann::json::object();  // `case`: swept keys and values
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json environment = nlohmann::json::object();
  std::string status;
  std::string backend;
  std::string config_hash;
  std::string workload_hash;  // "" in results that lack it
  std::uint64_t bytes = 0;    // bytes_per_checkpoint
  bool stores_data = true;
  DirectionRecord write;
  DirectionRecord read;
  std::optional<double> stall_seconds;            // async engines: training.stall_seconds
  std::optional<double> time_to_durable_seconds;  // training.time_to_durable_seconds
  std::string engine;                             // training.engine ("" without one)
  std::optional<TrainingRecord> training;         // the loop's checkpoints and timestamps
  nlohmann::json calibration;  // measure.calibration's record (null without one): ckptbench gate
  // For `project` (absent in results that lack them): world_size, full_scale_bytes_per_checkpoint.
  std::optional<std::int64_t> world_size;
  std::optional<std::uint64_t> full_scale_bytes;
  // measure.latency: latency.<write|read>.<field> (requests, p50_seconds, ...); empty when off.
  std::map<std::string, std::map<std::string, double>> latency;
  std::vector<std::string>
      integrity_warnings;  // integrity.warnings (empty in results that lack it)
  std::optional<CompressionRecord> compression;  // absent for cases that compress nothing
  std::optional<SelectiveRecord> selective;      // absent for cases that rotate nothing
  std::optional<QuantizedRecord> quantized;      // absent for unquantized weights
  // Request counts by where they were made: "write", "read", "training" (the loop's
  // checkpoints) and "store" (the checkpoint store's own); empty for backends that count none.
  std::map<std::string, RequestCounts> requests;

  // "strategy.mapping=file_per_rank" ("-" when nothing is swept).
  std::string label() const;
  // A campaign key's value as text: from the swept keys, else from `config` ("a.b" -> /a/b);
  // nullopt when the case has no such key.
  std::optional<std::string> value_of(const std::string& key) const;
  // The same as a number, when it is one.
  std::optional<double> number_of(const std::string& key) const;
};

struct RunRecord {
  std::string name;            // the run directory's name (or the file's stem)
  std::filesystem::path file;  // its results.jsonl
  std::vector<CaseRecord> cases;
};

// A run directory (holding results.jsonl) or a results.jsonl file. Throws std::runtime_error
// naming the path, or ConfigError naming "path:line" and the key, for a line that is not JSON,
// exceeds the limits of untrusted JSON (JsonLimits), lacks or mistypes a field, or holds a
// `schema_version` outside kOldestReadResultsSchemaVersion to kResultsSchemaVersion (or none).
RunRecord load_run(const std::filesystem::path& path);
// One line's object; `source` names the file and line in the messages.
CaseRecord parse_case(const nlohmann::json& j, const JsonSource& source);

// Bandwidths of the samples in GiB/s (bytes / seconds / 2^30), in sample order.
std::vector<double> bandwidth_samples(const CaseRecord& c, const DirectionRecord& d);

}  // namespace ckpt::harness
