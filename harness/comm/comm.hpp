#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ckpt::harness {

// The processes of one run: MPI's world when launched by mpirun (and built with MPI), else a
// single process. Every call is collective: all processes make it, in the same order.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string kind() const = 0;  // "mpi" or "single"
  // The communicator as MPI_Comm_c2f gives it, for collective backends; empty without MPI.
  virtual std::optional<int> mpi_handle() const { return std::nullopt; }
  // The thread level MPI granted (MPI_Query_thread) as its name, "MPI_THREAD_MULTIPLE" when any
  // thread may call MPI at any time; "" without MPI.
  virtual std::string thread_level() const { return ""; }
  virtual void barrier() = 0;
  virtual double max(double value) = 0;
  virtual double min(double value) = 0;
  virtual std::uint64_t sum(std::uint64_t value) = 0;
  virtual bool all(bool value) = 0;
  // Every process's string at process 0 (in rank order); empty elsewhere.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Process 0's string everywhere.
  virtual std::string broadcast(const std::string& from_root) = 0;
  // Point to point (not collective): `bytes` to process `to`, or from process `from` (exactly
  // bytes.size() bytes, at most 2^31 - 1 per message), in the order the pair posts them. Blocking.
  // Only MPI has other processes; the single process throws std::logic_error.
  virtual void send(int to, std::span<const std::byte> bytes);
  virtual void receive(int from, std::span<std::byte> bytes);
  // Point to point both ways at once (MPI_Sendrecv, not collective): `out` to process `to` while
  // `in` (exactly in.size() bytes) arrives from `from`; a ring of processes calling it cannot
  // deadlock. On a tag of its own (never matched by send/receive), so a second thread may use it
  // beside the calling thread's collectives when MPI granted MPI_THREAD_MULTIPLE.
  virtual void exchange(int to, std::span<const std::byte> out, int from, std::span<std::byte> in);
  // Ends every process of the run at once (a fatal error on one process must not leave the
  // others waiting in a collective). Does not return.
  [[noreturn]] virtual void abort(int status) = 0;

  // The processes agree on one problem: "" on every process when every `mine` is empty, else
  // the first non-empty one in rank order, on every process. Collective.
  std::string first_problem(const std::string& mine);
};

// MPI when this binary has MPI and was launched by an MPI launcher (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK set), or when `need_mpi` (a backend needs MPI even in one process:
// MPI then starts as a singleton); otherwise a single process. MPI is finalised when the Comm dies.
// MPI is asked for MPI_THREAD_FUNNELED, or MPI_THREAD_MULTIPLE with `thread_multiple` (a case
// drives a collective backend from an engine's flush thread; only then, as it may cost).
std::unique_ptr<Comm> make_comm(bool need_mpi = false, bool thread_multiple = false);

// Whether this process was started by an MPI launcher.
bool launched_by_mpi();

// The processes per node the MPI launcher reports (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
// PMI_LOCAL_SIZE); 1 for a process no launcher started; nullopt when a launcher started it
// without saying.
std::optional<int> launch_processes_per_node();

// Whether this build has MPI (for `ckptbench backends` and result records).
bool built_with_mpi();

// The MPI library this process runs with, as MPI_Get_library_version's first part ("Open MPI
// v4.1.4"), and the MPI standard of the headers built against ("MPI 3.1"); "" without MPI.
// Callable before MPI starts; starts nothing.
std::string mpi_library_version();

}  // namespace ckpt::harness
