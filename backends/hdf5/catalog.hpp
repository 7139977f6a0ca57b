#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/hdf5/hdf5_options.hpp"

namespace ckpt::backends::hdf5 {

// The name of the 1-D unsigned-byte dataset that stores a plan without dataset pieces: each
// extent is the hyperslab [file_offset, file_offset + length) of it, so files written and read
// with different extent splits agree byte for byte.
inline constexpr std::string_view kBytesDataset = "bytes";

// One dataset of a file as the processes that open it must create it.
struct DatasetDef {
  std::string name;
  std::string dtype;
  std::uint32_t element_bytes = 1;
  std::vector<std::uint64_t> shape;
  // Element-wise largest slice extent of the pieces; the chunk shape derives from it.
  std::vector<std::uint64_t> slice;
  std::vector<std::uint64_t> chunk;  // empty: contiguous (set by finish())
  // Transfer calls of one process: one per block of each piece (flat_range_blocks); after
  // merge(): the most of any process, which every process makes in collective mode.
  std::uint64_t calls = 0;
  // The raw-byte dataset: `shape` is what writers create (the largest any of them needs) and an
  // existing dataset need only reach `needed` (the end of the pieces).
  bool raw_bytes = false;
  std::uint64_t needed = 0;
  // The leading dimension's divisor for a scaled-down checkpoint (hdf5::shrink): 1 keeps the
  // global shape; processes agree on the smallest.
  std::uint64_t shrink = 1;
  // A serial file's dataset of slice shape (hdf5::localize): the tensor's shape and where the
  // slice starts in it; empty when `shape` is the tensor's.
  std::vector<std::uint64_t> global_shape;
  std::vector<std::uint64_t> slice_offset;

  bool operator==(const DatasetDef&) const = default;
};

// What a file holds: its datasets sorted by name, and its root attributes.
struct FileContents {
  std::vector<DatasetDef> datasets;
  std::map<std::string, std::string> attributes;
};

// The pieces of one process in one file: FilePlan::datasets, or, when the plan has none, one
// piece of the raw-byte dataset per non-empty extent.
std::vector<DatasetPiece> pieces_of(const FilePlan& file);

// Checks the pieces against their own shapes and the memory view. Throws std::invalid_argument
// naming the file and the dataset.
void check_pieces(const std::string& path, const std::vector<DatasetPiece>& pieces,
                  std::uint64_t memory_size);

// One definition per dataset the pieces name, sorted by name. Throws std::invalid_argument when
// two pieces of one dataset disagree on dtype or shape.
FileContents contents_of(const std::string& path, const std::vector<DatasetPiece>& pieces,
                         const std::map<std::string, std::string>& attributes);

// The union of several processes' contents (the raw-byte dataset grows to the largest shape,
// counts take the largest). Throws IoError naming the path and the dataset or attribute when
// they disagree.
FileContents merge(const std::string& path, const std::vector<FileContents>& all);

// Sets every dataset's chunk shape for `layout`: the slice shape, with outer dimensions reduced
// until one chunk is below 2 GiB; contiguous for scalars and empty datasets.
void finish(FileContents& contents, Layout layout);

// A byte string for MPI and back.
std::string serialise(const FileContents& contents);
FileContents deserialise(const std::string& bytes, const std::string& path);

}  // namespace ckpt::backends::hdf5
