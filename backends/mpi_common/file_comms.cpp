#include "backends/mpi_common/file_comms.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "backends/mpi_common/group_comm.hpp"
#include "backends/mpi_common/mpi_error.hpp"

namespace ckpt::backends::mpi {
namespace {

// An MPI_Group freed on scope exit.
class Group {
 public:
  Group() = default;
  ~Group() {
    if (group_ != MPI_GROUP_NULL && mpi_active()) MPI_Group_free(&group_);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  MPI_Group* out() { return &group_; }
  MPI_Group get() const { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

// This process's shared paths, sorted and without repeats.
std::vector<std::string> shared_paths(const IoPlan& plan) {
  std::vector<std::string> paths;
  for (const FilePlan& file : plan.files) {
    if (file.shared) paths.push_back(file.path);
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

// For every shared path any process names, the ranks (in `group`, ascending) that name it.
std::map<std::string, std::vector<int>> gather_members(MPI_Comm group,
                                                       const std::vector<std::string>& mine,
                                                       std::string_view backend) {
  std::string joined;  // each path followed by '\0'
  for (const std::string& path : mine) joined.append(path).push_back('\0');
  if (joined.size() > static_cast<std::size_t>(INT_MAX)) {
    throw IoError(std::string(backend) +
                  ": the shared paths of this process's plan exceed 2 GiB of text");
  }
  int size = 0;
  MPI_Comm_size(group, &size);
  std::vector<int> lengths(static_cast<std::size_t>(size));
  const int mine_length = static_cast<int>(joined.size());
  check_mpi(MPI_Allgather(&mine_length, 1, MPI_INT, lengths.data(), 1, MPI_INT, group), backend,
            "MPI_Allgather of shared path lengths for", "the plan's shared files");
  std::vector<int> displacements(lengths.size());
  long long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += lengths[r];
    if (total > INT_MAX)
      throw IoError(std::string(backend) + ": the group's shared paths exceed 2 GiB of text");
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(joined.data(), mine_length, MPI_CHAR, all.data(), lengths.data(),
                           displacements.data(), MPI_CHAR, group),
            backend, "MPI_Allgatherv of shared paths for", "the plan's shared files");
  std::map<std::string, std::vector<int>> members;
  for (int r = 0; r < size; ++r) {
    std::size_t at = static_cast<std::size_t>(displacements[static_cast<std::size_t>(r)]);
    const std::size_t end = at + static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
    while (at < end) {
      const std::size_t stop = all.find('\0', at);
      members[all.substr(at, stop - at)].push_back(r);
      at = stop + 1;
    }
  }
  return members;
}

// The communicator of `ranks` (which include this process), made collectively by them alone.
MPI_Comm create_comm(MPI_Comm group, const std::vector<int>& ranks, int tag,
                     const std::string& path, std::string_view backend) {
  Group whole;
  Group part;
  check_mpi(MPI_Comm_group(group, whole.out()), backend, "MPI_Comm_group for", path);
  check_mpi(MPI_Group_incl(whole.get(), static_cast<int>(ranks.size()), ranks.data(), part.out()),
            backend, "MPI_Group_incl for", path);
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_create_group(group, part.get(), tag, &comm), backend,
            "MPI_Comm_create_group for", path);
  return comm;
}

}  // namespace

FileComms::FileComms(MPI_Comm group, const IoPlan& plan, std::string_view backend) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(group, &size);
  MPI_Comm_rank(group, &rank);
  std::map<std::string, MPI_Comm> by_path;
  if (size > 1) {
    const auto members = gather_members(group, shared_paths(plan), backend);
    // The map iterates in sorted path order, the same on every process; each process takes part
    // only in the paths it names, so the creations it waits on come in the same order everywhere.
    int tag = 0;
    for (const auto& [path, ranks] : members) {
      tag = (tag + 1) % 32768;  // MPI guarantees tags up to 32767
      if (!std::binary_search(ranks.begin(), ranks.end(), rank)) continue;
      if (ranks.size() == 1) {
        by_path[path] = MPI_COMM_SELF;
        continue;
      }
      // Every process of the group: the group itself, so that opening a file the whole group
      // shares (IOR's and most checkpoints' case) makes no communicator inside the timed open.
      if (static_cast<int>(ranks.size()) == size) {
        by_path[path] = group;
        continue;
      }
      const MPI_Comm comm = create_comm(group, ranks, tag, path, backend);
      owned_.push_back(comm);
      by_path[path] = comm;
    }
  }
  per_file_.reserve(plan.files.size());
  for (const FilePlan& file : plan.files) {
    const auto found = by_path.find(file.path);
    per_file_.push_back(file.shared && found != by_path.end() ? found->second : MPI_COMM_SELF);
  }
}

FileComms::~FileComms() {
  release();
}

FileComms::FileComms(FileComms&& other) noexcept
    : per_file_(std::move(other.per_file_)), owned_(std::exchange(other.owned_, {})) {}

FileComms& FileComms::operator=(FileComms&& other) noexcept {
  if (this != &other) {
    release();
    per_file_ = std::move(other.per_file_);
    owned_ = std::exchange(other.owned_, {});
  }
  return *this;
}

MPI_Comm FileComms::of(std::size_t file_index) const {
  if (file_index >= per_file_.size()) {
    throw std::out_of_range("FileComms::of: file " + std::to_string(file_index) +
                            " of a plan with " + std::to_string(per_file_.size()) + " files");
  }
  return per_file_[file_index];
}

int FileComms::size_of(std::size_t file_index) const {
  int size = 1;
  MPI_Comm_size(of(file_index), &size);
  return size;
}

void FileComms::release() noexcept {
  if (mpi_active()) {
    for (MPI_Comm& comm : owned_) MPI_Comm_free(&comm);
  }
  owned_.clear();
}

}  // namespace ckpt::backends::mpi
