#pragma once

// The checkpoints of a case as objects of an object store (`ObjectStore`), named by
// the plans' paths. An object store has no directories, renames or locks: a checkpoint is its
// objects under the checkpoint's path; the manifest, `latest` (and Megatron's
// latest_checkpointed_iteration.txt) are small objects, each PUT whole, so a reader sees the old
// one or the new one; the case lock is an object made by a conditional PUT (If-None-Match: *),
// which the store refuses while the object exists; retiring a checkpoint is one listing and
// batched deletes, its manifest first.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/object_store.hpp"
#include "harness/checkpoint/checkpoint_store.hpp"

namespace ckpt::harness {

class ObjectCheckpointStore final : public CheckpointStore {
 public:
  // `backend` implements backends::ObjectStore; null on processes that never use the store (every
  // call there throws std::logic_error). Every call is thread-safe (one request at a time): the
  // training loop retires checkpoints on a thread of its own.
  explicit ObjectCheckpointStore(std::unique_ptr<backends::Backend> backend);

  bool objects() const override { return true; }
  // A listing of the case's objects: an older checkpoint (`latest`, or a manifest) without
  // campaign.overwrite is refused. Nothing to prepare: objects need no directories.
  std::optional<std::string> prepare_target(const Case& c) override;
  // Exclusive: the conditional PUT of case-dir/.ckptbench.lock ("<host> <pid>"), then one listing
  // of the case (kept for next_step_number and has_manifest), refused while a restore's object
  // is there. Shared: a PUT of case-dir/.ckptbench.restore.<host>.<pid>, refused while the lock
  // object is there. The object goes with the lock. A killed run's object stays: the refusal
  // names it, to delete by hand once that run is known gone.
  std::unique_ptr<StoreLock> lock(const Case& c, bool shared, std::string& problem,
                                  std::string& note) override;
  // From the exclusive lock's listing when there is one (used once), else a listing now.
  std::int64_t next_step_number(const Case& c) override;
  // The number itself: the case lock keeps every other writer out (no object names a step until
  // its data is written).
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
  // Also aborts the multipart uploads a failed writer left open under `dir`.
  std::string remove_failed(const std::filesystem::path& dir) override;
  std::map<std::string, std::uint64_t> take_counters() override;

 private:
  backends::ObjectStore& store();
  // The objects under case_directory(c), listed now.
  std::vector<backends::StoredObject> list_case(const Case& c);
  // From listing_: a restore's object holding the case, named.
  std::optional<std::string> restore_problem(const Case& c) const;
  // A keeping run's lock object holding the case, named.
  std::optional<std::string> shared_lock_problem(const Case& c);

  std::unique_ptr<backends::Backend> backend_;
  backends::ObjectStore* objects_ = nullptr;
  std::recursive_mutex mutex_;
  // The listing the exclusive lock made: the case as this run found it once it held the case.
  std::optional<std::vector<backends::StoredObject>> listing_;
};

}  // namespace ckpt::harness
