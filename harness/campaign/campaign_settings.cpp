#include "harness/campaign/campaign_settings.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include "harness/common/config_error.hpp"
#include "harness/common/suggest.hpp"

namespace ckpt::harness::schema {
namespace {

const std::string kSetSource = "--set";

// A key's position: its value's, or the key's own for nodes without one (implicit tables).
std::pair<std::int64_t, std::int64_t> position_of(const toml::node& node, const toml::key& key) {
  const toml::source_region& region = node.source().begin.line > 0 ? node.source() : key.source();
  return {static_cast<std::int64_t>(region.begin.line),
          static_cast<std::int64_t>(region.begin.column)};
}

// One key=value of one known table, with its position in the file.
struct Found {
  std::string_view table;
  std::string_view key;
  const toml::node* node;
  std::int64_t line;
  std::int64_t column;
};

// The entries of `table` in file order.
std::vector<Found> entries_in_order(const toml::table& table, std::string_view table_name) {
  std::vector<Found> found;
  for (const auto& [key, node] : table) {
    const auto [line, column] = position_of(node, key);
    found.push_back(Found{table_name, key.str(), &node, line, column});
  }
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return found;
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string list;
  for (const std::string_view name : names) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

[[noreturn]] void fail_unknown_key(const Found& f, const std::string& source) {
  const std::vector<std::string_view> known = keys_of(f.table);
  std::string hint = did_you_mean(f.key, known);
  if (hint.empty()) hint = " ([" + std::string(f.table) + "] takes " + joined(known) + ")";
  throw ConfigError(source, f.line, std::string(f.table) + "." + std::string(f.key),
                    "unknown key" + hint);
}

// A top-level entry that is not one of our tables: a misspelt table, or a key written
// outside any table.
[[noreturn]] void fail_unknown_table(const Found& f, const std::string& source) {
  const std::vector<std::string_view> names(tables().begin(), tables().end());
  std::string problem = f.node->is_table() ? "unknown table" : "unknown key outside any table";
  std::string hint = did_you_mean(f.key, names);
  if (!f.node->is_table()) {
    for (const std::string_view table : names) {
      if (find(table, f.key) != nullptr) {
        hint = " — did you mean `" + std::string(f.key) + "` under [" + std::string(table) + "]?";
        break;
      }
    }
  }
  if (hint.empty()) hint = " (tables: " + joined(names) + ")";
  throw ConfigError(source, f.line, std::string(f.key), problem + hint);
}

bool takes_text(const KeySpec& spec) {
  return spec.kind == Kind::text || spec.kind == Kind::choice || spec.kind == Kind::dtype ||
         spec.kind == Kind::dtype_or_none;
}

// Converts one key's node: a single value, or a sweep when the node is an array. Values from
// --set have no line (`from_file` false).
Setting make_setting(const KeySpec& spec, const toml::node& node, const std::string& source,
                     std::int64_t line, bool from_file) {
  Setting s{&spec, {}, {}, source, line, false};
  const Where where{source, line, spec.dotted(), ""};
  if (!node.is_array() || spec.kind == Kind::rank_list) {
    s.values.push_back(convert(spec, node, where));
    s.lines.push_back(line);
    return s;
  }
  if (!spec.sweepable) {
    where.fail("cannot be swept (of [campaign], only iterations and warmup can): expected " +
               expected(spec) + ", found an array");
  }
  const toml::array& array = *node.as_array();
  if (array.empty())
    where.fail("empty sweep: give at least one value (or one value without brackets)");
  s.swept = true;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const auto element_line = static_cast<std::int64_t>(array[i].source().begin.line);
    const std::int64_t value_line = from_file && element_line > 0 ? element_line : line;
    const Where at{source, value_line, spec.dotted(),
                   " (value " + std::to_string(i + 1) + " of the sweep)"};
    s.values.push_back(convert(spec, array[i], at));
    s.lines.push_back(value_line);
  }
  return s;
}

// The key an override names; throws ConfigError with the closest known key.
const KeySpec& override_key(const std::string& dotted) {
  // backend.mpiio.collective: the table is all before the last dot.
  if (const std::size_t last = dotted.rfind('.'); last != std::string::npos) {
    const std::string_view view(dotted);
    if (const KeySpec* spec = find(view.substr(0, last), view.substr(last + 1))) return *spec;
  }
  const std::size_t dot = dotted.find('.');
  const std::string_view table = std::string_view(dotted).substr(0, dot);
  std::vector<std::string> all;
  for (const KeySpec& spec : keys()) all.push_back(spec.dotted());
  const std::vector<std::string_view> candidates(all.begin(), all.end());
  std::string hint = did_you_mean(dotted, candidates);
  for (const KeySpec& spec : keys()) {
    if (hint.empty() && dot == std::string::npos && spec.key == dotted) {
      hint = " — did you mean `" + spec.dotted() + "`?";
    }
  }
  if (hint.empty() && dot != std::string::npos && is_table(table)) {
    hint = " ([" + std::string(table) + "] takes " + joined(keys_of(table)) + ")";
  }
  if (hint.empty()) hint = " (keys are written table.key, e.g. backend.threads)";
  throw ConfigError(kSetSource, 0, dotted, "unknown key" + hint);
}

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return std::string(s.substr(first, s.find_last_not_of(" \t") - first + 1));
}

// One value of an override as the document {v = value}, or nullopt when the text is no TOML
// value, or is a number or boolean for a key that takes a string (campaign.name=2024).
std::optional<toml::table> override_value(const std::string& text, const KeySpec& spec) {
  toml::table document;
  try {
    document = toml::parse("v = " + text, std::string_view(kSetSource));
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
  const toml::node* value = document.get("v");
  if (document.size() != 1 || value == nullptr) return std::nullopt;
  if (takes_text(spec) && !value->is_string() && !value->is_array()) return std::nullopt;
  return document;
}

// The override's value as a one-key document {v = value}: the text parsed as TOML, or the text
// itself as a string when it is no TOML value (llama3-8b, /tmp/x, 4 MiB). A list whose elements
// are no TOML values takes each as one: [file_per_rank,shared_file] is two strings, [1,2,4]
// three integers.
toml::table override_document(const std::string& text, const KeySpec& spec) {
  if (auto document = override_value(text, spec)) return std::move(*document);
  toml::table document;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']' &&
      spec.kind != Kind::rank_list) {
    toml::array list;
    const std::string_view inner = std::string_view(text).substr(1, text.size() - 2);
    for (std::size_t begin = 0; begin < inner.size();) {
      const std::size_t comma = std::min(inner.find(',', begin), inner.size());
      const std::string element = trimmed(inner.substr(begin, comma - begin));
      if (const auto value = override_value(element, spec)) {
        list.push_back(*value->get("v"));
      } else {
        list.push_back(element);
      }
      begin = comma + 1;
    }
    document.insert("v", std::move(list));
    return document;
  }
  document.insert("v", text);
  return document;
}

bool is_top_table(std::string_view name) {
  return std::find(tables().begin(), tables().end(), name) != tables().end();
}

// [backend.<name>] holds backend <name>'s own options.
[[noreturn]] void fail_unknown_backend_table(const Found& f, const std::string& source) {
  std::vector<std::string_view> names;
  for (const std::string_view table : backend_tables())
    names.push_back(table.substr(table.find('.') + 1));
  std::string hint = did_you_mean(f.key, names);
  if (hint.empty())
    hint = " (backends with options: " + joined(names) + "; the others take only [backend] keys)";
  throw ConfigError(source, f.line, "backend." + std::string(f.key),
                    "unknown backend table" + hint);
}

// The entries of [backend], with those of its sub-tables [backend.<name>] under their own table
// names.
std::vector<Found> backend_entries(const toml::table& table, const std::string& source) {
  std::vector<Found> out;
  for (const Found& f : entries_in_order(table, "backend")) {
    if (!f.node->is_table() || find("backend", f.key) != nullptr) {
      out.push_back(f);
      continue;
    }
    const std::string name = "backend." + std::string(f.key);
    const auto sub = std::find(backend_tables().begin(), backend_tables().end(), name);
    if (sub == backend_tables().end()) fail_unknown_backend_table(f, source);
    const std::vector<Found> inner = entries_in_order(*f.node->as_table(), *sub);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

}  // namespace

Settings read_settings(const toml::table& document, const std::string& source) {
  Settings settings;
  std::vector<Found> found;
  for (const Found& top : entries_in_order(document, "")) {
    if (!is_top_table(top.key)) fail_unknown_table(top, source);
    if (!top.node->is_table()) {
      throw ConfigError(source, top.line, std::string(top.key),
                        "expected a table ([" + std::string(top.key) + "]), found " +
                            describe_toml_type(top.node->type()));
    }
    settings.table_lines[std::string(top.key)] = top.line;
    const std::vector<Found> inner = top.key == "backend"
                                         ? backend_entries(*top.node->as_table(), source)
                                         : entries_in_order(*top.node->as_table(), top.key);
    found.insert(found.end(), inner.begin(), inner.end());
  }
  // Sweeps expand in file order, and the first problem reported is the first in the file.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  for (const Found& f : found) {
    const KeySpec* spec = find(f.table, f.key);
    if (spec == nullptr) fail_unknown_key(f, source);
    settings.given.push_back(make_setting(*spec, *f.node, source, f.line, true));
  }
  return settings;
}

void apply_overrides(Settings& settings, const std::vector<std::string>& overrides) {
  for (const std::string& item : overrides) {
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos || trimmed(std::string_view(item).substr(0, equals)).empty()) {
      throw ConfigError(kSetSource, 0, item, "expected dotted.key=value, e.g. backend.threads=4");
    }
    const KeySpec& spec = override_key(trimmed(std::string_view(item).substr(0, equals)));
    const toml::table document =
        override_document(trimmed(std::string_view(item).substr(equals + 1)), spec);
    Setting setting = make_setting(spec, *document.get("v"), kSetSource, 0, false);
    // A key the file gives keeps its place in the sweep order; a new one comes last.
    const auto same = std::find_if(settings.given.begin(), settings.given.end(),
                                   [&](const Setting& s) { return s.spec == &spec; });
    if (same != settings.given.end()) {
      *same = std::move(setting);
    } else {
      settings.given.push_back(std::move(setting));
    }
  }
}

void require_keys(const Settings& settings, const std::string& source) {
  for (const KeySpec& spec : keys()) {
    if (!spec.required) continue;
    const bool given = std::any_of(settings.given.begin(), settings.given.end(),
                                   [&](const Setting& s) { return s.spec == &spec; });
    if (given) continue;
    const std::string table(spec.table);
    const auto table_line = settings.table_lines.find(table);
    throw ConfigError(source, table_line == settings.table_lines.end() ? 0 : table_line->second,
                      spec.dotted(),
                      "required key is missing: add `" + std::string(spec.key) + " = …` under [" +
                          table + "] (or --set " + spec.dotted() + "=…)");
  }
}

}  // namespace ckpt::harness::schema
