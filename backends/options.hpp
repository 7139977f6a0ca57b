#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::backends {

// Options of one backend from the campaign's [backend.<name>] table, flattened to text:
// {"collective": "true", "hints.romio_cb_write": "enable"}.
using BackendOptions = std::map<std::string, std::string>;

enum class OptionType {
  boolean,     // "true" or "false"
  integer,     // a decimal integer in [min, max]
  size,        // bytes: a decimal integer in [min, max] (the campaign turns "4 MiB" into bytes)
  choice,      // one of `choices`
  text,        // any non-empty string; may be empty (unset) when its default is empty
  string_map,  // sub-keys "<name>.<anything>" with text values (MPI info hints); no default
};

// One option a backend accepts: the single declaration from which the registry listing, the
// campaign keys, value validation, the backend's own defaults and the README tables derive.
struct OptionSpec {
  std::string name;
  OptionType type = OptionType::text;
  std::string default_value;  // as text; "" for string_map
  std::string help;
  std::vector<std::string> choices;  // choice only
  std::int64_t min = 0;              // integer and size
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

using OptionTable = std::vector<OptionSpec>;

std::string_view option_type_name(OptionType type);  // "boolean", "integer", ...

// The options of one backend, checked against its table, with every default applied. Throws
// std::invalid_argument naming `backend.<backend>.<key>`: an unknown key (with the closest
// one), or a value of the wrong type or out of range (with what is expected).
class OptionValues {
 public:
  OptionValues(std::string_view backend, const OptionTable& table, const BackendOptions& given);

  bool boolean(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;     // integer and size options
  const std::string& text(std::string_view name) const;  // text and choice options
  // The sub-keys of a string_map option without its prefix: "hints" -> {"cb_nodes": "4"}.
  std::map<std::string, std::string> sub_keys(std::string_view name) const;
  // Every value as text, defaults included (string_map entries as "<name>.<key>").
  const BackendOptions& all() const { return values_; }

 private:
  const OptionSpec& spec(std::string_view name, OptionType expected) const;

  std::string backend_;
  OptionTable table_;
  BackendOptions values_;
};

}  // namespace ckpt::backends
