#include "backends/hdf5/agreement.hpp"

#include <climits>
#include <vector>

#include "backends/mpi_common/mpi_error.hpp"

namespace ckpt::backends::hdf5 {

FileContents agree(MPI_Comm comm, const FileContents& mine, const std::string& path) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size == 1) return mine;
  const std::string bytes = serialise(mine);
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw IoError("hdf5: " + path + ": this process's dataset list exceeds 2 GiB");
  }
  const int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  mpi::check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "hdf5",
                 "MPI_Allgather of dataset list lengths for", path);
  std::vector<int> displacements(lengths.size());
  long long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += lengths[r];
    if (total > INT_MAX)
      throw IoError("hdf5: " + path + ": the processes' dataset lists exceed 2 GiB");
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  mpi::check_mpi(MPI_Allgatherv(bytes.data(), length, MPI_BYTE, all.data(), lengths.data(),
                                displacements.data(), MPI_BYTE, comm),
                 "hdf5", "MPI_Allgatherv of dataset lists for", path);
  std::vector<FileContents> each;
  each.reserve(lengths.size());
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    each.push_back(deserialise(all.substr(static_cast<std::size_t>(displacements[r]),
                                          static_cast<std::size_t>(lengths[r])),
                               path));
  }
  return merge(path, each);
}

void agree_on_calls(MPI_Comm comm, FileContents& contents, const std::string& path) {
  std::vector<unsigned long long> calls;
  calls.reserve(contents.datasets.size());
  for (const DatasetDef& def : contents.datasets) calls.push_back(def.calls);
  if (calls.size() > static_cast<std::size_t>(INT_MAX))
    throw IoError("hdf5: " + path + ": more than INT_MAX datasets");
  mpi::check_mpi(MPI_Allreduce(MPI_IN_PLACE, calls.data(), static_cast<int>(calls.size()),
                               MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm),
                 "hdf5", "MPI_Allreduce of transfer call counts for", path);
  for (std::size_t i = 0; i < calls.size(); ++i) contents.datasets[i].calls = calls[i];
}

bool broadcast_flag(MPI_Comm comm, bool value, const std::string& path) {
  int flag = value ? 1 : 0;
  mpi::check_mpi(MPI_Bcast(&flag, 1, MPI_INT, 0, comm), "hdf5",
                 "MPI_Bcast of whether the file exists for", path);
  return flag != 0;
}

GroupVote vote(MPI_Comm comm, bool ok, bool flag) {
  int local[2] = {ok ? 0 : 1, flag ? 1 : 0};
  int global[2] = {0, 0};
  mpi::check_mpi(MPI_Allreduce(local, global, 2, MPI_INT, MPI_MAX, comm), "hdf5",
                 "MPI_Allreduce of plan checks for", "the plan");
  return GroupVote{global[0] == 0, global[1] != 0};
}

}  // namespace ckpt::backends::hdf5
