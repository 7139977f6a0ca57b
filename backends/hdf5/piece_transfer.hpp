#pragma once

#include <set>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/hdf5/hdf5_file.hpp"

namespace ckpt::backends::hdf5 {

// How one file's pieces move.
struct TransferMode {
  bool write = true;
  // Shared files: MPI-IO collective transfers, every process making, per dataset in the file's
  // order, as many H5Dwrite/H5Dread calls as the process with the most calls for it (empty
  // selections where it has fewer). Otherwise each process makes only its own calls.
  bool collective = false;
  // With `collective`: each process does its own MPI-IO inside the collective calls
  // (H5Pset_dxpl_mpio_collective_opt H5FD_MPIO_INDIVIDUAL_IO) instead of two-phase I/O.
  bool individual_io = false;
};

// Moves `pieces` (this process's, all of datasets in file.contents()) between `memory` and the
// file: one call per block of each piece's flat range (flat_range_blocks), the file selection
// that block, the memory a space of the block's shape over the block's elements, which lie
// contiguously from memory.data + memory_offset on. Adds to `notes` why HDF5 fell back from
// collective I/O (one line per distinct cause). Throws IoError naming the file and the dataset.
void move_pieces(const Hdf5File& file, const std::vector<DatasetPiece>& pieces, MemoryView memory,
                 const TransferMode& mode, std::set<std::string>& notes);

}  // namespace ckpt::backends::hdf5
