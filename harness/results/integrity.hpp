#pragma once

// What could make a result look better than the storage is, checked on every case and recorded
// beside it as warnings (never refusals): a library interposing the I/O calls (an LD_PRELOAD shim
// that makes posix_fadvise or fsync a no-op), an fsync faster than any device could take it, data
// small enough to be read back from the page cache, the harness's own CPU as the bottleneck; and
// which event ends each timed phase, so that a reader knows what "done" meant.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::harness {

// A watched I/O call that resolves to a library other than the C library.
struct Interposer {
  std::string symbol;   // "posix_fadvise"
  std::string library;  // the object that defines it, as the dynamic linker names it
  bool operator==(const Interposer&) const = default;
};

// What this process loaded in front of the C library.
struct PreloadCheck {
  std::string ld_preload;     // the LD_PRELOAD environment variable ("" when unset)
  std::string ld_so_preload;  // /etc/ld.so.preload's entries, space-separated ("" when none)
  std::vector<Interposer> interposed;
  std::vector<std::string> known_shims;  // loaded objects of known shims, each with what it does
};
// This process: the environment, /etc/ld.so.preload, every watched call's defining object (a
// sanitizer's runtime and ckptbench's own code are no interposers) and the loaded objects.
PreloadCheck check_preload();
// The I/O calls whose interposition can fake a number: cache dropping, syncing, opening (O_DIRECT
// can be stripped there), reading and writing.
const std::vector<std::string>& watched_io_calls();

// The fastest rate at which an fsync can have moved freshly written bytes out of memory, GiB/s.
// The fastest client of the published MLPerf Storage v3.0 checkpointing rows wrote 27.7 GiB/s per
// host (887.7 GiB/s over 32 hosts); a PCIe 5.0 x16 slot carries 59 GiB/s and two 400 Gb/s NICs
// 93 GiB/s. An fsync that implies more than 256 GiB/s (over 9x the fastest published client) has
// moved the bytes nowhere: a file system in memory (tmpfs), an fsync shim, or storage that
// acknowledges before the data leaves the host.
inline constexpr double kMaxDurableGiBPerSecond = 256.0;

// The durability probe: a file of `bytes` written and fsynced in the target, twice; the faster
// fsync is kept (a preempted probe must not pass a cache off as slow).
struct DurabilityProbe {
  bool probed = false;
  std::string why_not;  // when not probed: an object store, backend.sync = "none", an error
  std::uint64_t bytes = 0;
  double write_seconds = 0;  // the pwrite of the bytes into the page cache
  double fsync_seconds = 0;  // the faster of the two fsyncs
  // bytes / fsync_seconds / 2^30; 0 when not probed.
  double fsync_gib_per_s() const;
  // Probed, and the fsync implied more than kMaxDurableGiBPerSecond.
  bool too_fast() const;
};

// CPU time of this process (every thread: the harness and its backend's workers) over one timed
// phase, from getrusage; summed over the processes and the timed iterations.
struct PhaseCpu {
  double user_seconds = 0;
  double system_seconds = 0;
  double process_seconds = 0;  // the phase's aggregate seconds x processes, summed
  // (user + system) / process_seconds: the cores the harness kept busy on average (0: no time).
  double busy_cores() const;
};

// Of one case: what the runner measured for the checks; the warnings are derived from it.
struct IntegrityRecord {
  PreloadCheck preload;  // every process's, the interposers and shims merged
  DurabilityProbe durability;
  std::string done_write,
      done_read;  // the event that ends each timed phase ("" when it did not run)
  std::uint64_t bytes_per_host = 0;  // one checkpoint's bytes over the hosts that ran the case
  std::uint64_t host_memory_bytes = 0;
  double cores_per_process = 0;  // process 0's host's online cores over its processes
};

// A case reading back less than this many times its host's memory per checkpoint may be reading
// from the page cache: MLPerf Storage's rule 4.3.1 factor.
inline constexpr double kCachingFactor = 3.0;
// Harness CPU warnings: user time above this share of the phase (the harness's own code on the
// critical path for at least that share), or busy cores above this share of the cores each
// process has (the CPUs, not the storage, bound the phase).
inline constexpr double kUserShareLimit = 0.5;
inline constexpr double kBusyShareLimit = 0.9;

// What a phase's data generation did: the deterministic fill before the clock.
struct DataGeneration {
  std::uint64_t bytes = 0;
  double seconds = 0;
};

// The inputs of the warnings beside the record: the phases' CPU, the cache policy applied and
// whether the case read.
struct IntegrityInputs {
  const IntegrityRecord& record;
  std::optional<PhaseCpu> write, read;
  bool reads = false;
  std::string cache_policy;  // as applied: "none", "drop_caches", "fadvise", ...
  DataGeneration generation;
};

// Every warning, one sentence each, in a fixed order: preload, shims, durability, caching, CPU.
std::vector<std::string> integrity_warnings(const IntegrityInputs& in);

// The record's `integrity` object (results/SCHEMA.md).
nlohmann::json integrity_json(const IntegrityInputs& in);

}  // namespace ckpt::harness
