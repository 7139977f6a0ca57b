#include "workloads/dtype.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace ckpt::workloads {
namespace {

// The state dtypes first; the rest only stored tensors have.
constexpr std::size_t kStateDtypes = 5;
constexpr std::array<std::pair<Dtype, std::string_view>, 6> kNames{{
    {Dtype::fp8, "fp8"},
    {Dtype::bf16, "bf16"},
    {Dtype::fp16, "fp16"},
    {Dtype::fp32, "fp32"},
    {Dtype::fp64, "fp64"},
    {Dtype::u8, "u8"},
}};

Dtype parse_among(std::string_view text, std::size_t count) {
  std::string accepted;
  for (std::size_t i = 0; i < count; ++i) {
    if (kNames[i].second == text) return kNames[i].first;
    accepted += (accepted.empty() ? "" : ", ") + std::string(kNames[i].second);
  }
  throw std::invalid_argument("unknown dtype `" + std::string(text) + "` (expected one of " +
                              accepted + ")");
}

}  // namespace

std::int64_t dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8:
    case Dtype::u8:
      return 1;
    case Dtype::bf16:
    case Dtype::fp16:
      return 2;
    case Dtype::fp32:
      return 4;
    case Dtype::fp64:
      return 8;
  }
  throw std::logic_error("dtype_bytes: unknown dtype");
}

std::string_view dtype_name(Dtype dtype) {
  for (const auto& [value, name] : kNames) {
    if (value == dtype) return name;
  }
  throw std::logic_error("dtype_name: unknown dtype");
}

Dtype parse_dtype(std::string_view text) {
  return parse_among(text, kStateDtypes);
}

Dtype parse_tensor_dtype(std::string_view text) {
  return parse_among(text, kNames.size());
}

}  // namespace ckpt::workloads
