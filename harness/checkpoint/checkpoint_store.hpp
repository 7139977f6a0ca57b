#pragma once

// Where a case's checkpoints are kept, behind one interface: a file system (the case directory
// and its files) or an object store (objects named by the same paths, through an object-store
// backend's primitives). The commit, the search for the newest complete checkpoint, the case lock,
// numbering and retirement are written once over it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// A held case lock; released when it goes.
class StoreLock {
 public:
  virtual ~StoreLock() = default;
};

// Every call but objects() is made by one process (process 0 of a run) unless it says otherwise;
// a store is used by one thread at a time, except where an implementation says so. Paths are those
// of the plans: under case_directory(c).
class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  // True when checkpoints are objects: no directories to make, nothing on this machine's disks.
  virtual bool objects() const = 0;

  // Prepares the target for writing (see prepare_target_for_checkpoint): why the case cannot
  // write its checkpoints here, or nullopt.
  virtual std::optional<std::string> prepare_target(const Case& c) = 0;
  // Takes the case lock: exclusive for a keeping run, shared for a restore (see CaseLock). Sets
  // `problem` when another run holds it, `note` when the store cannot lock; returns the held lock
  // (possibly null: nothing held).
  virtual std::unique_ptr<StoreLock> lock(const Case& c, bool shared, std::string& problem,
                                          std::string& note) = 0;

  // One above the highest checkpoint number the case holds, complete or not (next_step_number).
  virtual std::int64_t next_step_number(const Case& c) = 0;
  // Claims checkpoint number `step` or the next free one above it, named by `name_of`; returns
  // the number claimed, or throws naming the path.
  virtual std::int64_t claim_step(
      std::int64_t step, const std::function<std::filesystem::path(std::int64_t)>& name_of) = 0;

  // The checkpoint the case's `latest` names (find_latest_checkpoint), or the problem.
  virtual std::optional<std::string> find_latest(const Case& c, std::filesystem::path& dir) = 0;
  // The manifest of checkpoint `dir` (read_manifest's checks and messages).
  virtual Manifest read_manifest(const std::filesystem::path& dir) = 0;
  // Whether checkpoint `dir` has its manifest (is complete).
  virtual bool has_manifest(const std::filesystem::path& dir) = 0;
  // The names of the case's complete checkpoints (each with its manifest), in no order.
  virtual std::vector<std::string> complete_checkpoints(const Case& c) = 0;

  // A small file or object whole, or nullopt when there is none.
  virtual std::optional<std::string> read_text(const std::filesystem::path& path) = 0;
  // Writes it whole and durably: another process sees all of it or the earlier one. Throws
  // std::runtime_error naming the path.
  virtual void write_text(const std::filesystem::path& path, const std::string& text) = 0;
  // The files (objects) under checkpoint `dir` and their sizes, by path relative to it; one
  // listing of an object store.
  virtual std::map<std::string, std::uint64_t> file_sizes(const std::filesystem::path& dir) = 0;
  // Bytes [offset, offset + length) of a checkpoint's file (a ranged GET of an object), fewer
  // where it ends sooner. Throws std::runtime_error naming the path when it is missing or cannot
  // be read.
  virtual std::string read_bytes(const std::filesystem::path& path, std::uint64_t offset,
                                 std::uint64_t length) = 0;
  // Removes it, when there is one; never throws.
  virtual void remove_text(const std::filesystem::path& path) noexcept = 0;

  // Removes complete checkpoint `dir`, its manifest first; "" or what failed. With objects()
  // this may be called from another thread while the store is used.
  virtual std::string remove_checkpoint(const std::filesystem::path& dir) = 0;
  // Removes this run's failed checkpoint `dir` (its manifest first) and what a killed writer left
  // of it; says what became of it, for the error.
  virtual std::string remove_failed(const std::filesystem::path& dir) = 0;

  // The store's own requests by kind since the last call (objects() only; else empty).
  virtual std::map<std::string, std::uint64_t> take_counters() { return {}; }
};

// The case directory on a file system: today's files, locks and renames (CaseLock,
// create_step_directory, record_latest_checkpoint).
class FileCheckpointStore final : public CheckpointStore {
 public:
  bool objects() const override { return false; }
  std::optional<std::string> prepare_target(const Case& c) override;
  std::unique_ptr<StoreLock> lock(const Case& c, bool shared, std::string& problem,
                                  std::string& note) override;
  std::int64_t next_step_number(const Case& c) override;
  std::int64_t claim_step(
      std::int64_t step,
      const std::function<std::filesystem::path(std::int64_t)>& name_of) override;
  std::optional<std::string> find_latest(const Case& c, std::filesystem::path& dir) override;
  Manifest read_manifest(const std::filesystem::path& dir) override;
  bool has_manifest(const std::filesystem::path& dir) override;
  std::vector<std::string> complete_checkpoints(const Case& c) override;
  std::optional<std::string> read_text(const std::filesystem::path& path) override;
  void write_text(const std::filesystem::path& path, const std::string& text) override;
  std::map<std::string, std::uint64_t> file_sizes(const std::filesystem::path& dir) override;
  std::string read_bytes(const std::filesystem::path& path, std::uint64_t offset,
                         std::uint64_t length) override;
  void remove_text(const std::filesystem::path& path) noexcept override;
  std::string remove_checkpoint(const std::filesystem::path& dir) override;
  std::string remove_failed(const std::filesystem::path& dir) override;
};

// Whether case `c`'s backend keeps objects (Capabilities::object_store as declared): its
// checkpoints then live in that store, not on a file system.
bool stores_objects(const Case& c);

// The store of case `c`: FileCheckpointStore, or over an object-store backend an
// ObjectCheckpointStore with a backend instance of its own, connected on process 0 only
// (`process`; the others' may not be used). Throws std::invalid_argument as make_backend does
// (an unreachable endpoint, a missing bucket).
std::unique_ptr<CheckpointStore> make_checkpoint_store(const Case& c, int process);

// The newest complete checkpoint of a case and its manifest, when `c` can restore it (as the
// file system's find_restorable_checkpoint(c, dir, manifest) decides), from `store`.
std::optional<std::string> find_restorable_checkpoint(CheckpointStore& store, const Case& c,
                                                      std::filesystem::path& dir,
                                                      Manifest& manifest);
// What to do when checkpoint `dir` of case `c` turned out damaged (damaged_checkpoint_advice).
std::string damaged_checkpoint_advice(CheckpointStore& store, const Case& c,
                                      const std::filesystem::path& dir);
// Records `dir` (number `step`) as the case's latest (record_latest_checkpoint) in `store`.
void record_latest_checkpoint(CheckpointStore& store, const Case& c,
                              const std::filesystem::path& dir, std::int64_t step);

}  // namespace ckpt::harness
