#pragma once

// The size of what torch.save writes for one tensor: a zip archive (PyTorchStreamWriter over
// miniz) of the records `<archive>/data.pkl` (the pickled call that rebuilds the tensor),
// `.format_version`, `.storage_alignment`, `byteorder`, `data/0` (the tensor's bytes), `version`
// and `.data/serialization_id`. Each record is a local header whose extra field pads the data
// to a multiple of 64 bytes from the archive's start, the data, and a data descriptor; a central
// directory entry per record, the zip64 end-of-directory record and locator, and the
// end-of-directory record close it. torch.distributed.checkpoint writes every tensor item of a
// .distcp file so (FileSystemWriter: torch.save into the file's stream), "archive" its name.

#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/dtype.hpp"

namespace ckpt::harness {

// Bytes of the pickle (protocol 2) torch 2.15 writes for a contiguous tensor of `shape` whose
// storage is the tensor's own: the GLOBAL of its storage class, the persistent id, the size and
// stride tuples and the storage's element count, each integer as pickle encodes it.
std::uint64_t torch_save_pickle_bytes(const std::vector<std::int64_t>& shape,
                                      workloads::Dtype dtype);

// Where torch.save's archive puts its storages: the archive's bytes and each storage's offset
// from the archive's start (a multiple of 64).
struct TorchSaveArchive {
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> storage_offsets;
};

// The archive named `archive` (a file's name without its extension) around a pickle of
// `pickle_bytes` and the storages data/0, data/1, ... of `storage_bytes`, as
// torch_save_archive_bytes counts it.
TorchSaveArchive torch_save_archive(std::string_view archive, std::uint64_t pickle_bytes,
                                    const std::vector<std::uint64_t>& storage_bytes);

// Bytes of torch.save's archive named `archive` (a file's name without its extension) around a
// pickle of `pickle_bytes` and the storages data/0, data/1, ... of `storage_bytes`. Exact for
// records below 4 GiB (torch 2.15, compared with real files); above, miniz's zip64 fields are
// counted by its rules, not measured.
std::uint64_t torch_save_archive_bytes(std::string_view archive, std::uint64_t pickle_bytes,
                                       const std::vector<std::uint64_t>& storage_bytes);

// Bytes torch.save writes for one contiguous tensor of `shape` and `dtype` (its data included),
// archive name `archive` (a stream's; a file's is its name without the extension).
std::uint64_t torch_save_tensor_bytes(const std::vector<std::int64_t>& shape,
                                      workloads::Dtype dtype, std::string_view archive = "archive");

// The archive torch.save writes for one contiguous tensor of `shape` and `dtype`: its size and
// where the tensor's bytes lie in it.
TorchSaveArchive torch_save_tensor_archive(const std::vector<std::int64_t>& shape,
                                           workloads::Dtype dtype,
                                           std::string_view archive = "archive");

}  // namespace ckpt::harness
