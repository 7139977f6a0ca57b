#include "harness/spec/reduce_spec.hpp"

namespace ckpt::harness {

std::string_view compression_name(Compression codec) {
  switch (codec) {
    case Compression::zstd:
      return "zstd";
    case Compression::bytegroup:
      return "bytegroup";
    case Compression::none:
      break;
  }
  return "none";
}

std::string_view compression_unit_name(CompressionUnit unit) {
  return unit == CompressionUnit::chunk ? "chunk" : "shard";
}

}  // namespace ckpt::harness
