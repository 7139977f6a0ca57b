#pragma once

// Reading JSON that comes from outside the process: results files, baselines, manifests. The
// text is measured against limits before the library parses it (the library's dump, copy and
// comparison recurse once per nesting level, so a deep document would overflow the stack long
// after parsing), and each field is read through JsonField, whose errors name the file, the
// line and the key instead of repeating the library's text. Every error is a ConfigError.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/common/config_error.hpp"

namespace ckpt::harness {

// What one document may hold. The defaults fit every file ckptbench writes with room to spare.
struct JsonLimits {
  std::uint64_t max_bytes = std::uint64_t{64} << 20;  // the whole text
  std::size_t max_depth = 32;                         // arrays and objects inside each other
  std::size_t max_string_bytes = std::size_t{1} << 20;
  std::size_t max_elements = std::size_t{1} << 22;  // of one array, or members of one object
};

// Where a document came from and what to tell the user who fed it the wrong file.
struct JsonSource {
  std::string file;
  std::int64_t line = 0;  // 1-based line of a JSON Lines file; 0 for a whole file
  std::string fix;        // appended to every error: " — <fix>" ("" none)
};

// Parses `text` once it is within `limits`. Throws ConfigError naming the source, the byte
// offset and the limit, or the parser's complaint without the library's prefix.
nlohmann::json parse_untrusted_json(std::string_view text, const JsonSource& source,
                                    const JsonLimits& limits = {});
// The same for a whole file; one larger than limits.max_bytes is refused before it is read.
nlohmann::json read_untrusted_json_file(const std::filesystem::path& path, const JsonSource& source,
                                        const JsonLimits& limits = {});

// "a string", "a number", "an object", … for messages.
std::string json_type_text(const nlohmann::json& value);

// `value` as one line for a message: its compact JSON (invalid UTF-8 replaced), cut to 80
// characters with "..." when longer.
std::string json_excerpt(const nlohmann::json& value);

// One value of an untrusted document with its dotted key ("samples.write_seconds[2]"). It
// refers to the document (which must outlive it). Accessors throw ConfigError:
// "<file>:<line>: `<key>`: must be a number, found a string ("fast") — <fix>".
class JsonField {
 public:
  JsonField(const nlohmann::json& value, JsonSource source, std::string key = "");

  const nlohmann::json& json() const { return *value_; }
  const std::string& key() const { return key_; }
  bool is_null() const { return value_->is_null(); }

  // A member of this object (which it requires): `at` requires it present and not null; `find`
  // gives nullopt when it is absent or null.
  JsonField at(std::string_view name) const;
  std::optional<JsonField> find(std::string_view name) const;
  // The elements of this array (which it requires), at most `max`.
  std::vector<JsonField> elements(std::size_t max = std::numeric_limits<std::size_t>::max()) const;
  // The members of this object (which it requires), in key order.
  std::vector<std::pair<std::string, JsonField>> members() const;

  // This value as an object (checked) — for values kept whole, such as a configuration.
  const nlohmann::json& object() const;
  std::string string() const;
  bool boolean() const;
  // A finite number (JSON cannot hold NaN or infinity, but a number may overflow a double).
  double number() const;
  // A finite number >= 0.
  double non_negative() const;
  // A whole number in [min, max] (an integral float such as 1e3 counts as one).
  std::int64_t integer(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  // A whole number in [0, max]: a byte count, an offset, an index.
  std::uint64_t count(std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;

  // Throws ConfigError for this key with `problem` (and the source's fix).
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  [[noreturn]] void wrong_type(const char* wanted) const;
  JsonField(const nlohmann::json& value, std::shared_ptr<const JsonSource> source, std::string key);
  JsonField child(const nlohmann::json& value, std::string key) const;

  const nlohmann::json* value_;
  std::shared_ptr<const JsonSource> source_;  // shared: a manifest has millions of fields
  std::string key_;
};

}  // namespace ckpt::harness
