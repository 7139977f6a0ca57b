#include "backends/mpiio/transfer.hpp"

#include <algorithm>

#include "backends/mpi_common/mpi_error.hpp"

namespace ckpt::backends::mpiio {
namespace {

// A request of at most the round's limit.
struct Piece {
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  int length = 0;
};

using Round = std::vector<Piece>;

std::string at(const std::string& path, std::uint64_t offset, std::uint64_t length) {
  return path + " at offset " + std::to_string(offset) + ", length " + std::to_string(length);
}

[[noreturn]] void throw_short(std::string_view backend, std::string_view operation,
                              const std::string& where, long long moved, std::uint64_t wanted,
                              bool writing) {
  throw IoError(std::string(backend) + ": " + std::string(operation) + " " + where +
                ": short transfer (" + std::to_string(moved) + " of " + std::to_string(wanted) +
                " bytes" + (writing ? ")" : "; the file ends before the plan does)"));
}

// Bytes the status says moved, or -1 when MPI cannot say.
long long moved_bytes(const MPI_Status& status) {
  int count = 0;
  if (MPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) return -1;
  return count;
}

// The extents in file order, cut into pieces of at most `limit`, packed into rounds of at most
// `limit` bytes each. A piece that overlaps the bytes of the round's previous pieces in the file
// starts a new round: a read may name bytes twice (two modeled ranks of one process loading the
// same replicated tensor, or each bridging a gap over the other's range), and Open MPI 4.1's
// OMPIO refuses a file type whose blocks overlap (MPI_ERR_TYPE) inside MPI_File_set_view before
// its collective part, so a process whose view was valid waited there for one that had left.
std::vector<Round> plan_rounds(std::vector<Extent> extents, std::uint64_t limit) {
  std::stable_sort(extents.begin(), extents.end(),
                   [](const Extent& a, const Extent& b) { return a.file_offset < b.file_offset; });
  std::vector<Round> rounds;
  std::uint64_t round_bytes = limit;  // forces a new round for the first piece
  std::uint64_t round_end = 0;        // the end in the file of the round's furthest piece
  for (const Extent& e : extents) {
    for (std::uint64_t done = 0; done < e.length;) {
      const std::uint64_t length = std::min(e.length - done, limit);
      const std::uint64_t at = e.file_offset + done;
      if (round_bytes + length > limit || at < round_end) {
        rounds.emplace_back();
        round_bytes = 0;
        round_end = 0;
      }
      rounds.back().push_back({at, e.memory_offset + done, static_cast<int>(length)});
      round_bytes += length;
      round_end = std::max(round_end, at + length);
      done += length;
    }
  }
  return rounds;
}

std::uint64_t bytes_of(const Round& round) {
  std::uint64_t total = 0;
  for (const Piece& p : round) total += static_cast<std::uint64_t>(p.length);
  return total;
}

// The round's file and memory datatypes; the first failing call's code.
int build_types(const Round& round, Datatype& file_type, Datatype& memory_type) {
  std::vector<int> lengths;
  std::vector<MPI_Aint> file_displacements;
  std::vector<MPI_Aint> memory_displacements;
  for (const Piece& p : round) {
    lengths.push_back(p.length);
    file_displacements.push_back(static_cast<MPI_Aint>(p.file_offset));
    memory_displacements.push_back(static_cast<MPI_Aint>(p.memory_offset));
  }
  const int count = static_cast<int>(round.size());
  const int code = file_type.create_hindexed(count, lengths.data(), file_displacements.data());
  if (code != MPI_SUCCESS) return code;
  return memory_type.create_hindexed(count, lengths.data(), memory_displacements.data());
}

// One collective call. An empty round (or one whose types could not be built) takes part with
// a count of 0 through a plain byte view.
void collective_round(const OpenedFile& file, const Round& round, const TransferContext& context,
                      PhaseErrors& errors) {
  const std::uint64_t wanted = bytes_of(round);
  const std::string where = file.path + " (collective round of " + std::to_string(round.size()) +
                            " pieces, " + std::to_string(wanted) + " bytes)";
  Datatype file_type;
  Datatype memory_type;
  const int built = round.empty() ? MPI_SUCCESS : build_types(round, file_type, memory_type);
  const bool typed = !round.empty() && built == MPI_SUCCESS;
  errors.capture(
      [&] { mpi::check_mpi(built, context.backend, "MPI_Type_create_hindexed for", where); });
  errors.capture([&] {
    mpi::check_mpi(MPI_File_set_view(file.file.get(), 0, MPI_BYTE,
                                     typed ? file_type.get() : MPI_BYTE, "native", context.info),
                   context.backend, "MPI_File_set_view", where);
  });
  MPI_Status status{};
  const int count = typed ? 1 : 0;
  const MPI_Datatype type = typed ? memory_type.get() : MPI_BYTE;
  const char* operation = context.writing ? "MPI_File_write_at_all" : "MPI_File_read_at_all";
  const int code =
      context.writing
          ? MPI_File_write_at_all(file.file.get(), 0, context.memory, count, type, &status)
          : MPI_File_read_at_all(file.file.get(), 0, context.memory, count, type, &status);
  errors.capture([&] {
    mpi::check_mpi(code, context.backend, operation, where);
    if (!typed) return;
    const long long moved = moved_bytes(status);
    if (moved != static_cast<long long>(wanted)) {
      throw_short(context.backend, operation, where, moved, wanted, context.writing);
    }
  });
}

// One collective call of at most one piece per process: an explicit offset and contiguous bytes
// in the file's default view, as IOR's collective calls are. No file view is set, so the call
// costs no MPI_File_set_view (collective, and in OMPIO a regrouping of the aggregators) per round.
void contiguous_round(const OpenedFile& file, const Round& round, const TransferContext& context,
                      PhaseErrors& errors) {
  const Piece nothing;
  const Piece& piece = round.empty() ? nothing : round.front();
  const std::string where =
      at(file.path, piece.file_offset, static_cast<std::uint64_t>(piece.length));
  std::byte* memory = context.memory + piece.memory_offset;
  const auto offset = static_cast<MPI_Offset>(piece.file_offset);
  MPI_Status status{};
  const char* operation = context.writing ? "MPI_File_write_at_all" : "MPI_File_read_at_all";
  const int code =
      context.writing
          ? MPI_File_write_at_all(file.file.get(), offset, memory, piece.length, MPI_BYTE, &status)
          : MPI_File_read_at_all(file.file.get(), offset, memory, piece.length, MPI_BYTE, &status);
  errors.capture([&] {
    mpi::check_mpi(code, context.backend, operation, where);
    const long long moved = moved_bytes(status);
    if (piece.length > 0 && moved != piece.length) {
      throw_short(context.backend, operation, where, moved,
                  static_cast<std::uint64_t>(piece.length), context.writing);
    }
  });
}

std::uint64_t widest(const std::vector<Round>& rounds) {
  std::size_t pieces = 0;
  for (const Round& round : rounds) pieces = std::max(pieces, round.size());
  return pieces;
}

}  // namespace

std::uint64_t round_limit(const std::vector<Extent>& extents) {
  std::uint64_t largest = 0;
  for (const Extent& e : extents) largest = std::max(largest, e.length);
  return std::min(largest, kMaxRequestBytes);
}

std::size_t round_count(const std::vector<Extent>& extents) {
  return plan_rounds(extents, round_limit(extents)).size();
}

void check_within_file(const OpenedFile& file, std::string_view backend) {
  MPI_Offset size = 0;
  mpi::check_mpi(MPI_File_get_size(file.file.get(), &size), backend, "MPI_File_get_size",
                 file.path);
  for (const Extent& e : file.extents) {
    if (e.length > 0 && e.file_offset + e.length > static_cast<std::uint64_t>(size)) {
      throw IoError(std::string(backend) + ": read " + at(file.path, e.file_offset, e.length) +
                    ": file shorter than the plan (it holds " + std::to_string(size) + " bytes)");
    }
  }
}

void transfer_independent(const OpenedFile& file, const TransferContext& context) {
  const char* operation = context.writing ? "MPI_File_write_at" : "MPI_File_read_at";
  for (const Extent& e : file.extents) {
    for (std::uint64_t done = 0; done < e.length;) {
      const std::uint64_t length = std::min(e.length - done, kMaxRequestBytes);
      const auto offset = static_cast<MPI_Offset>(e.file_offset + done);
      std::byte* memory = context.memory + e.memory_offset + done;
      MPI_Status status{};
      const int count = static_cast<int>(length);
      const int code =
          context.writing
              ? MPI_File_write_at(file.file.get(), offset, memory, count, MPI_BYTE, &status)
              : MPI_File_read_at(file.file.get(), offset, memory, count, MPI_BYTE, &status);
      const std::string where = at(file.path, e.file_offset + done, length);
      mpi::check_mpi(code, context.backend, operation, where);
      const long long moved = moved_bytes(status);
      if (moved != static_cast<long long>(length)) {
        throw_short(context.backend, operation, where, moved, length, context.writing);
      }
      done += length;
    }
  }
}

CollectiveRounds transfer_collective(const OpenedFile& file, const TransferContext& context,
                                     PhaseErrors& errors) {
  const std::uint64_t limit = round_limit(file.extents);
  std::vector<Round> rounds = plan_rounds(file.extents, limit);
  const std::uint64_t mine[3] = {rounds.size(), limit, widest(rounds)};
  std::uint64_t agreed[3] = {mine[0], mine[1], mine[2]};
  errors.capture([&] {
    mpi::check_mpi(MPI_Allreduce(mine, agreed, 3, MPI_UINT64_T, MPI_MAX, file.comm),
                   context.backend, "MPI_Allreduce of the collective round count for", file.path);
  });
  const auto count = static_cast<int>(agreed[0]);
  // Every process agrees: a file view is collective, so either all set one or none does.
  const bool contiguous = agreed[2] <= 1;
  const Round nothing;
  for (int r = 0; r < count; ++r) {
    const auto index = static_cast<std::size_t>(r);
    const Round& round = index < rounds.size() ? rounds[index] : nothing;
    if (contiguous) {
      contiguous_round(file, round, context, errors);
    } else {
      collective_round(file, round, context, errors);
    }
  }
  return {count, agreed[1], contiguous};
}

}  // namespace ckpt::backends::mpiio
