#pragma once

// Reading a campaign document into checked settings, and applying --set overrides to them.
// Internal to harness/campaign.

#include <toml++/toml.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/campaign/campaign_schema.hpp"

namespace ckpt::harness::schema {

// One key as the file (or an override) gives it: one value, or the values of a sweep.
struct Setting {
  const KeySpec* spec = nullptr;
  std::vector<Value> values;        // one value unless `swept`
  std::vector<std::int64_t> lines;  // line of each value (0 for --set)
  std::string source;               // the campaign file or "--set"
  std::int64_t line = 0;            // the key's line; 0 for --set
  bool swept = false;               // given as an array: one case per value
};

struct Settings {
  std::vector<Setting> given;                       // in file order; overrides of new keys last
  std::map<std::string, std::int64_t> table_lines;  // line of each table the file holds
};

// Checks the document's tables and keys (unknown ones are errors with a suggestion) and
// converts every value. Throws ConfigError naming `source`, the line and the dotted key.
Settings read_settings(const toml::table& document, const std::string& source);

// Applies "dotted.key=value" overrides in order (a later one wins). The value is parsed as a
// TOML value, or taken as a bare string when it is not one (or when the key takes a string and
// the value is a number or boolean). Errors name source "--set".
void apply_overrides(Settings& settings, const std::vector<std::string>& overrides);

// Throws ConfigError for the first required key that neither the file nor an override gives.
void require_keys(const Settings& settings, const std::string& source);

}  // namespace ckpt::harness::schema
