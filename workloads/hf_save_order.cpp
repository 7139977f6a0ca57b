#include "workloads/hf_save_order.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string_view>
#include <tuple>

namespace ckpt::workloads {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::int64_t number(std::string_view digits) {
  std::int64_t value = 0;
  for (const char c : digits) value = value * 10 + (c - '0');
  return value;
}

std::vector<std::string_view> parts_of(std::string_view name) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (std::size_t dot = name.find('.'); dot != std::string_view::npos;
       dot = name.find('.', begin)) {
    parts.push_back(name.substr(begin, dot - begin));
    begin = dot + 1;
  }
  parts.push_back(name.substr(begin));
  return parts;
}

// One part of transformers' dot_natural_key: a number sorts before any text; text compares as
// text, then by its trailing digits as a number, none before any.
struct NaturalPart {
  bool text = false;
  std::string_view stem;
  bool has_number = false;
  std::int64_t value = 0;
  auto tie() const { return std::tie(text, stem, has_number, value); }
  bool operator<(const NaturalPart& o) const { return tie() < o.tie(); }
};

std::vector<NaturalPart> natural_key(std::string_view name) {
  std::vector<NaturalPart> key;
  for (const std::string_view part : parts_of(name)) {
    if (all_digits(part)) {
      key.push_back({false, {}, true, number(part)});
      continue;
    }
    std::size_t stem = part.size();
    while (stem > 0 && part[stem - 1] >= '0' && part[stem - 1] <= '9') --stem;
    key.push_back({true, part.substr(0, stem), stem < part.size(), number(part.substr(stem))});
  }
  return key;
}

// A saved name as the model holds it in memory, and where it was cut from a fused tensor, its
// part and expert.
struct InMemory {
  std::string name;
  bool cut = false;
  int part = 0;
  std::int64_t expert = 0;
};

InMemory in_memory(const std::string& saved, const HfSaveOrder& rule) {
  std::string name = "." + saved + ".";
  for (const auto& [from, to] : rule.renames) {
    const std::string dotted = "." + from + ".";
    for (std::size_t at = name.find(dotted); at != std::string::npos;
         at = name.find(dotted, at + to.size() + 1)) {
      name.replace(at, dotted.size(), "." + to + ".");
    }
  }
  name = name.substr(1, name.size() - 2);
  InMemory out{name};
  const std::vector<std::string_view> parts = parts_of(name);
  const std::size_t n = parts.size();
  if (n < 4 || parts[n - 4] != "experts" || !all_digits(parts[n - 3]) || parts[n - 1] != "weight")
    return out;
  for (const HfSaveOrder::ExpertPart& p : rule.expert_parts) {
    if (parts[n - 2] != p.saved) continue;
    const std::size_t stem = name.size() - parts[n - 3].size() - parts[n - 2].size() -
                             parts[n - 1].size() - 2;  // up to and with "experts."
    return {name.substr(0, stem) + p.fused, true, p.part, number(parts[n - 3])};
  }
  return out;
}

HfSaveSequence resorted(const std::vector<std::string>& names, const HfSaveOrder& rule) {
  struct Entry {
    InMemory memory;
    std::vector<NaturalPart> key;
  };
  std::vector<Entry> entries;
  entries.reserve(names.size());
  for (const std::string& name : names) {
    InMemory memory = in_memory(name, rule);
    entries.push_back({memory, {}});
  }
  // The keys view the entries' names: build them once the vector no longer moves.
  for (Entry& e : entries) e.key = natural_key(e.memory.name);
  HfSaveSequence out;
  out.order.resize(names.size());
  std::iota(out.order.begin(), out.order.end(), std::size_t{0});
  std::stable_sort(out.order.begin(), out.order.end(), [&](std::size_t a, std::size_t b) {
    const Entry& x = entries[a];
    const Entry& y = entries[b];
    return std::tie(x.key, x.memory.part, x.memory.expert) <
           std::tie(y.key, y.memory.part, y.memory.expert);
  });
  std::map<std::pair<std::string, int>, std::size_t> storages;
  for (const std::size_t i : out.order) {
    const InMemory& m = entries[i].memory;
    const std::pair<std::string, int> id =
        m.cut ? std::pair{m.name, m.part} : std::pair{names[i], -1};
    out.storage.push_back(storages.emplace(id, storages.size()).first->second);
  }
  return out;
}

// Each part ranked: a number by its value, a listed module by its place in the list, any other
// after the listed ones by where the layout first has it.
HfSaveSequence by_modules(const std::vector<std::string>& names, const HfSaveOrder& rule) {
  std::map<std::string_view, std::int64_t> rank;
  for (const std::string& m : rule.modules) rank.emplace(m, static_cast<std::int64_t>(rank.size()));
  std::vector<std::vector<std::int64_t>> keys;
  keys.reserve(names.size());
  for (const std::string& name : names) {
    std::vector<std::int64_t>& key = keys.emplace_back();
    for (const std::string_view part : parts_of(name)) {
      if (all_digits(part)) {
        key.push_back(number(part));
      } else {
        key.push_back(rank.emplace(part, static_cast<std::int64_t>(rank.size())).first->second);
      }
    }
  }
  HfSaveSequence out;
  out.order.resize(names.size());
  std::iota(out.order.begin(), out.order.end(), std::size_t{0});
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  out.storage.resize(names.size());
  std::iota(out.storage.begin(), out.storage.end(), std::size_t{0});
  return out;
}

}  // namespace

HfSaveSequence hf_save_sequence(const std::vector<std::string>& names, const HfSaveOrder& rule) {
  return rule.resorted ? resorted(names, rule) : by_modules(names, rule);
}

}  // namespace ckpt::workloads
