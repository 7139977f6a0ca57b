#include "harness/campaign/campaign_schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "harness/common/config_error.hpp"
#include "harness/common/config_text.hpp"
#include "harness/common/suggest.hpp"
#include "workloads/dtype.hpp"
#include "workloads/limits.hpp"

namespace ckpt::harness::schema {
namespace {

std::string quoted_list(const std::vector<std::string_view>& choices) {
  std::string listed;
  for (const std::string_view choice : choices) {
    listed += (listed.empty() ? "\"" : ", \"") + std::string(choice) + "\"";
  }
  return listed;
}

void check_range(const KeySpec& spec, std::int64_t value, const Where& where) {
  if (value < spec.min) {
    where.fail("must be at least " + std::to_string(spec.min) + " (got " + std::to_string(value) +
               ")");
  }
  if (value > spec.max) {
    where.fail("must be at most " + std::to_string(spec.max) + " (got " + std::to_string(value) +
               ")");
  }
}

[[noreturn]] void wrong_type(const KeySpec& spec, const toml::node& node, const Where& where) {
  where.fail("expected " + expected(spec) + ", found " + describe_toml_type(node.type()));
}

const std::string& string_of(const KeySpec& spec, const toml::node& node, const Where& where) {
  if (!node.is_string()) wrong_type(spec, node, where);
  return node.as_string()->get();
}

Value convert_choice(const KeySpec& spec, const std::string& value, const Where& where) {
  if (std::find(spec.choices.begin(), spec.choices.end(), value) != spec.choices.end())
    return value;
  where.fail("unknown value \"" + value + "\", expected one of " + quoted_list(spec.choices) +
             did_you_mean(value, spec.choices));
}

Value convert_dtype(const KeySpec& spec, const std::string& value, const Where& where) {
  if (spec.kind == Kind::dtype_or_none && value == "none") return value;
  try {
    workloads::parse_dtype(value);
  } catch (const std::invalid_argument& e) {
    where.fail(std::string(e.what()) + (spec.kind == Kind::dtype_or_none ? " or none" : ""));
  }
  return value;
}

Value convert_rank_list(const KeySpec& spec, const toml::node& node, const Where& where) {
  if (!node.is_array()) wrong_type(spec, node, where);
  std::vector<std::int64_t> ranks;
  for (const toml::node& element : *node.as_array()) {
    if (!element.is_integer()) {
      where.fail(
          "expected " + expected(spec) + ", found " + describe_toml_type(element.type()) +
          " at position " + std::to_string(ranks.size() + 1) +
          (element.is_array() ? " (ranks.list is one list of ranks and cannot be swept)" : ""));
    }
    ranks.push_back(element.as_integer()->get());
  }
  // More entries than the largest world cannot all be distinct ranks of it.
  if (static_cast<std::int64_t>(ranks.size()) > workloads::limits::kWorldSize) {
    where.fail(std::to_string(ranks.size()) + " ranks listed; at most " +
               std::to_string(workloads::limits::kWorldSize) +
               " (the largest world, tp × pp × dp)");
  }
  return ranks;
}

std::string shortest(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return std::string(text.data(), end);
}

Value convert_number(const KeySpec& spec, const toml::node& node, const Where& where) {
  double value = 0;
  if (node.is_floating_point()) {
    value = node.as_floating_point()->get();
  } else if (node.is_integer()) {
    value = static_cast<double>(node.as_integer()->get());
  } else {
    wrong_type(spec, node, where);
  }
  if (!(value >= static_cast<double>(spec.min)) || value > static_cast<double>(spec.max)) {
    where.fail("must be in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) +
               "] (got " + shortest(value) + ")");
  }
  return value;
}

Value convert_string_map(const KeySpec& spec, const toml::node& node, const Where& where) {
  if (!node.is_table()) wrong_type(spec, node, where);
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [key, value] : *node.as_table()) {
    if (value.is_string()) {
      map[std::string(key.str())] = value.as_string()->get();
    } else if (value.is_integer()) {
      map[std::string(key.str())] = std::to_string(value.as_integer()->get());
    } else {
      where.fail("value of `" + std::string(key.str()) +
                 "`: expected a string or an integer, found " + describe_toml_type(value.type()));
    }
  }
  return map;
}

Value convert_size(const KeySpec& spec, const toml::node& node, const Where& where) {
  std::int64_t bytes = 0;
  if (node.is_integer()) {
    bytes = node.as_integer()->get();
    if (bytes < 0) where.fail("a size must not be negative (got " + std::to_string(bytes) + ")");
  } else if (node.is_string()) {
    bytes = parse_size(node.as_string()->get(), where);
  } else {
    wrong_type(spec, node, where);
  }
  check_range(spec, bytes, where);
  return bytes;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// Bytes per unit; 0 when `unit` is not one.
std::int64_t unit_bytes(std::string_view unit) {
  constexpr std::array<std::pair<std::string_view, std::int64_t>, 10> kUnits{{
      {"", 1},
      {"B", 1},
      {"KiB", std::int64_t{1} << 10},
      {"MiB", std::int64_t{1} << 20},
      {"GiB", std::int64_t{1} << 30},
      {"TiB", std::int64_t{1} << 40},
      {"KB", 1'000},
      {"MB", 1'000'000},
      {"GB", 1'000'000'000},
      {"TB", 1'000'000'000'000},
  }};
  for (const auto& [name, bytes] : kUnits) {
    if (name == unit) return bytes;
  }
  return 0;
}

// 10^digits for digits <= 18.
std::int64_t power_of_ten(std::size_t digits) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i < digits; ++i) p *= 10;
  return p;
}

}  // namespace

bool is_table(std::string_view table) {
  return std::find(tables().begin(), tables().end(), table) != tables().end() ||
         std::find(backend_tables().begin(), backend_tables().end(), table) !=
             backend_tables().end();
}

const KeySpec* find(std::string_view table, std::string_view key) {
  for (const KeySpec& spec : keys()) {
    if (spec.table == table && spec.key == key) return &spec;
  }
  return nullptr;
}

std::size_t index_of(const KeySpec& spec) {
  return static_cast<std::size_t>(&spec - keys().data());
}

std::size_t index_of(std::string_view dotted) {
  for (const KeySpec& spec : keys()) {
    if (spec.dotted() == dotted) return index_of(spec);
  }
  throw std::logic_error("campaign schema has no key " + std::string(dotted));
}

std::vector<std::string_view> keys_of(std::string_view table) {
  std::vector<std::string_view> names;
  for (const KeySpec& spec : keys()) {
    if (spec.table == table) names.push_back(spec.key);
  }
  return names;
}

void Where::fail(const std::string& problem) const {
  throw ConfigError(source, line, key, problem + context);
}

Value convert(const KeySpec& spec, const toml::node& node, const Where& where) {
  switch (spec.kind) {
    case Kind::text: {
      const std::string& value = string_of(spec, node, where);
      if (value.empty()) where.fail("must not be empty");
      return value;
    }
    case Kind::boolean:
      if (!node.is_boolean()) wrong_type(spec, node, where);
      return node.as_boolean()->get();
    case Kind::integer: {
      if (!node.is_integer()) wrong_type(spec, node, where);
      const std::int64_t value = node.as_integer()->get();
      check_range(spec, value, where);
      return value;
    }
    case Kind::size:
      return convert_size(spec, node, where);
    case Kind::choice:
      return convert_choice(spec, string_of(spec, node, where), where);
    case Kind::dtype:
    case Kind::dtype_or_none:
      return convert_dtype(spec, string_of(spec, node, where), where);
    case Kind::rank_list:
      return convert_rank_list(spec, node, where);
    case Kind::string_map:
      return convert_string_map(spec, node, where);
    case Kind::number:
      return convert_number(spec, node, where);
  }
  throw std::logic_error("convert: unknown kind");
}

std::int64_t parse_size(std::string_view text, const Where& where) {
  const std::string shown = "\"" + std::string(text) + "\"";
  const std::string_view s = trim(text);
  if (!s.empty() && s.front() == '-') where.fail("a size must not be negative (got " + shown + ")");
  const std::size_t int_end = std::min(s.find_first_not_of("0123456789"), s.size());
  std::size_t number_end = int_end;
  std::string_view fraction;
  if (int_end < s.size() && s[int_end] == '.') {
    number_end = std::min(s.find_first_not_of("0123456789", int_end + 1), s.size());
    fraction = s.substr(int_end + 1, number_end - int_end - 1);
  }
  const std::int64_t unit = unit_bytes(trim(s.substr(number_end)));
  if (int_end == 0 || (number_end > int_end && fraction.empty()) || unit == 0) {
    where.fail(shown +
               " is not a size: expected a number and a unit, one of B, KiB, MiB, GiB, TiB "
               "(powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g. \"4 MiB\"");
  }
  std::int64_t whole = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + int_end, whole);
  if (error != std::errc() || whole > std::numeric_limits<std::int64_t>::max() / unit) {
    where.fail(shown + " is too large (at most 8 EiB)");
  }
  fraction = fraction.substr(0, fraction.find_last_not_of('0') + 1);  // "1.50" == "1.5"
  std::int64_t part = 0;  // the fraction's bytes: fraction × unit, which must be whole
  if (!fraction.empty()) {
    const std::string_view not_whole = " is not a whole number of bytes";
    if (fraction.size() > 18) where.fail(shown + std::string(not_whole));
    std::int64_t numerator = 0;
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), numerator);
    // numerator / 10^k × unit without overflow: cancel the common factor of unit and 10^k.
    const std::int64_t denominator = power_of_ten(fraction.size());
    const std::int64_t common = std::gcd(unit, denominator);
    if (numerator % (denominator / common) != 0) where.fail(shown + std::string(not_whole));
    part = numerator / (denominator / common) * (unit / common);
  }
  if (whole * unit > std::numeric_limits<std::int64_t>::max() - part) {
    where.fail(shown + " is too large (at most 8 EiB)");
  }
  return whole * unit + part;
}

std::string expected(const KeySpec& spec) {
  switch (spec.kind) {
    case Kind::text:
    case Kind::choice:
    case Kind::dtype:
    case Kind::dtype_or_none:
      return "a string";
    case Kind::boolean:
      return "a boolean";
    case Kind::integer:
      return "an integer";
    case Kind::size:
      return "a size (an integer number of bytes or a string such as \"4 MiB\")";
    case Kind::rank_list:
      return "an array of integers";
    case Kind::string_map:
      return "a table of strings (e.g. { romio_cb_write = \"enable\" })";
    case Kind::number:
      return "a number";
  }
  return "a value";
}

nlohmann::json to_json(const Value& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      value);
}

}  // namespace ckpt::harness::schema
