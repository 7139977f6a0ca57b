#include "harness/comm/mpi_comm.hpp"

#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace ckpt::harness {

MpiComm::MpiComm(bool thread_multiple) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                  &provided);
  MPI_Query_thread(&provided);  // what the library grants, whatever Init_thread said
  thread_level_ = provided >= MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                  : provided >= MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                  : provided >= MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                      : "MPI_THREAD_SINGLE";
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiComm::~MpiComm() {
  MPI_Finalize();
}

std::optional<int> MpiComm::mpi_handle() const {
  return MPI_Comm_c2f(MPI_COMM_WORLD);
}

void MpiComm::barrier() {
  MPI_Barrier(MPI_COMM_WORLD);
}

double MpiComm::max(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

double MpiComm::min(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return out;
}

std::uint64_t MpiComm::sum(std::uint64_t value) {
  std::uint64_t out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

bool MpiComm::all(bool value) {
  int mine = value ? 1 : 0;
  int out = 0;
  MPI_Allreduce(&mine, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return out != 0;
}

std::vector<std::string> MpiComm::gather(const std::string& mine) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displacements(lengths.size());
  if (rank_ == 0) std::exclusive_scan(lengths.begin(), lengths.end(), displacements.begin(), 0);
  std::string all(
      rank_ == 0 ? static_cast<std::size_t>(std::accumulate(lengths.begin(), lengths.end(), 0)) : 0,
      '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(displacements[i]),
                             static_cast<std::size_t>(lengths[i])));
  }
  return out;
}

std::string MpiComm::broadcast(const std::string& from_root) {
  int length = static_cast<int>(from_root.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string out = rank_ == 0 ? from_root : std::string(static_cast<std::size_t>(length), '\0');
  MPI_Bcast(out.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

namespace {

int message_count(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument(std::string("MpiComm::") + what + ": " + std::to_string(bytes) +
                                " bytes exceed one MPI message (2^31 - 1); send it in chunks");
  }
  return static_cast<int>(bytes);
}

constexpr int kPointToPointTag = 16;
constexpr int kExchangeTag = 17;

}  // namespace

void MpiComm::send(int to, std::span<const std::byte> bytes) {
  MPI_Send(bytes.data(), message_count(bytes.size(), "send"), MPI_BYTE, to, kPointToPointTag,
           MPI_COMM_WORLD);
}

void MpiComm::receive(int from, std::span<std::byte> bytes) {
  MPI_Recv(bytes.data(), message_count(bytes.size(), "receive"), MPI_BYTE, from, kPointToPointTag,
           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void MpiComm::exchange(int to, std::span<const std::byte> out, int from, std::span<std::byte> in) {
  MPI_Sendrecv(out.data(), message_count(out.size(), "exchange"), MPI_BYTE, to, kExchangeTag,
               in.data(), message_count(in.size(), "exchange"), MPI_BYTE, from, kExchangeTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void MpiComm::abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

}  // namespace ckpt::harness
