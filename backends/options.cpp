#include "backends/options.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>

#include "backends/suggest.hpp"

namespace ckpt::backends {
namespace {

std::string joined(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : std::string(separator)) + word;
  return out;
}

std::string expected(const OptionSpec& spec) {
  switch (spec.type) {
    case OptionType::boolean:
      return "true or false";
    case OptionType::integer:
    case OptionType::size: {
      std::string what = spec.type == OptionType::size ? "a byte count" : "an integer";
      what += " from " + std::to_string(spec.min);
      if (spec.max != std::numeric_limits<std::int64_t>::max())
        what += " to " + std::to_string(spec.max);
      return what;
    }
    case OptionType::choice:
      return "one of " + joined(spec.choices, ", ");
    case OptionType::text:
      return spec.default_value.empty() ? "a string" : "a non-empty string";
    case OptionType::string_map:
      return "a table of strings";
  }
  return "a value";
}

std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

bool valid(const OptionSpec& spec, const std::string& value) {
  switch (spec.type) {
    case OptionType::boolean:
      return value == "true" || value == "false";
    case OptionType::integer:
    case OptionType::size: {
      const auto number = parse_integer(value);
      return number && *number >= spec.min && *number <= spec.max;
    }
    case OptionType::choice:
      return std::find(spec.choices.begin(), spec.choices.end(), value) != spec.choices.end();
    case OptionType::text:
      // Empty is "unset" where the declared default is empty (an optional setting, such as s3's
      // ca_file): a campaign passes every default back explicitly.
      return !value.empty() || spec.default_value.empty();
    case OptionType::string_map:
      return !value.empty();
  }
  return false;
}

// The option `key` belongs to: its own name, or "<name>.<sub-key>" of a string_map option.
const OptionSpec* owner(const OptionTable& table, std::string_view key) {
  for (const OptionSpec& spec : table) {
    if (spec.name == key && spec.type != OptionType::string_map) return &spec;
    if (spec.type == OptionType::string_map && key.size() > spec.name.size() + 1 &&
        key.starts_with(spec.name) && key[spec.name.size()] == '.') {
      return &spec;
    }
  }
  return nullptr;
}

}  // namespace

std::string_view option_type_name(OptionType type) {
  switch (type) {
    case OptionType::boolean:
      return "boolean";
    case OptionType::integer:
      return "integer";
    case OptionType::size:
      return "size";
    case OptionType::choice:
      return "choice";
    case OptionType::text:
      return "text";
    case OptionType::string_map:
      return "table";
  }
  return "?";
}

OptionValues::OptionValues(std::string_view backend, const OptionTable& table,
                           const BackendOptions& given)
    : backend_(backend), table_(table) {
  std::vector<std::string> names;
  for (const OptionSpec& spec : table_) {
    names.push_back(spec.name);
    if (spec.type != OptionType::string_map) values_[spec.name] = spec.default_value;
  }
  for (const auto& [key, value] : given) {
    const OptionSpec* spec = owner(table_, key);
    const std::string dotted = "backend." + backend_ + "." + key;
    const auto is_table = [&name =
                               key](const OptionSpec& o) {  // clang < 16 cannot capture a binding
      return o.type == OptionType::string_map && o.name == name;
    };
    if (spec == nullptr && std::any_of(table_.begin(), table_.end(), is_table)) {
      throw std::invalid_argument(backend_ + ": `" + dotted +
                                  "` is a table: give its entries as `" + dotted +
                                  ".<name>` = value");
    }
    if (spec == nullptr) {
      std::string message =
          backend_ + ": unknown option `" + dotted + "`" + did_you_mean(key, names);
      message +=
          names.empty() ? " (it takes no options)" : " (options: " + joined(names, " ") + ")";
      throw std::invalid_argument(message);
    }
    if (!valid(*spec, value)) {
      throw std::invalid_argument(
          backend_ + ": `" + dotted + "` = \"" + value + "\": expected " + expected(*spec) +
          (spec->type == OptionType::choice ? did_you_mean(value, spec->choices) : ""));
    }
    values_[key] = value;
  }
}

const OptionSpec& OptionValues::spec(std::string_view name, OptionType expected_type) const {
  for (const OptionSpec& s : table_) {
    const bool same_kind = s.type == expected_type ||
                           (expected_type == OptionType::integer && s.type == OptionType::size) ||
                           (expected_type == OptionType::text && s.type == OptionType::choice);
    if (s.name == name && same_kind) return s;
  }
  throw std::logic_error(backend_ + ": no " + std::string(option_type_name(expected_type)) +
                         " option `" + std::string(name) + "` in its option table");
}

bool OptionValues::boolean(std::string_view name) const {
  return values_.at(spec(name, OptionType::boolean).name) == "true";
}

std::int64_t OptionValues::integer(std::string_view name) const {
  return *parse_integer(values_.at(spec(name, OptionType::integer).name));
}

const std::string& OptionValues::text(std::string_view name) const {
  return values_.at(spec(name, OptionType::text).name);
}

std::map<std::string, std::string> OptionValues::sub_keys(std::string_view name) const {
  const std::string prefix = spec(name, OptionType::string_map).name + ".";
  std::map<std::string, std::string> found;
  for (const auto& [key, value] : values_) {
    if (key.starts_with(prefix)) found[key.substr(prefix.size())] = value;
  }
  return found;
}

}  // namespace ckpt::backends
