#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/results/integrity.hpp"
#include "harness/results/mlperf_rules.hpp"
#include "harness/results/training_summary.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

struct Spread {
  double min = 0;
  double median = 0;
  double max = 0;
};

// The slowest process in one phase of one iteration.
struct Straggler {
  std::string phase;   // mkdir (write), open, transfer, sync, close, total (the whole transfer),
                       // manifest, metadata (write)
  int process = 0;     // the first process with the longest time
  double seconds = 0;  // its time in the phase
};

// Where a case's wall time went, as process 0's clock saw it: disjoint intervals, summed per
// part in the order the parts first occurred. What no part covers (barriers between steps,
// progress lines, bookkeeping) is seconds - covered().
struct WallTime {
  double seconds = 0;
  std::vector<std::pair<std::string, double>> parts;

  void add(const std::string& part,
           double part_seconds);  // onto an existing part, or a new one at the end
  double covered() const;
  double covered_percent() const;  // 100 * covered() / seconds; 0 when seconds is 0
};

// One direction (checkpoint = write, restore = read) of a case over its timed iterations.
struct PhaseSummary {
  std::vector<double>
      iteration_seconds;  // aggregate time per timed iteration (IOR: latest end - earliest start)
  double seconds = 0;     // median of iteration_seconds
  std::vector<double> iteration_process0_seconds;  // process 0's own duration per timed iteration
  double gib_per_s = 0;                            // bytes_per_checkpoint / seconds / 2^30
  Spread process_seconds;                          // per-process durations in the median iteration
  Spread rank_seconds;          // per modeled rank (its plan's open..close) in the median iteration
  backends::PhaseTimes phases;  // medians over iterations of the slowest process's phase times
  double manifest_seconds = 0;  // write: manifest commit (median), not in `seconds`
  double metadata_seconds =
      0;  // write: DCP's .metadata by process 0 (median; 0 unless dcp), not in `seconds`
  double gather_seconds = 0;  // write: Megatron's distributed-optimizer gather onto DP rank 0
                              // (median; 0 unless it gathers), before and not in `seconds`
  std::uint64_t gather_bytes =
      0;  // write: bytes one gather moved between processes (MPI), all processes
  std::uint64_t gather_local_bytes =
      0;                    // write: bytes one gather copied between modeled ranks of one process
  double copy_seconds = 0;  // device staging (median): write d2h, read h2d copies, inside `seconds`
  double mkdir_seconds = 0;  // write: directory creation (median), inside `seconds`
  double retire_seconds =
      0;  // write: removing replaced or unkept checkpoints (median), not in `seconds`
  std::vector<double> iteration_mkdir, iteration_manifest, iteration_metadata, iteration_retire,
      iteration_gather;               // write: per timed iteration
  std::vector<Straggler> stragglers;  // per phase, in the median iteration
  std::optional<backends::LatencyHistogram>
      latency;  // measure.latency: every request of the timed iterations
  // The backend's counters (an object store's requests by kind, retries, throttling responses,
  // back-off time), summed over the timed iterations and every process; empty for backends that
  // count nothing.
  std::map<std::string, std::uint64_t> counters;
  PhaseCpu cpu;  // the processes' CPU time over the timed iterations
};

// A resharding restore ([restore]): what its read plans needed and read, over every emulated rank.
struct ReshardSummary {
  std::string from;                // the writer's layout, "TP8×PP4×DP1 (ZeRO 0)"
  std::string to;                  // the restore's
  std::string read;                // restore.read: exact | whole_items
  std::uint64_t bytes_needed = 0;  // bytes of the restored shards the checkpoint stores
  std::uint64_t bytes_read = 0;    // bytes the reads moved (exact: = needed)
  std::uint64_t padding_bytes =
      0;  // restored vocabulary padding the checkpoint does not store (not read)
  std::uint64_t requests = 0;      // read requests after coalescing (before chunk_bytes splits)
  std::uint64_t copied_bytes = 0;  // bytes copied out of scratch after the reads (timed with them)
  std::uint64_t gap_bytes = 0;     // restore.gap_bytes
  std::uint64_t direct_alignment = 0;  // backend.direct_alignment when backend.direct, else 0
  Spread rank_bytes_read;              // per emulated rank
  Spread rank_requests;
  double amplification() const {
    return bytes_needed > 0 ? static_cast<double>(bytes_read) / static_cast<double>(bytes_needed)
                            : 0;
  }
};

// strategy.compression: what the codec saved and what it cost, over every process. Compression
// runs before each checkpoint's write (its time is not in the write's seconds); decompression
// runs after each restore's read, inside the restore's seconds.
struct CompressionSummary {
  std::string codec;  // strategy.compression
  int level = 0;
  std::string unit;                 // shard | chunk
  std::uint64_t chunk_bytes = 0;    // unit = chunk: raw bytes per frame
  int threads = 0;                  // codec threads per process
  std::uint64_t logical_bytes = 0;  // bytes the stored pieces decode to (per checkpoint)
  std::uint64_t stored_bytes = 0;   // bytes of their frames, what the checkpoint's files hold
  // Per timed checkpoint (encode) and restore (decode): the slowest process's wall seconds and
  // every codec thread's CPU seconds, summed over processes.
  std::vector<double> encode_seconds, encode_cpu_seconds, decode_seconds, decode_cpu_seconds;
};

// strategy.selective_every, strategy.partial_experts: what each checkpoint wrote against a full
// one, and which earlier checkpoints a checkpoint (its restore) depends on, by directory name.
struct SelectiveSummary {
  std::int64_t every = 1;
  std::int64_t experts = 0;
  std::uint64_t full_bytes = 0;  // a full checkpoint's bytes (bytes_per_checkpoint)
  // Per timed checkpoint, all processes: the bytes it wrote, and the oldest checkpoint its restore
  // needs (its own name when it holds every piece).
  std::vector<std::uint64_t> written_bytes;
  std::vector<std::string> oldest_needed;
  // Per timed checkpoint: the checkpoints from the oldest its restore needs to it, both included
  // (1: it holds every piece).
  std::vector<std::int64_t> chain_length;
  std::int64_t delta_every = 1;  // strategy.delta_every
  // The restore: the checkpoint restored and the earlier ones it read pieces from, oldest first;
  // the bytes it read (a delta's base pieces whole and its runs over them), every process's, and
  // its chain length.
  std::string restored;
  std::vector<std::string> restored_from;
  std::uint64_t restore_read_bytes = 0;
  std::int64_t restore_chain_length = 0;
};

// model.weights other than unquantized: the checkpoint against the same job's with every weight
// in state.weight_dtype, both the whole job at model.scale = 1.
struct QuantizedWeightsSummary {
  std::string format;                   // model.weights
  std::uint64_t bytes = 0;              // the quantized checkpoint (full_scale_bytes)
  std::uint64_t unquantized_bytes = 0;  // the same weights unquantized
};

// restore.replicas: what a same-layout restore gave the DP replicas, per restore, all processes.
struct ReplicaSummary {
  std::string mode;                      // restore.replicas: read | cooperative
  std::uint64_t held_bytes = 0;          // in the ranks' buffers after it, replicas included
  std::uint64_t storage_bytes = 0;       // read from storage (read: held_bytes)
  std::uint64_t interconnect_bytes = 0;  // cooperative: sent between processes
  std::uint64_t copied_bytes = 0;        // cooperative: copied between ranks of one process
  int rounds = 1;  // a cooperative piece exchange under campaign.memory_budget: its rounds
};

// The load phase ([load]): an inference server's weight loading, over every process's ranks.
struct LoadSummary {
  std::string method;  // load.method
  int threads = 0;
  bool direct = false;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t pool_bytes = 0;
  int pool_chunks = 0;             // pipelined: chunks in the pool (process 0's)
  std::string memory;              // memory.space
  std::int64_t tp = 0;             // the inference TP
  std::int64_t checkpoint_tp = 0;  // the writer's parallel.tp
  std::int64_t ranks = 0;          // inference ranks loaded (all of them)
  std::uint64_t bytes =
      0;  // bytes of the ranks' weights the checkpoint stores (= bytes_per_checkpoint)
  std::uint64_t bytes_read = 0;     // bytes the planned ranges cover: bytes + bridged_bytes
  std::uint64_t gap_bytes = 0;      // load.gap_bytes
  std::uint64_t bridged_bytes = 0;  // file gaps up to gap_bytes read into scratch and dropped
  std::uint64_t padding_bytes = 0;  // vocabulary padding of another TP, not stored, not read
  std::uint64_t requests = 0;       // planned ranges after coalescing
  std::uint64_t reads = 0;          // pread requests the loader issued for one load (pipelined:
                                    // file-adjacent ranges of a chunk share one)
  std::vector<double> time_to_loaded_seconds;  // per timed iteration: barrier to the last byte in
                                               // place (slowest process)
  std::vector<double>
      h2d_seconds;  // per timed iteration: host -> device copies inside it (device memory)
};

// What the calibration does, as results.jsonl records it (calibration.method).
inline constexpr const char* kCalibrationMethod =
    "one file per process: write(2) of the process's bytes, then the case's backend.sync, close; "
    "the case's cache "
    "policy; read(2) of the file";

// measure.calibration: the plain write and read of the case's bytes (Calibration) taken just before
// each timed iteration and once after the last: sample i precedes timed iteration i, so iteration i
// lies between samples i and i + 1 (timed iterations + 1 samples).
struct CalibrationRecord {
  std::uint64_t bytes = 0;            // all processes, = bytes_per_checkpoint
  std::vector<double> write_seconds;  // aggregate seconds
  std::vector<double> read_seconds;   // empty when the case does not restore
};

struct CaseResult {
  Case config;
  std::string status = "ok";  // ok | failed | interrupted
  std::string error;          // first error, with context
  int processes = 1;
  std::int64_t world_size = 0;             // modeled ranks of the training job
  std::int64_t modeled_ranks = 0;          // ranks this run emulated
  std::uint64_t bytes_per_checkpoint = 0;  // payload bytes of the emulated ranks
  std::uint64_t full_scale_bytes = 0;  // the whole job's checkpoint at model.scale = 1 (every rank)
  std::uint64_t padding_bytes = 0;     // alignment padding written on top
  std::uint64_t files_per_checkpoint = 0;
  std::uint64_t extents_per_checkpoint = 0;
  std::uint64_t memory_bytes_per_process = 0;  // largest buffer total of any process
  std::optional<PhaseSummary> write;
  std::optional<PhaseSummary> read;
  bool verified = false;
  double verify_seconds = 0;  // median, never in the bandwidth
  double fill_seconds = 0;
  std::string cache_policy_applied;  // what actually happened before restore
  std::string checkpoint_dir;        // kept checkpoint, if any
  std::vector<std::string> notes;    // what backends fell back from (e.g. buffer registration)
  // An object store's checkpoint store: its own requests by kind over the whole case, summed over
  // every process, and the most of each kind one process made (equal to the sum where one
  // process alone made them, as it lists).
  std::map<std::string, std::uint64_t> store_requests;
  std::map<std::string, std::uint64_t> store_requests_max;
  // An object store: per timed checkpoint, the seconds from its commit until another process
  // listed its manifest and read it.
  std::vector<double> visible_seconds;
  std::string staging;  // device staging: "" (none), "pipelined" or "whole" (collective backend)
  bool stores_data = true;  // false for a backend that keeps nothing (null): its rates are overhead
  std::vector<std::string> hosts;  // every process's host name, in rank order
  WallTime wall;
  std::optional<CalibrationRecord> calibration;  // measure.calibration
  std::optional<TrainingSummary>
      training;  // [training] cases: the loop's stall, time to durable, ...
  std::optional<ReshardSummary> reshard;                     // [restore] into another layout
  std::optional<LoadSummary> load;                           // the load phase
  std::optional<CompressionSummary> compression;             // strategy.compression
  std::optional<ReplicaSummary> replicas;                    // restore.replicas other than written
  std::optional<SelectiveSummary> selective;                 // strategy.selective_every > 1
  std::optional<QuantizedWeightsSummary> quantized_weights;  // model.weights quantized
  std::optional<MlperfVerdict> mlperf;  // [mlperf] cases: the rules checker's label and reasons
  IntegrityRecord integrity;            // what the integrity checks measured (`integrity`)
  nlohmann::json environment = nlohmann::json::object();
  // The case's wall-clock start (before its setup) and end (after its last phase): DLIO's
  // summary.json `start` and `end`, and the ends the gap of a two-invocation run is taken from.
  std::chrono::system_clock::time_point started_at{};
  std::chrono::system_clock::time_point ended_at{};
};

// What the integrity warnings of `r` are computed from (its record, the phases' CPU time, the
// cache policy applied, the data generation); refers to `r`.
IntegrityInputs integrity_inputs(const CaseResult& r);

// One JSON object per case, the schema of results/SCHEMA.md, at kResultsSchemaVersion.
nlohmann::json to_json(const CaseResult& result);

}  // namespace ckpt::harness
