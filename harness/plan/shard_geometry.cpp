#include "harness/plan/shard_geometry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "harness/memory/checksum.hpp"
#include "harness/memory/trained_words.hpp"

namespace ckpt::harness {
namespace {

pattern::ContentState content_state(workloads::StateKind state) {
  switch (state) {
    case workloads::StateKind::master:
      return pattern::ContentState::master;
    case workloads::StateKind::exp_avg:
      return pattern::ContentState::exp_avg;
    case workloads::StateKind::exp_avg_sq:
      return pattern::ContentState::exp_avg_sq;
    case workloads::StateKind::weight:
      break;
  }
  return pattern::ContentState::weight;
}

pattern::ContentFormat content_format(workloads::Dtype dtype) {
  if (dtype == workloads::Dtype::bf16) return pattern::ContentFormat::bf16;
  if (dtype == workloads::Dtype::fp32) return pattern::ContentFormat::fp32;
  return pattern::ContentFormat::other;
}

bool shrinks_exactly(const workloads::Shard& s, std::int64_t scale) {
  return !s.global_shape.empty() && s.global_shape[0] % scale == 0 && s.offset[0] % scale == 0 &&
         s.extent[0] % scale == 0;
}

}  // namespace

ShardGeometry shard_geometry(const workloads::Shard& shard, std::int64_t scale) {
  ShardGeometry g;
  g.global_shape = shard.global_shape;
  g.offset = shard.offset;
  g.extent = shard.extent;
  g.element_bytes = workloads::dtype_bytes(shard.dtype);
  g.flat_begin = shard.flat_begin;
  g.flat_end = shard.flat_end;
  if (scale <= 1 || shard.unscaled) return g;
  if (shrinks_exactly(shard, scale)) {
    g.global_shape[0] /= scale;
    g.offset[0] /= scale;
    g.extent[0] /= scale;
    g.flat_begin = shard.flat_begin / scale;
    g.flat_end = shard.flat_end / scale;
    return g;
  }
  g.exact = false;
  g.flat_end = g.flat_begin + std::max<std::int64_t>(1, shard.elements() / scale);
  return g;
}

std::vector<GlobalRun> global_runs(const ShardGeometry& g) {
  const std::size_t dims = g.global_shape.size();
  if (dims == 0) return {{0, g.flat_begin, g.elements()}};
  // The lowest dimension k below which the slice spans whole rows: chunks of extent[k] × inner
  // elements are contiguous, one per index of the dimensions above k.
  std::size_t k = dims - 1;
  while (k > 0 && g.extent[k] == g.global_shape[k]) --k;
  std::int64_t inner = 1;
  for (std::size_t d = k + 1; d < dims; ++d) inner *= g.global_shape[d];
  const std::int64_t chunk = g.extent[k] * inner;
  std::vector<GlobalRun> runs;
  if (chunk == 0 || g.elements() <= 0) return runs;
  for (std::int64_t c = g.flat_begin / chunk; c * chunk < g.flat_end; ++c) {
    // Global start of chunk c: its index over the dimensions above k, offset by the slice.
    std::int64_t rest = c;
    std::int64_t global = 0;
    std::int64_t stride = inner * g.global_shape[k];
    for (std::size_t d = k; d-- > 0;) {
      global += (g.offset[d] + rest % g.extent[d]) * stride;
      rest /= g.extent[d];
      stride *= g.global_shape[d];
    }
    global += g.offset[k] * inner;
    const std::int64_t lo = std::max(g.flat_begin, c * chunk);
    const std::int64_t hi = std::min(g.flat_end, (c + 1) * chunk);
    runs.push_back({lo - g.flat_begin, global + (lo - c * chunk), hi - lo});
  }
  return runs;
}

std::string global_index_text(const std::vector<std::int64_t>& shape, std::int64_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

std::uint64_t tensor_data_key(std::string_view name, workloads::StateKind state,
                              std::uint64_t seed) {
  std::string identity(name);
  identity.push_back('\0');
  auto add = [&identity](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) identity.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  add(seed);
  add(static_cast<std::uint64_t>(state));
  return checksum64(identity);
}

std::uint64_t shard_data_key(const workloads::Shard& shard, std::uint64_t seed,
                             DataPattern pattern) {
  const std::uint64_t key = tensor_data_key(shard.name, shard.state, seed);
  if (pattern != DataPattern::trained) return key;
  return pattern::with_content(
      key, pattern::content_code(content_state(shard.state), content_format(shard.dtype)));
}

}  // namespace ckpt::harness
