#include "backends/hdf5/piece_transfer.hpp"

#include <map>

#include "backends/hdf5/flat_range.hpp"
#include "backends/hdf5/hdf5_error.hpp"
#include "backends/hdf5/hdf5_id.hpp"

namespace ckpt::backends::hdf5 {
namespace {

// One H5Dwrite/H5Dread: a block of a piece and where its elements lie in memory.
struct Call {
  const DatasetPiece* piece;
  Block block;
  std::byte* buffer;
};

// The calls of this process's pieces of one dataset: one per block of each piece, in order.
std::vector<Call> calls_of(const std::vector<const DatasetPiece*>& pieces, MemoryView memory) {
  std::vector<Call> calls;
  for (const DatasetPiece* piece : pieces) {
    std::byte* at = memory.data + piece->memory_offset;
    for (Block& block :
         flat_range_blocks(piece->offset, piece->extent, piece->flat_begin, piece->flat_end)) {
      const std::uint64_t bytes = block.elements() * piece->element_bytes;
      calls.push_back(Call{piece, std::move(block), at});
      at += bytes;
    }
  }
  return calls;
}

std::string no_collective_text(std::uint32_t cause) {
  std::string text;
  const auto add = [&](std::uint32_t bit, const char* why) {
    if ((cause & bit) != 0) text += (text.empty() ? "" : ", ") + std::string(why);
  };
  add(H5D_MPIO_SET_INDEPENDENT, "independent transfer requested");
  add(H5D_MPIO_DATATYPE_CONVERSION, "datatype conversion");
  add(H5D_MPIO_DATA_TRANSFORMS, "data transforms");
  add(H5D_MPIO_MPI_OPT_TYPES_ENV_VAR_DISABLED, "HDF5_MPI_OPT_TYPES=0");
  add(H5D_MPIO_NOT_SIMPLE_OR_SCALAR_DATASPACES, "dataspaces neither simple nor scalar");
  add(H5D_MPIO_NOT_CONTIGUOUS_OR_CHUNKED_DATASET, "layout neither contiguous nor chunked");
  add(H5D_MPIO_ERROR_WHILE_CHECKING_COLLECTIVE_POSSIBLE, "error while checking");
  return text.empty() ? "cause " + std::to_string(cause) : text;
}

// Makes the calls of one dataset.
class DatasetMover {
 public:
  DatasetMover(const Hdf5File& file, std::size_t index, const TransferMode& mode,
               hid_t transfer_list)
      : file_(file),
        index_(index),
        mode_(mode),
        transfer_list_(transfer_list),
        where_{mode.write ? "write" : "read", file.path(), file.contents().datasets[index].name},
        file_space_(check(H5Dget_space(file.dataset(index)), where_)) {}

  // One H5Dwrite/H5Dread of a block, or of nothing when `call` is null. The memory space has the
  // block's shape, so that HDF5 maps it onto chunks block-wise (a 1-D memory space against an
  // n-D block makes chunked datasets map element by element, ~40x slower).
  void make(const Call* call) {
    SpaceId memory_space = call != nullptr ? select(*call) : select_nothing();
    std::byte placeholder{};
    std::byte* buffer = call != nullptr ? call->buffer : &placeholder;
    const hid_t dataset = file_.dataset(index_);
    const hid_t type = file_.type(index_);
    const herr_t status =
        mode_.write
            ? H5Dwrite(dataset, type, memory_space.get(), file_space_.get(), transfer_list_, buffer)
            : H5Dread(dataset, type, memory_space.get(), file_space_.get(), transfer_list_, buffer);
    if (status < 0) {
      fail(where_, call != nullptr ? piece_text(*call->piece)
                                   : "an empty selection (collective partner call)");
    }
  }

  // Why the last collective call fell back to independent I/O, or "" when it did not.
  std::string fallback() const {
    std::uint32_t local = 0;
    std::uint32_t global = 0;
    if (H5Pget_mpio_no_collective_cause(transfer_list_, &local, &global) < 0 || global == 0) {
      return "";
    }
    return "collective I/O not used (" + no_collective_text(global) + ")";
  }

 private:
  // Selects the block in the file space; returns a memory space of the block's shape.
  SpaceId select(const Call& call) {
    if (call.block.start.empty()) {  // a scalar's one element
      check(H5Sselect_all(file_space_.get()), where_);
      return SpaceId(check(H5Screate(H5S_SCALAR), where_));
    }
    const std::vector<hsize_t> start(call.block.start.begin(), call.block.start.end());
    const std::vector<hsize_t> count(call.block.count.begin(), call.block.count.end());
    check(H5Sselect_hyperslab(file_space_.get(), H5S_SELECT_SET, start.data(), nullptr,
                              count.data(), nullptr),
          where_);
    return SpaceId(
        check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), where_));
  }

  SpaceId select_nothing() {
    check(H5Sselect_none(file_space_.get()), where_);
    const hsize_t one[1] = {1};
    SpaceId memory_space(check(H5Screate_simple(1, one, nullptr), where_));
    check(H5Sselect_none(memory_space.get()), where_);
    return memory_space;
  }

  static std::string piece_text(const DatasetPiece& piece) {
    return "elements [" + std::to_string(piece.flat_begin) + ", " + std::to_string(piece.flat_end) +
           ") of its slice, memory offset " + std::to_string(piece.memory_offset) + ", length " +
           std::to_string(piece.bytes());
  }

  const Hdf5File& file_;
  std::size_t index_;
  const TransferMode& mode_;
  hid_t transfer_list_;
  Where where_;
  SpaceId file_space_;
};

PlistId transfer_list_of(const Hdf5File& file, bool collective, bool individual_io) {
  const Where where{"set up the transfer of", file.path()};
  PlistId transfer_list(check(H5Pcreate(H5P_DATASET_XFER), where));
  if (file.parallel()) {
    check(H5Pset_dxpl_mpio(transfer_list.get(),
                           collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
          where);
    // Collective calls whose I/O each process makes on its own (no two-phase aggregation): far
    // fewer collective MPI-IO operations per call, which OMPIO makes costly.
    if (collective && individual_io) {
      check(H5Pset_dxpl_mpio_collective_opt(transfer_list.get(), H5FD_MPIO_INDIVIDUAL_IO), where);
    }
  }
  return transfer_list;
}

}  // namespace

void move_pieces(const Hdf5File& file, const std::vector<DatasetPiece>& pieces, MemoryView memory,
                 const TransferMode& mode, std::set<std::string>& notes) {
  std::map<std::string, std::vector<const DatasetPiece*>> by_name;
  for (const DatasetPiece& piece : pieces) by_name[piece.name].push_back(&piece);
  const bool collective = mode.collective && file.parallel();
  const PlistId transfer_list = transfer_list_of(file, collective, mode.individual_io);
  const std::vector<DatasetDef>& datasets = file.contents().datasets;
  for (std::size_t i = 0; i < datasets.size(); ++i) {
    const auto found = by_name.find(datasets[i].name);
    const std::vector<Call> mine =
        found != by_name.end() ? calls_of(found->second, memory) : std::vector<Call>{};
    const std::uint64_t count = collective ? datasets[i].calls : mine.size();
    if (count == 0) continue;
    DatasetMover mover(file, i, mode, transfer_list.get());
    for (std::uint64_t k = 0; k < count; ++k) {
      mover.make(k < mine.size() ? &mine[k] : nullptr);
      if (!collective) continue;
      if (const std::string why = mover.fallback(); !why.empty()) notes.insert(why);
    }
  }
}

}  // namespace ckpt::backends::hdf5
