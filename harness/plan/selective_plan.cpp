#include "harness/plan/selective_plan.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

#include "harness/plan/extent_builder.hpp"

namespace ckpt::harness {

namespace {

std::optional<std::int64_t> number_of(std::string_view part) {
  if (part.empty() ||
      !std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
  return error == std::errc() ? std::optional(value) : std::nullopt;
}

// The first all-digit component of a dotted name; with `after`, only one whose preceding
// component ends in it.
std::optional<std::int64_t> first_number(std::string_view name, std::string_view after) {
  std::string_view previous;
  while (!name.empty()) {
    const std::size_t dot = name.find('.');
    const std::string_view part = name.substr(0, dot);
    if (after.empty() || previous.ends_with(after)) {
      if (const auto value = number_of(part)) return value;
    }
    if (dot == std::string_view::npos) break;
    previous = part;
    name.remove_prefix(dot + 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> tensor_layer(std::string_view name) {
  return first_number(name, "");
}

std::optional<std::int64_t> tensor_expert(std::string_view name) {
  return first_number(name, "experts");
}

bool selective_due(const SelectiveSpec& spec, const workloads::Shard& shard, std::int64_t turn) {
  if (spec.experts > 0 && spec.total_experts > 0) {
    const std::optional<std::int64_t> expert = tensor_expert(shard.name);
    if (!expert) return true;
    const std::int64_t e = spec.total_experts;
    return ((*expert - turn * spec.experts) % e + e) % e < spec.experts;
  }
  if (spec.every <= 1) return true;
  return tensor_layer(shard.name).value_or(0) % spec.every == turn % spec.every;
}

RankPlan emptied_plan(const RankPlan& logical) {
  RankPlan out = logical;
  out.shards.clear();
  out.payload_bytes = 0;
  return out;
}

RankPlan selective_plan(const RankPlan& logical, const std::vector<bool>& keep, const Case& c,
                        const std::filesystem::path& dir) {
  if (keep.size() != logical.shards.size())
    throw std::logic_error("selective plan: one flag per shard is needed");
  RankPlan out = emptied_plan(logical);
  PackedFiles files(dir);
  for (std::size_t i = 0; i < logical.shards.size(); ++i) {
    if (!keep[i]) continue;
    PlacedShard s = logical.shards[i];
    // A compressed shard's frames lie at stored_offset of the stored plan's buffer.
    s.file_offset = s.stored_bytes > 0 ? files.add(s.file, s.stored_offset, s.stored_bytes)
                                       : files.add(s.file, s.memory_offset, s.bytes);
    out.payload_bytes += s.bytes;
    out.shards.push_back(std::move(s));
  }
  out.io.files = files.files(c.coalesce_bytes, c.chunk_bytes);
  return out;
}

}  // namespace ckpt::harness
