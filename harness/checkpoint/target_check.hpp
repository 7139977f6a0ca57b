#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "harness/checkpoint/manifest.hpp"
#include "harness/common/directories.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// The directory a case's checkpoints go to: <target>/<campaign>/case-<index>.
std::filesystem::path case_directory(const Case& c);

// Why a case cannot write its checkpoints under campaign.target (missing without
// campaign.create_target, not a writable directory, an older checkpoint of this case there
// without campaign.overwrite), or nullopt. Changes nothing.
std::optional<std::string> target_problem(const Case& c);

// Prepares the target for writing (process 0 only): the target must exist (or be created when
// campaign.create_target), be a writable directory, and hold no older checkpoint of this case
// unless campaign.overwrite (the runner retires the old one once its own is complete). Makes the
// case directory and removes nothing. Returns the problem, or nullopt.
std::optional<std::string> prepare_target_for_checkpoint(const Case& c);

// The newest complete checkpoint of a case (named by its `latest` file), or the problem.
std::optional<std::string> find_latest_checkpoint(const Case& c, std::filesystem::path& dir);

// The newest complete checkpoint of a case and its manifest, when case `c` can restore it (same
// checkpoint_hash); else the problem, naming the keys that differ and both values.
std::optional<std::string> find_restorable_checkpoint(const Case& c, std::filesystem::path& dir,
                                                      Manifest& manifest);

// What a restore that found checkpoint `dir` of case `c` damaged (a file missing, short or
// changed, a manifest unreadable) says to do: ckptbench never restores another checkpoint on its
// own, so this lists the other complete checkpoints of the case directory, newest first, and how
// to restore one (write its name into `latest`), or says there is none.
std::string damaged_checkpoint_advice(const Case& c, const std::filesystem::path& dir);

// The case lock's file (or object) in the case directory.
inline constexpr const char* kLockName = ".ckptbench.lock";
// A restore's own lock file (or object): this, then "<host>.<pid>".
inline constexpr const char* kRestorePrefix = ".ckptbench.restore.";

// The exclusive lock a keeping run holds on its case directory: flock(LOCK_EX | LOCK_NB) on
// case-dir/.ckptbench.lock, which then holds "<host> <pid>". Released when the object goes (the
// file stays: removing it would let a third run lock a fresh file while a second holds the old).
// A holder on this host that is ending (its main thread a zombie, its last thread not yet ended:
// a killed run) is waited for, up to 30 s, instead of refused: its flock goes with that thread.
// flock is local to one node on some shared file systems: NFS maps it to byte-range locks (needs
// lockd, or NFSv4), Lustre needs the `flock` mount option (`localflock` locks one node only).
class CaseLock {
 public:
  CaseLock() = default;
  CaseLock(CaseLock&& other) noexcept;
  CaseLock& operator=(CaseLock&& other) noexcept;
  CaseLock(const CaseLock&) = delete;
  CaseLock& operator=(const CaseLock&) = delete;
  ~CaseLock();

  // Takes the lock of `case_dir` (which exists). Sets `problem` when another run holds it (naming
  // its host and pid) and `note` when the file system cannot lock (the run goes on unprotected).
  static CaseLock acquire(const std::filesystem::path& case_dir, std::string& problem,
                          std::string& note);

  // A restore's lock: a shared flock on the same file, so restores run side by side but no
  // keeping run can retire the checkpoint being read (it refuses, naming the restore). The
  // restore is named by a file of its own, case-dir/.ckptbench.restore.<host>.<pid>, which it
  // holds with an exclusive flock and removes at the end (a killed one's is stale: unlocked).
  // `problem` as for acquire() when a keeping run holds the case.
  static CaseLock acquire_shared(const std::filesystem::path& case_dir, std::string& problem,
                                 std::string& note);

 private:
  int fd_ = -1;
  int reader_fd_ = -1;
  std::filesystem::path reader_path_;
};

// Why a keeping run of case `c` cannot start now: another run holds the case lock (naming its
// host and pid), or nullopt. Checks with a shared lock taken and dropped at once; changes nothing.
std::optional<std::string> lock_problem(const Case& c);

// The number of the case's next checkpoint: one above the highest that the case directory holds
// in its layout's naming (step_N, iter_N, global_stepN), complete or not, or 1. Numbers only grow,
// so a higher number is always a newer checkpoint, even once lower ones were retired.
std::int64_t next_step_number(const Case& c);
// The checkpoint number a name of the case's layout carries (step_7, iter_0000007, global_step7),
// or nullopt for any other name.
std::optional<std::int64_t> step_number_of(const Case& c, const std::string& name);

// Makes checkpoint directory `dir` (number `step`, named by `name_of`) with an exclusive mkdir,
// trying the next numbers while one exists; returns the number made, or throws naming the path.
std::int64_t create_step_directory(
    std::int64_t step, const std::function<std::filesystem::path(std::int64_t)>& name_of);

// Records `dir` (checkpoint number `step`) as the case's newest complete checkpoint: atomic
// writes of case-dir/latest and, for the megatron layout, latest_checkpointed_iteration.txt.
// For deepspeed, `latest` is DeepSpeed's own: the tag ("global_stepN") without a newline,
// as save_checkpoint writes it on rank 0 after the checkpoint (engine.py, save_latest = True).
inline constexpr std::string_view kLatestName =
    "../latest";  // from inside the checkpoint directory
void record_latest_checkpoint(const Case& c, const std::filesystem::path& dir, std::int64_t step);

}  // namespace ckpt::harness
