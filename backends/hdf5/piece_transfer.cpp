#include "backends/hdf5/piece_transfer.hpp"

#include <map>

#include "backends/hdf5/flat_range.hpp"
#include "backends/hdf5/hdf5_error.hpp"
#include "backends/hdf5/hdf5_id.hpp"

namespace ckpt::backends::hdf5 {
namespace {

// Selects the piece's elements in `file_space` (none when it is empty).
void select_piece(hid_t file_space, const DatasetPiece& piece, const Where& where) {
  const std::vector<Block> blocks =
      flat_range_blocks(piece.offset, piece.extent, piece.flat_begin, piece.flat_end);
  if (blocks.empty()) {
    check(H5Sselect_none(file_space), where);
    return;
  }
  if (piece.global_shape.empty()) {  // a scalar's one element
    check(H5Sselect_all(file_space), where);
    return;
  }
  H5S_seloper_t operation = H5S_SELECT_SET;
  for (const Block& block : blocks) {
    const std::vector<hsize_t> start(block.start.begin(), block.start.end());
    const std::vector<hsize_t> count(block.count.begin(), block.count.end());
    check(H5Sselect_hyperslab(file_space, operation, start.data(), nullptr, count.data(), nullptr),
          where);
    operation = H5S_SELECT_OR;
  }
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

  // One H5Dwrite/H5Dread of `piece`, or of nothing when `piece` is null.
  void call(const DatasetPiece* piece, MemoryView memory) {
    const hsize_t elements = piece != nullptr ? piece->flat_end - piece->flat_begin : 0;
    const hsize_t memory_dims[1] = {elements > 0 ? elements : 1};
    const SpaceId memory_space(check(H5Screate_simple(1, memory_dims, nullptr), where_));
    std::byte placeholder{};
    std::byte* buffer = &placeholder;
    if (elements > 0) {
      select_piece(file_space_.get(), *piece, where_);
      buffer = memory.data + piece->memory_offset;
    } else {
      check(H5Sselect_none(file_space_.get()), where_);
      check(H5Sselect_none(memory_space.get()), where_);
    }
    const hid_t dataset = file_.dataset(index_);
    const hid_t type = file_.type(index_);
    const herr_t status =
        mode_.write
            ? H5Dwrite(dataset, type, memory_space.get(), file_space_.get(), transfer_list_, buffer)
            : H5Dread(dataset, type, memory_space.get(), file_space_.get(), transfer_list_, buffer);
    if (status < 0) {
      fail(where_,
           piece != nullptr ? piece_text(*piece) : "an empty selection (collective partner call)");
    }
  }

  // Why the last collective call fell back to independent I/O, or "" when it did not.
  std::string fallback() const {
    std::uint32_t local = 0;
    std::uint32_t global = 0;
    if (H5Pget_mpio_no_collective_cause(transfer_list_, &local, &global) < 0 || global == 0)
      return "";
    return "collective I/O not used (" + no_collective_text(global) + ")";
  }

 private:
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

}  // namespace

void move_pieces(const Hdf5File& file, const std::vector<DatasetPiece>& pieces, MemoryView memory,
                 const TransferMode& mode, std::set<std::string>& notes) {
  std::map<std::string, std::vector<const DatasetPiece*>> by_name;
  for (const DatasetPiece& piece : pieces) by_name[piece.name].push_back(&piece);
  const Where where{"set up the transfer of", file.path()};
  PlistId transfer_list(check(H5Pcreate(H5P_DATASET_XFER), where));
  const bool collective = mode.collective && file.parallel();
  if (file.parallel()) {
    check(H5Pset_dxpl_mpio(transfer_list.get(),
                           collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
          where);
  }
  const std::vector<DatasetDef>& datasets = file.contents().datasets;
  for (std::size_t i = 0; i < datasets.size(); ++i) {
    static const std::vector<const DatasetPiece*> none;
    const auto found = by_name.find(datasets[i].name);
    const std::vector<const DatasetPiece*>& mine = found != by_name.end() ? found->second : none;
    const std::uint64_t calls = collective ? datasets[i].pieces : mine.size();
    if (calls == 0) continue;
    DatasetMover mover(file, i, mode, transfer_list.get());
    for (std::uint64_t k = 0; k < calls; ++k) {
      mover.call(k < mine.size() ? mine[k] : nullptr, memory);
      if (collective) {
        if (const std::string why = mover.fallback(); !why.empty()) notes.insert(why);
      }
    }
  }
}

}  // namespace ckpt::backends::hdf5
