#include "harness/checkpoint/target_check.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/results/environment.hpp"

namespace ckpt::harness {
namespace fs = std::filesystem;

fs::path case_directory(const Case& c) {
  return c.target / c.campaign / fmt::format("case-{:04d}", c.index);
}

namespace {

// Whether a case directory holds a checkpoint (a `latest` file, or a directory with a manifest);
// leftovers without a manifest are not checkpoints.
bool holds_checkpoint(const fs::path& dir) {
  std::error_code ec;
  bool found = fs::exists(dir / "latest", ec);
  for (const auto& entry : fs::directory_iterator(dir, ec))
    found = found || fs::exists(entry.path() / kManifestName, ec);
  return found;
}

}  // namespace

std::optional<std::string> target_problem(const Case& c) {
  std::error_code ec;
  if (!fs::exists(c.target, ec)) {
    if (!c.create_target) {
      return fmt::format(
          "campaign.target: directory {} does not exist — create it, or set campaign.create_target "
          "= true",
          c.target.string());
    }
    if (const auto blocking = uncreatable_directory(c.target)) {
      return fmt::format("campaign.target: cannot create {}: {} is not a writable directory",
                         c.target.string(), blocking->string());
    }
    return std::nullopt;
  }
  if (!fs::is_directory(c.target, ec))
    return fmt::format("campaign.target: {} is not a directory", c.target.string());
  if (!writable_directory(c.target)) {
    return fmt::format(
        "campaign.target: {} is not writable by this user — choose another directory",
        c.target.string());
  }
  const fs::path dir = case_directory(c);
  if (fs::exists(dir, ec) && holds_checkpoint(dir) && !c.overwrite) {
    return fmt::format(
        "campaign.target: {} holds an older checkpoint of this case — set campaign.overwrite = "
        "true "
        "(or --set campaign.overwrite=true) to replace it, or choose another target",
        dir.string());
  }
  return std::nullopt;
}

std::optional<std::string> prepare_target_for_checkpoint(const Case& c) {
  if (auto problem = target_problem(c)) return problem;
  std::error_code ec;
  if (!fs::exists(c.target, ec)) {
    fs::create_directories(c.target, ec);
    if (ec)
      return fmt::format("campaign.target: cannot create {}: {}", c.target.string(), ec.message());
  }
  // An older complete checkpoint stays until this run's first checkpoint is complete (the
  // runner retires it then). Nothing else is removed: a directory without a manifest may be
  // another run's checkpoint under way (this runs before the case lock is taken).
  const fs::path dir = case_directory(c);
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("campaign.target: cannot create {}: {}", dir.string(), ec.message());
  return std::nullopt;
}

std::optional<std::string> find_latest_checkpoint(const Case& c, fs::path& dir) {
  const fs::path latest = case_directory(c) / "latest";
  std::ifstream in(latest);
  std::string name;
  if (!in || !(in >> name)) {
    return fmt::format(
        "no complete checkpoint to restore: {} is missing — run with --phase checkpoint first "
        "(with the same campaign and target)",
        latest.string());
  }
  // The pointer names one directory inside the case directory, and resolves there.
  const fs::path relative(name);
  const fs::path case_dir = case_directory(c);
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(case_dir / relative, ec);
  const fs::path inside = fs::weakly_canonical(case_dir, ec);
  if (name == "." || name == ".." || relative.has_root_path() ||
      ++relative.begin() != relative.end() || resolved.parent_path() != inside) {
    return fmt::format(
        "{} points to \"{}\", which is not a checkpoint directory inside {} — a `latest` pointer "
        "must "
        "name one directory of the case directory (no '/', not \".\" or \"..\", no symlink out of "
        "it)",
        latest.string(), name, case_dir.string());
  }
  dir = case_dir / name;
  return std::nullopt;
}

CaseLock::CaseLock(CaseLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      reader_fd_(std::exchange(other.reader_fd_, -1)),
      reader_path_(std::exchange(other.reader_path_, {})) {}

CaseLock& CaseLock::operator=(CaseLock&& other) noexcept {
  if (this != &other) {
    CaseLock gone(std::move(*this));
    fd_ = std::exchange(other.fd_, -1);
    reader_fd_ = std::exchange(other.reader_fd_, -1);
    reader_path_ = std::exchange(other.reader_path_, {});
  }
  return *this;
}

CaseLock::~CaseLock() {
  if (reader_fd_ >= 0) {
    std::error_code ec;
    fs::remove(reader_path_, ec);  // before the unlock: a keeping run never sees it stale
    ::close(reader_fd_);
  }
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// "host H, pid P" of the restores holding `case_dir` (their files locked), oldest name first;
// stale files of killed restores (no longer locked) are removed.
std::vector<std::string> live_restores(const fs::path& case_dir) {
  std::vector<std::string> live;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(case_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kRestorePrefix)) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
      fs::remove(entry.path(), ec);
    } else {
      const std::string who = name.substr(std::string(kRestorePrefix).size());
      const auto dot = who.rfind('.');
      live.push_back(dot == std::string::npos
                         ? who
                         : fmt::format("host {}, pid {}", who.substr(0, dot), who.substr(dot + 1)));
    }
    ::close(fd);
  }
  std::sort(live.begin(), live.end());
  return live;
}

// The refusal when another run holds the lock on `fd` (its file holds "host pid" of a keeping
// run; restores holding it shared are named by files of their own).
std::string held_by_other(int fd, const fs::path& case_dir) {
  std::string holder(256, '\0');
  const ssize_t n = ::pread(fd, holder.data(), holder.size() - 1, 0);
  holder.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  const auto space = holder.find(' ');
  std::string who =
      space == std::string::npos
          ? std::string("another ckptbench run (it has not written its host and pid yet)")
          : fmt::format("another ckptbench run (host {}, pid {})", holder.substr(0, space),
                        holder.substr(space + 1));
  if (const std::vector<std::string> restores = live_restores(case_dir); !restores.empty()) {
    who = fmt::format("a ckptbench restore ({})", restores.front());
    for (std::size_t i = 1; i < restores.size(); ++i)
      who += fmt::format(" and another ({})", restores[i]);
  }
  return fmt::format(
      "campaign.target: {} is in use by {}, which holds {} — wait for it to finish, or choose "
      "another campaign.name or campaign.target",
      case_dir.string(), who, (case_dir / kLockName).string());
}

// Whether the run named in lock file `fd` ("<host> <pid>") runs on this host and is ending: its
// main thread has ended (a zombie) while the lock is still held. A killed process keeps its flock
// until its last thread has ended (a flush thread in fsync can take seconds), and mpirun can
// return before that: such a lock is about to go.
bool holder_ending(int fd) {
  std::string holder(256, '\0');
  const ssize_t n = ::pread(fd, holder.data(), holder.size() - 1, 0);
  holder.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::istringstream words(holder);
  std::string host;
  long pid = 0;
  if (!(words >> host >> pid) || pid <= 0 || host != host_name()) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;  // gone: someone else holds the lock
  const auto paren = text.rfind(')');  // the state follows the command, which may hold spaces
  return paren != std::string::npos && paren + 2 < text.size() &&
         (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

// flock(fd, operation | LOCK_NB), tried again while the holder is ending (holder_ending), for at
// most kEndingHolderSeconds. Returns flock's result with its errno.
constexpr int kEndingHolderSeconds = 30;
int lock_unless_held(int fd, int operation) {
  int result = ::flock(fd, operation | LOCK_NB);
  int error = errno;
  for (int waited = 0; result != 0 && error == EWOULDBLOCK && waited < kEndingHolderSeconds * 50 &&
                       holder_ending(fd);
       ++waited) {
    ::usleep(20000);
    result = ::flock(fd, operation | LOCK_NB);
    error = errno;
  }
  errno = error;
  return result;
}

}  // namespace

CaseLock CaseLock::acquire(const fs::path& case_dir, std::string& problem, std::string& note) {
  const fs::path path = case_dir / kLockName;
  CaseLock lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) {
    problem = fmt::format("campaign.target: cannot open the lock file {}: {}", path.string(),
                          std::strerror(errno));
    return lock;
  }
  // A few tries: another run's up-front check holds a shared lock for a moment (lock_problem).
  int result = -1;
  for (int attempt = 0;
       attempt < 5 && (result = ::flock(lock.fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EWOULDBLOCK;
       ++attempt) {
    ::usleep(20000);
  }
  if (result != 0 &&
      errno == EWOULDBLOCK) {  // the file then names a keeping run unless restores hold it
    if (live_restores(case_dir).empty()) {
      result = lock_unless_held(lock.fd_, LOCK_EX);
    } else {
      errno = EWOULDBLOCK;
    }
  }
  if (result != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      problem = held_by_other(lock.fd_, case_dir);
    } else {
      note = fmt::format(
          "campaign.target: cannot lock {} ({}): this file system does not support flock here "
          "(Lustre "
          "needs the `flock` mount option), so a second run on this case is not kept out",
          path.string(), std::strerror(error));
    }
    ::close(std::exchange(lock.fd_, -1));
    return lock;
  }
  const std::string holder = fmt::format("{} {}\n", host_name(), ::getpid());
  if (::ftruncate(lock.fd_, 0) != 0 || ::pwrite(lock.fd_, holder.data(), holder.size(), 0) < 0) {
    note = fmt::format("campaign.target: cannot write host and pid to {}: {}", path.string(),
                       std::strerror(errno));
  }
  return lock;
}

CaseLock CaseLock::acquire_shared(const fs::path& case_dir, std::string& problem,
                                  std::string& note) {
  const fs::path path = case_dir / kLockName;
  CaseLock lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) {
    note = fmt::format(
        "campaign.target: cannot open the lock file {}: {} — a keeping run on this case is not "
        "kept "
        "out while this restore runs",
        path.string(), std::strerror(errno));
    return lock;
  }
  if (lock_unless_held(lock.fd_, LOCK_SH) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      problem = held_by_other(lock.fd_, case_dir);
    } else {
      note = fmt::format(
          "campaign.target: cannot lock {} ({}): a keeping run on this case is not kept out while "
          "this "
          "restore runs",
          path.string(), std::strerror(error));
    }
    ::close(std::exchange(lock.fd_, -1));
    return lock;
  }
  lock.reader_path_ = case_dir / fmt::format("{}{}.{}", kRestorePrefix, host_name(), ::getpid());
  lock.reader_fd_ = ::open(lock.reader_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.reader_fd_ < 0 || ::flock(lock.reader_fd_, LOCK_EX | LOCK_NB) != 0) {
    note = fmt::format(
        "campaign.target: cannot hold {}: {} (a keeping run that finds this case busy cannot name "
        "this restore)",
        lock.reader_path_.string(), std::strerror(errno));
  }
  return lock;
}

std::optional<std::string> lock_problem(const Case& c) {
  const fs::path path = case_directory(c) / kLockName;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // no lock file: no run has held this case
  std::optional<std::string> problem;
  // Shared: the processes of one run may check at once without seeing each other.
  if (lock_unless_held(fd, LOCK_SH) != 0 && errno == EWOULDBLOCK)
    problem = held_by_other(fd, case_directory(c));
  ::close(fd);
  return problem;
}

std::optional<std::int64_t> step_number_of(const Case& c, const std::string& name) {
  const auto digits = name.find_last_not_of("0123456789") + 1;  // npos + 1 == 0: all digits
  if (digits >= name.size() || name.size() - digits > 18) return std::nullopt;
  const std::int64_t step = std::stoll(name.substr(digits));
  // Only this layout's own names (iter_0000007 is not step 7 of the step_ layout).
  if (checkpoint_dir_name(c.directory_layout, step) != name) return std::nullopt;
  return step;
}

std::int64_t next_step_number(const Case& c) {
  std::int64_t highest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(case_directory(c), ec)) {
    if (const auto step = step_number_of(c, entry.path().filename().string()))
      highest = std::max(highest, *step);
  }
  return highest + 1;
}

std::int64_t create_step_directory(std::int64_t step,
                                   const std::function<fs::path(std::int64_t)>& name_of) {
  for (;; ++step) {
    const fs::path dir = name_of(step);
    if (::mkdir(dir.c_str(), 0755) == 0) return step;
    if (errno != EEXIST) {
      throw std::runtime_error(fmt::format("cannot create checkpoint directory {}: {}",
                                           dir.string(), std::strerror(errno)));
    }
  }
}

}  // namespace ckpt::harness
