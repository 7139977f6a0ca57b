#pragma once

// The keys a campaign file may hold, their types, defaults and help, and the conversion of one
// TOML value into a checked value. Used by harness/campaign and by `ckptbench keys`.

#include <toml++/toml.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/common/config_text.hpp"

namespace ckpt::harness::schema {

// One key's value after type checking and unit parsing: sizes are bytes, enums their names.
// monostate: unset (the default of state.naming).
// string_map: a JSON object of strings (MPI info hints).
using Value = std::variant<std::monostate, bool, std::int64_t, std::string,
                           std::vector<std::int64_t>, nlohmann::json, double>;

enum class Kind {
  text,  // a non-empty string
  boolean,
  integer,        // an integer in [min, max]
  size,           // bytes: an integer or a string with a unit ("4 MiB", "1.5GB"), in [min, max]
  choice,         // one of `choices`
  dtype,          // a dtype name: fp8, bf16, fp16, fp32, fp64
  dtype_or_none,  // a dtype name or "none"
  rank_list,      // an array of integers (itself an array, so never a sweep)
  string_map,     // a table of names to strings (or integers), e.g. MPI info hints; never a sweep
  number,         // a float or an integer, stored as double, in [min, max]
};

struct KeySpec {
  std::string_view table;  // "backend.mpiio" for a backend's own table
  std::string_view key;
  // What the key does, for `ckptbench keys` and docs/campaign-keys.md: plain text (no Markdown,
  // no '|'), lower case first, no final full stop, as the backends' option help.
  std::string_view help;
  Kind kind = Kind::text;
  Value fallback;  // the default; monostate for required keys and unset options
  bool required = false;
  bool sweepable = true;  // an array of values is a sweep
  std::int64_t min = 0;
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::vector<std::string_view> choices;
  // Whether a case's config (and so its config_hash) records the key at its default. A key added
  // after results and gate baselines existed is left out there, so that theirs still match.
  bool recorded_at_default = true;

  std::string dotted() const { return std::string(table) + "." + std::string(key); }
};

// Every key, grouped by table, tables in the order the documentation lists them.
std::span<const KeySpec> keys();
std::span<const std::string_view> tables();
// The backends' own tables under [backend]: "backend.mpiio", "backend.hdf5", "backend.gds".
std::span<const std::string_view> backend_tables();
bool is_table(std::string_view table);
const KeySpec* find(std::string_view table, std::string_view key);
std::size_t index_of(const KeySpec& spec);      // position in keys()
std::size_t index_of(std::string_view dotted);  // throws std::logic_error when unknown
std::vector<std::string_view> keys_of(std::string_view table);

// Where a value came from, for error messages: a file and line, or "--set" and line 0.
struct Where {
  std::string source;
  std::int64_t line = 0;
  std::string key;      // dotted
  std::string context;  // appended to every problem, e.g. " (value 2 of the sweep)"

  [[noreturn]] void fail(const std::string& problem) const;
};

// Checks `node` against the key's kind and converts it. Throws ConfigError at `where`.
Value convert(const KeySpec& spec, const toml::node& node, const Where& where);

// "4 MiB" -> 4194304, "1.5GB" -> 1500000000, "4096" -> 4096. Binary units (KiB, MiB, GiB,
// TiB) are powers of 1024, decimal ones (KB, MB, GB, TB) powers of 1000, B is 1. Throws
// ConfigError at `where` for negative, fractional-byte, overflowing or unparseable text.
std::int64_t parse_size(std::string_view text, const Where& where);

std::string expected(const KeySpec& spec);  // what the key accepts, for "expected X, found Y"
nlohmann::json to_json(const Value& value);

}  // namespace ckpt::harness::schema
