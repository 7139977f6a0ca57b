#include "harness/checkpoint/object_checkpoint_store.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <stdexcept>

#include "harness/checkpoint/target_check.hpp"
#include "harness/results/environment.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using backends::StoredObject;

// The folder of `dir` as the store lists it.
std::string folder(const fs::path& dir) {
  return dir.string() + "/";
}

// The first name below case-dir of an object there ("iter_0000002" of
// ".../case-0000/iter_0000002/mp_rank_00/model_optim_rng.pt"), and whether more follows.
std::string first_name(const std::string& case_folder, const std::string& path, bool& deeper) {
  const std::string rest = path.substr(case_folder.size());
  const auto slash = rest.find('/');
  deeper = slash != std::string::npos;
  return deeper ? rest.substr(0, slash) : rest;
}

// "(host H, pid P)" of a lock object's "<host> <pid>".
std::string holder_of(const std::string& text) {
  std::istringstream words(text);
  std::string host, pid;
  if (!(words >> host >> pid)) return "(it names no host and pid)";
  return fmt::format("(host {}, pid {})", host, pid);
}

// Whether a lock object's "<host> <pid>" names a process of this host that no longer runs (a
// killed run leaves its lock object behind; an object store has no lock that dies with it).
bool holder_is_gone(const std::string& text) {
  std::istringstream words(text);
  std::string host;
  long pid = 0;
  if (!(words >> host >> pid) || host != host_name() || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::string in_use(const fs::path& case_dir, const std::string& who, const fs::path& object) {
  return fmt::format(
      "campaign.target: {} is in use by {}, which holds the object {} — wait for it to finish, or "
      "choose another campaign.name or campaign.target; if that run is gone (killed), delete the "
      "object and run again",
      case_dir.string(), who, object.string());
}

// The refusal for a lock object someone holds: a holder that is known gone is named as such.
std::string locked_by(const fs::path& case_dir, const std::string& holder, const fs::path& object) {
  if (!holder_is_gone(holder))
    return in_use(case_dir, "another ckptbench run " + holder_of(holder), object);
  return fmt::format(
      "campaign.target: {} is locked by the object {}, left behind by a ckptbench run {} that "
      "no longer runs on this host (killed) — delete that object and run again",
      case_dir.string(), object.string(), holder_of(holder));
}

// Removes its object when it goes.
class ObjectLock final : public StoreLock {
 public:
  ObjectLock(CheckpointStore& store, fs::path path) : store_(store), path_(std::move(path)) {}
  ~ObjectLock() override { store_.remove_text(path_); }
  ObjectLock(const ObjectLock&) = delete;
  ObjectLock& operator=(const ObjectLock&) = delete;

 private:
  CheckpointStore& store_;
  fs::path path_;
};

}  // namespace

ObjectCheckpointStore::ObjectCheckpointStore(std::unique_ptr<backends::Backend> backend)
    : backend_(std::move(backend)), objects_(dynamic_cast<backends::ObjectStore*>(backend_.get())) {
  if (backend_ && objects_ == nullptr) {
    throw std::invalid_argument(
        fmt::format("backend {} declares object_store but offers no object-store primitives",
                    backend_->name()));
  }
}

backends::ObjectStore& ObjectCheckpointStore::store() {
  if (objects_ == nullptr)
    throw std::logic_error("the object checkpoint store is used on process 0 only");
  return *objects_;
}

std::vector<StoredObject> ObjectCheckpointStore::list_case(const Case& c) {
  return store().list(folder(case_directory(c)));
}

std::optional<std::string> ObjectCheckpointStore::prepare_target(const Case& c) {
  const std::lock_guard guard(mutex_);
  const fs::path case_dir = case_directory(c);
  const std::string case_folder = folder(case_dir);
  bool holds = false;
  for (const StoredObject& o : list_case(c)) {
    bool deeper = false;
    const std::string name = first_name(case_folder, o.path, deeper);
    holds = holds || (!deeper && name == "latest") ||
            o.path == (case_dir / name / kManifestName).string();
  }
  if (!holds || c.overwrite) return std::nullopt;
  return fmt::format(
      "campaign.target: {} (objects of backend.name = \"{}\") holds an older checkpoint of this "
      "case — set campaign.overwrite = true (or --set campaign.overwrite=true) to replace it, or "
      "choose another target",
      case_dir.string(), c.backend);
}

std::optional<std::string> ObjectCheckpointStore::restore_problem(const Case& c) const {
  const fs::path case_dir = case_directory(c);
  const std::string readers = folder(case_dir) + kRestorePrefix;
  for (const StoredObject& o : *listing_) {
    if (!o.path.starts_with(readers)) continue;
    std::string who = o.path.substr(readers.size());
    const auto dot = who.rfind('.');
    if (dot != std::string::npos)
      who = fmt::format("(host {}, pid {})", who.substr(0, dot), who.substr(dot + 1));
    return in_use(case_dir, "a ckptbench restore " + who, o.path);
  }
  return std::nullopt;
}

std::optional<std::string> ObjectCheckpointStore::shared_lock_problem(const Case& c) {
  const fs::path lock = case_directory(c) / kLockName;
  if (const auto holder = store().get(lock.string()))
    return locked_by(case_directory(c), *holder, lock);
  return std::nullopt;
}

std::unique_ptr<StoreLock> ObjectCheckpointStore::lock(const Case& c, bool shared,
                                                       std::string& problem, std::string& note) {
  const std::lock_guard guard(mutex_);
  try {
    if (!shared) {
      const fs::path path = case_directory(c) / kLockName;
      if (!store().create(path.string(), fmt::format("{} {}\n", host_name(), ::getpid()))) {
        problem = locked_by(case_directory(c), store().get(path.string()).value_or(""), path);
        return nullptr;
      }
      auto held = std::make_unique<ObjectLock>(*this, path);  // goes again on any refusal
      // A writer killed mid-upload leaves multipart uploads that the store keeps (and bills)
      // until someone aborts them; holding the case, this run is the one to.
      if (const std::size_t aborted = store().abort_uploads(folder(case_directory(c))); aborted > 0)
        note =
            fmt::format("aborted {} unfinished multipart uploads that an earlier run left under {}",
                        aborted, case_directory(c).string());
      listing_ = list_case(c);
      if (auto refused = restore_problem(c)) {
        listing_.reset();
        problem = *refused;
        return nullptr;
      }
      return held;
    }
    // The restore's object first, then the look for a keeping run: of two that start together,
    // at least one sees the other.
    const fs::path mine =
        case_directory(c) / fmt::format("{}{}.{}", kRestorePrefix, host_name(), ::getpid());
    store().put(mine.string(), fmt::format("{} {}\n", host_name(), ::getpid()));
    auto held = std::make_unique<ObjectLock>(*this, mine);
    if (auto refused = shared_lock_problem(c)) {
      problem = *refused;
      return nullptr;
    }
    return held;
  } catch (const std::exception& e) {
    problem =
        fmt::format("campaign.target: cannot lock {}: {}", case_directory(c).string(), e.what());
    return nullptr;
  }
}

std::int64_t ObjectCheckpointStore::next_step_number(const Case& c) {
  const std::lock_guard guard(mutex_);
  const std::string case_folder = folder(case_directory(c));
  std::int64_t highest = 0;
  for (const StoredObject& o : listing_ ? *listing_ : list_case(c)) {
    bool deeper = false;
    const std::string name = first_name(case_folder, o.path, deeper);
    if (const auto step = deeper ? step_number_of(c, name) : std::nullopt)
      highest = std::max(highest, *step);
  }
  listing_.reset();  // the run's own checkpoints follow: later questions list again
  return highest + 1;
}

std::int64_t ObjectCheckpointStore::claim_step(std::int64_t step,
                                               const std::function<fs::path(std::int64_t)>&) {
  return step;
}

std::optional<std::string> ObjectCheckpointStore::find_latest(const Case& c, fs::path& dir) {
  const std::lock_guard guard(mutex_);
  const fs::path case_dir = case_directory(c);
  const fs::path latest = case_dir / "latest";
  std::istringstream text(store().get(latest.string()).value_or(""));
  std::string name;
  if (!(text >> name)) {
    return fmt::format(
        "no complete checkpoint to restore: {} is missing — run with --phase checkpoint first "
        "(with the same campaign and target)",
        latest.string());
  }
  if (name == "." || name == ".." || name.find('/') != std::string::npos) {
    return fmt::format(
        "{} points to \"{}\", which is not a checkpoint inside {} — a `latest` pointer must name "
        "one checkpoint of the case (no '/', not \".\" or \"..\")",
        latest.string(), name, case_dir.string());
  }
  dir = case_dir / name;
  return std::nullopt;
}

Manifest ObjectCheckpointStore::read_manifest(const fs::path& dir) {
  const std::lock_guard guard(mutex_);
  const fs::path path = dir / kManifestName;
  const std::optional<std::string> text = store().get(path.string());
  if (!text) throw std::runtime_error(missing_manifest(dir));
  return parse_manifest(*text, path);
}

bool ObjectCheckpointStore::has_manifest(const fs::path& dir) {
  const std::lock_guard guard(mutex_);
  const std::string path = (dir / kManifestName).string();
  const auto named = [&path](const StoredObject& o) { return o.path == path; };
  if (listing_) return std::any_of(listing_->begin(), listing_->end(), named);
  const std::vector<StoredObject> found = store().list(path);
  return std::any_of(found.begin(), found.end(), named);
}

std::vector<std::string> ObjectCheckpointStore::complete_checkpoints(const Case& c) {
  const std::lock_guard guard(mutex_);
  const fs::path case_dir = case_directory(c);
  std::vector<std::string> complete;
  for (const StoredObject& o : list_case(c)) {
    bool deeper = false;
    const std::string name = first_name(folder(case_dir), o.path, deeper);
    if (deeper && o.path == (case_dir / name / kManifestName).string()) complete.push_back(name);
  }
  return complete;
}

std::optional<std::string> ObjectCheckpointStore::read_text(const fs::path& path) {
  const std::lock_guard guard(mutex_);
  return store().get(path.string());
}

void ObjectCheckpointStore::write_text(const fs::path& path, const std::string& text) {
  const std::lock_guard guard(mutex_);
  store().put(path.string(), text);
}

std::map<std::string, std::uint64_t> ObjectCheckpointStore::file_sizes(const fs::path& dir) {
  const std::lock_guard guard(mutex_);
  const std::string prefix = folder(dir);
  std::map<std::string, std::uint64_t> sizes;
  for (const StoredObject& o : store().list(prefix)) sizes[o.path.substr(prefix.size())] = o.size;
  return sizes;
}

std::string ObjectCheckpointStore::read_bytes(const fs::path& path, std::uint64_t offset,
                                              std::uint64_t length) {
  const std::lock_guard guard(mutex_);
  if (length == 0) return "";
  std::optional<std::string> bytes = store().get_range(path.string(), offset, length);
  if (!bytes) throw std::runtime_error(fmt::format("{}: no such object", path.string()));
  return std::move(*bytes);
}

void ObjectCheckpointStore::remove_text(const fs::path& path) noexcept {
  try {
    const std::lock_guard guard(mutex_);
    store().remove({path.string()});
  } catch (...) {  // best effort: what the run reports is what made it remove
  }
}

std::string ObjectCheckpointStore::remove_checkpoint(const fs::path& dir) {
  const std::lock_guard guard(mutex_);
  try {
    const std::string manifest = (dir / kManifestName).string();
    std::vector<std::string> rest;
    bool complete = false;
    for (const StoredObject& o : store().list(folder(dir))) {
      if (o.path == manifest) {
        complete = true;
      } else {
        rest.push_back(o.path);
      }
    }
    // Without its manifest first, a removal cut short leaves no checkpoint that looks complete.
    if (complete) store().remove({manifest});
    if (!rest.empty()) store().remove(rest);
  } catch (const std::exception& e) {
    return fmt::format("retiring checkpoint {} failed: {}", dir.string(), e.what());
  }
  return "";
}

std::string ObjectCheckpointStore::remove_failed(const fs::path& dir) {
  const std::lock_guard guard(mutex_);
  std::size_t aborted = 0;
  if (std::string problem = remove_checkpoint(dir); !problem.empty()) {
    return fmt::format("this run could not remove its incomplete checkpoint's objects under {}: {}",
                       dir.string(), problem);
  }
  try {
    aborted = store().abort_uploads(folder(dir));
  } catch (const std::exception& e) {
    return fmt::format(
        "this run removed its incomplete checkpoint's objects under {}, but not its unfinished "
        "multipart uploads: {}",
        dir.string(), e.what());
  }
  return fmt::format(
      "this run removed its incomplete checkpoint's objects under {}{}", dir.string(),
      aborted == 0 ? std::string()
                   : fmt::format(" and aborted {} unfinished multipart uploads", aborted));
}

std::map<std::string, std::uint64_t> ObjectCheckpointStore::take_counters() {
  const std::lock_guard guard(mutex_);
  return objects_ == nullptr ? std::map<std::string, std::uint64_t>{} : store().take_counters();
}

}  // namespace ckpt::harness
