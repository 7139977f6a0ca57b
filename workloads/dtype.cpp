#include "workloads/dtype.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace ckpt::workloads {
namespace {

constexpr std::array<std::pair<Dtype, std::string_view>, 5> kNames{{
    {Dtype::fp8, "fp8"},
    {Dtype::bf16, "bf16"},
    {Dtype::fp16, "fp16"},
    {Dtype::fp32, "fp32"},
    {Dtype::fp64, "fp64"},
}};

}  // namespace

std::int64_t dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8:
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
  for (const auto& [value, name] : kNames) {
    if (name == text) return value;
  }
  throw std::invalid_argument("unknown dtype `" + std::string(text) +
                              "` (expected one of fp8, bf16, fp16, fp32, fp64)");
}

}  // namespace ckpt::workloads
