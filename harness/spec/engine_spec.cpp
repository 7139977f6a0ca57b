#include "harness/spec/engine_spec.hpp"

#include <array>
#include <utility>

namespace ckpt::harness {
namespace {

constexpr std::array<std::pair<EngineKind, std::string_view>, 4> kEngines{
    {{EngineKind::sync, "sync"},
     {EngineKind::async, "async"},
     {EngineKind::lazy, "lazy"},
     {EngineKind::tiered, "tiered"}}};
constexpr std::array<std::pair<ComputeKind, std::string_view>, 3> kComputes{
    {{ComputeKind::sleep, "sleep"}, {ComputeKind::spin, "spin"}, {ComputeKind::gpu, "gpu"}}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E kind) {
  for (const auto& [k, name] : table) {
    if (k == kind) return name;
  }
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_of(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view name) {
  for (const auto& [k, n] : table) {
    if (n == name) return k;
  }
  return std::nullopt;
}

}  // namespace

std::string_view engine_name(EngineKind kind) {
  return name_of(kEngines, kind);
}
std::optional<EngineKind> parse_engine(std::string_view name) {
  return parse_of(kEngines, name);
}
std::string_view compute_name(ComputeKind kind) {
  return name_of(kComputes, kind);
}
std::optional<ComputeKind> parse_compute(std::string_view name) {
  return parse_of(kComputes, name);
}

}  // namespace ckpt::harness
