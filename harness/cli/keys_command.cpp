#include "harness/cli/keys_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "harness/campaign/campaign_schema.hpp"
#include "harness/common/suggest.hpp"
#include "workloads/dtype.hpp"

namespace ckpt::harness {
namespace {

using schema::KeySpec;
using schema::Kind;

constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::text:
      return "text";
    case Kind::boolean:
      return "boolean";
    case Kind::integer:
      return "integer";
    case Kind::size:
      return "size";
    case Kind::choice:
      return "choice";
    case Kind::dtype:
    case Kind::dtype_or_none:
      return "dtype";
    case Kind::rank_list:
      return "rank list";
    case Kind::string_map:
      return "table";
    case Kind::number:
      return "number";
  }
  return "value";
}

// A byte count as the campaign accepts it back, in the unit that divides it with the smallest
// count: "64 MiB", "50 GB" (not "48828125 KiB"), else the plain number.
std::string size_text(std::int64_t bytes) {
  constexpr std::array<std::pair<std::string_view, std::int64_t>, 6> kUnits{
      {{"TiB", std::int64_t{1} << 40},
       {"GiB", std::int64_t{1} << 30},
       {"MiB", std::int64_t{1} << 20},
       {"KiB", std::int64_t{1} << 10},
       {"GB", 1'000'000'000},
       {"MB", 1'000'000}}};
  if (bytes == 0) return "0";
  std::string text = std::to_string(bytes);
  std::int64_t smallest = bytes;
  for (const auto& [unit, size] : kUnits) {
    if (bytes % size == 0 && bytes / size < smallest) {
      smallest = bytes / size;
      text = fmt::format("{} {}", smallest, unit);
    }
  }
  return text;
}

std::string number_text(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return std::string(text.data(), end);
}

std::string default_text(const KeySpec& spec) {
  if (spec.required) return "required";
  if (std::holds_alternative<std::monostate>(spec.fallback)) return "unset";
  if (const auto* b = std::get_if<bool>(&spec.fallback)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<std::int64_t>(&spec.fallback)) {
    return spec.kind == Kind::size ? size_text(*i) : std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&spec.fallback)) return number_text(*d);
  if (const auto* s = std::get_if<std::string>(&spec.fallback)) return *s;
  if (std::holds_alternative<std::vector<std::int64_t>>(spec.fallback)) return "[]";
  return "{}";
}

std::string range_text(const KeySpec& spec, std::string_view unit) {
  if (spec.max == kNoMax) return fmt::format("≥ {}{}", spec.min, unit);
  return fmt::format("{}–{}{}", spec.min, spec.max, unit);
}

std::string dtype_names(bool with_none) {
  using workloads::Dtype;
  std::vector<std::string_view> names;
  for (const Dtype d : {Dtype::fp8, Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp64}) {
    names.push_back(workloads::dtype_name(d));
  }
  if (with_none) names.emplace_back("none");
  return fmt::format("{}", fmt::join(names, ", "));
}

// What the key accepts: its range, its choices or its kind.
std::string accepts_text(const KeySpec& spec) {
  switch (spec.kind) {
    case Kind::integer:
      return range_text(spec, "");
    case Kind::size:
      return range_text(spec, " bytes");
    case Kind::number:
      return range_text(spec, " (a number)");
    case Kind::choice:
      return fmt::format("{}", fmt::join(spec.choices, ", "));
    case Kind::dtype:
    case Kind::dtype_or_none:
      return dtype_names(spec.kind == Kind::dtype_or_none);
    case Kind::boolean:
      return "true, false";
    case Kind::rank_list:
      return "array of ranks";
    case Kind::string_map:
      return "table of strings";
    case Kind::text:
      return "text";
  }
  return "a value";
}

// In a Markdown table cell '<' would open an HTML tag ("<target>" would vanish) and '*' an
// emphasis.
std::string markdown_cell(std::string_view text) {
  std::string cell;
  for (const char c : text) {
    if (c == '<' || c == '*') cell += '\\';
    cell += c;
  }
  return cell;
}

bool selected(const KeySpec& spec, std::string_view prefix) {
  if (prefix.empty()) return true;
  const std::string dotted = spec.dotted();
  return dotted == prefix || (dotted.size() > prefix.size() && dotted.starts_with(prefix) &&
                              dotted[prefix.size()] == '.');
}

std::vector<const KeySpec*> select_keys(std::string_view prefix) {
  std::vector<const KeySpec*> chosen;
  for (const KeySpec& spec : schema::keys()) {
    if (selected(spec, prefix)) chosen.push_back(&spec);
  }
  if (!chosen.empty()) return chosen;
  std::vector<std::string> names;
  for (const std::string_view table : schema::tables()) names.emplace_back(table);
  for (const std::string_view table : schema::backend_tables()) names.emplace_back(table);
  for (const KeySpec& spec : schema::keys()) names.push_back(spec.dotted());
  const std::string hint = did_you_mean(prefix, names);
  throw std::invalid_argument(
      fmt::format("keys: `{}` is no campaign table or key{}", prefix,
                  hint.empty() ? " — `ckptbench keys` lists every key" : hint));
}

nlohmann::json key_json(const KeySpec& spec) {
  nlohmann::json j{{"key", spec.dotted()},          {"table", spec.table},
                   {"type", kind_name(spec.kind)},  {"default", schema::to_json(spec.fallback)},
                   {"required", spec.required},     {"sweepable", spec.sweepable},
                   {"accepts", accepts_text(spec)}, {"help", spec.help}};
  if (spec.kind == Kind::integer || spec.kind == Kind::size || spec.kind == Kind::number) {
    j["min"] = spec.min;
    if (spec.max != kNoMax) j["max"] = spec.max;
  }
  if (!spec.choices.empty()) j["choices"] = spec.choices;
  return j;
}

// One table per campaign table, each under a heading that links can name (#load, #backendhdf5).
void print_markdown(const std::vector<const KeySpec*>& chosen, std::ostream& out) {
  std::string_view table;
  for (const KeySpec* spec : chosen) {
    if (spec->table != table) {
      table = spec->table;
      fmt::print(
          out,
          "{}### [{}]\n\n| key | default | accepts | sweep | meaning |\n|---|---|---|---|---|\n",
          spec == chosen.front() ? "" : "\n", table);
    }
    fmt::print(out, "| `{}` | {} | {} | {} | {} |\n", spec->dotted(), default_text(*spec),
               accepts_text(*spec), spec->sweepable ? "yes" : "no", markdown_cell(spec->help));
  }
}

// The help under each key, wrapped at 100 columns.
void print_help_lines(std::string_view help, std::ostream& out) {
  constexpr std::size_t kWidth = 100;
  constexpr std::string_view kIndent = "    ";
  std::string line(kIndent);
  std::size_t start = 0;
  while (start < help.size()) {
    std::size_t end = help.find(' ', start);
    if (end == std::string_view::npos) end = help.size();
    const std::string_view word = help.substr(start, end - start);
    if (line.size() > kIndent.size() && line.size() + 1 + word.size() > kWidth) {
      fmt::print(out, "{}\n", line);
      line = kIndent;
    }
    if (line.size() > kIndent.size()) line += ' ';
    line += word;
    start = end + 1;
  }
  fmt::print(out, "{}\n", line);
}

void print_text(const std::vector<const KeySpec*>& chosen, std::ostream& out) {
  fmt::print(out, "{:<36} {:<16} {}\n", "key", "default", "accepts");
  for (const KeySpec* spec : chosen) {
    fmt::print(out, "{:<36} {:<16} {}{}\n", spec->dotted(), default_text(*spec),
               accepts_text(*spec), spec->sweepable ? "" : " (one value, no sweep)");
    print_help_lines(spec->help, out);
  }
}

}  // namespace

CLI::App* add_keys_command(CLI::App& app, KeysOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "keys", "List the campaign keys with their defaults, ranges or choices and help");
  cmd->add_option("PREFIX", o.prefix,
                  "Only the keys of this table (load, backend.hdf5) or this one key");
  CLI::Option* json = cmd->add_flag(
      "--json", o.json, "Print a JSON array (key, type, default, range or choices, help)");
  cmd->add_flag("--markdown", o.markdown,
                "Print the keys as docs/campaign-keys.md's Markdown tables")
      ->excludes(json);
  return cmd;
}

void run_keys(const KeysOptions& o, std::ostream& out) {
  const std::vector<const KeySpec*> chosen = select_keys(o.prefix);
  if (o.markdown) return print_markdown(chosen, out);
  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const KeySpec* spec : chosen) j.push_back(key_json(*spec));
    out << j.dump() << '\n';
    return;
  }
  print_text(chosen, out);
}

}  // namespace ckpt::harness
