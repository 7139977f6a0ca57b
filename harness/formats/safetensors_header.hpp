#pragma once

// The safetensors file format (huggingface/safetensors): an 8-byte little-endian header length
// N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}
// padded with spaces to a multiple of 8, then the tensors' raw bytes, offsets relative to the
// end of the header. Tensors cover the data bytes back to back, without gaps.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/dtype.hpp"

namespace ckpt::harness {

// Readers (the official one included) refuse headers longer than this.
inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

// A bad safetensors file: what() is "<file>: <field>: <problem>", naming the fix when there is one.
class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // "BF16", "F32", ...
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, relative to the end of the header
  std::uint64_t end = 0;
};

struct SafetensorsHeader {
  std::uint64_t header_bytes = 0;          // 8 + N: where the data starts in the file
  std::vector<SafetensorsTensor> tensors;  // by begin offset
  std::map<std::string, std::string> metadata;
};

// The safetensors name of a ckptbench dtype (fp8 is stored as F8_E4M3, the weights' format; u8 as
// U8, MXFP4's packed blocks and scales).
std::string_view safetensors_dtype(workloads::Dtype dtype);
// Bytes per element of a safetensors dtype name, or nullopt for a name the format does not define.
std::optional<std::uint64_t> safetensors_dtype_bytes(std::string_view name);
// True when the safetensors package stores tensor `a` before `b` in a file: it sorts a file's
// tensors by dtype, greatest first in its Dtype enum (F64, F32, BF16, F16, F8_E4M3, ...), then
// by name, bytewise.
bool safetensors_stored_before(const SafetensorsTensor& a, const SafetensorsTensor& b);

// The header bytes (length word, JSON, padding) for `tensors` in the given order: "__metadata__"
// first, then each tensor. Offsets are taken as given.
std::string encode_safetensors_header(const std::vector<SafetensorsTensor>& tensors,
                                      const std::map<std::string, std::string>& metadata);

// Parses and checks the header at the start of `bytes` (at least the whole header, or the whole
// file) of a file of `file_size` bytes called `file` in errors. Throws SafetensorsError for a
// truncated header, a header length beyond the file or over kSafetensorsMaxHeaderBytes, bad JSON,
// a missing or mistyped field, an unknown dtype, offsets out of range, overlapping, leaving gaps
// or not matching dtype x shape.
SafetensorsHeader parse_safetensors_header(std::span<const std::byte> bytes,
                                           std::uint64_t file_size, std::string_view file);

// Bytes [offset, offset + length) of a file, fewer where it ends sooner; throws what its source
// throws when it cannot read them.
using SafetensorsByteReader =
    std::function<std::string(std::uint64_t offset, std::uint64_t length)>;

// Reads (its length word, then the rest) and parses the header of a file of `file_size` bytes
// through `read`: a file system's file or an object store's object. Throws SafetensorsError as
// parse_safetensors_header does, and when `read` returns fewer bytes than the size promises.
SafetensorsHeader read_safetensors_header(std::uint64_t file_size,
                                          const SafetensorsByteReader& read, std::string_view file);

// Reads and parses the header of the file at `path`. Throws SafetensorsError (also when the
// file cannot be opened or read).
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path);

}  // namespace ckpt::harness
