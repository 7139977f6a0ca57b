#pragma once

// Reading a Hugging Face config.json: error locations in the raw text and typed access to the
// keys an architecture declares it reads. Shared by the architecture mappers.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/common/config_error.hpp"

namespace ckpt::harness::hf {

using Json = nlohmann::json;

inline std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a float";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::binary:
      return "binary data";
    case Json::value_t::discarded:
      return "nothing";
  }
  return "an unknown value";
}

inline std::int64_t line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

// Points error messages at the raw text: nlohmann::json keeps no positions, so a key's line
// is that of the first `"key"` followed by optional whitespace and a colon.
class Locator {
 public:
  Locator(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  const std::string& source() const { return source_; }

  std::int64_t line_of(std::string_view key) const {
    const std::string needle = "\"" + std::string(key) + "\"";
    for (std::size_t at = text_.find(needle); at != std::string_view::npos;
         at = text_.find(needle, at + 1)) {
      const std::size_t next = text_.find_first_not_of(" \t\r\n", at + needle.size());
      if (next != std::string_view::npos && text_[next] == ':') return line_at(text_, at);
    }
    return 0;
  }

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw ConfigError(source_, line_of(key), std::string(key), problem);
  }

 private:
  std::string_view text_;
  const std::string& source_;
};

// Typed access to the top-level object, limited to the keys the architecture declares it
// reads (asking for another is a bug here, not in the file).
class HfConfig {
 public:
  HfConfig(const Json& root, const Locator& at, std::vector<std::string_view> consumed)
      : root_(root), at_(at), consumed_(std::move(consumed)) {}

  const Locator& at() const { return at_; }

  // Whether the architecture reads `key` (families that drop a key of the class they follow).
  bool declares(std::string_view key) const {
    return std::find(consumed_.begin(), consumed_.end(), key) != consumed_.end();
  }

  // A nested config object (DBRX's attn_config, ffn_config) read with its own consumed keys;
  // absent or null reads as an empty object, where every key takes its default.
  HfConfig sub(std::string_view key, std::vector<std::string_view> consumed) const {
    static const Json kEmpty = Json::object();
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return HfConfig(kEmpty, at_, std::move(consumed));
    if (!value->is_object()) wrong_type(*value, key, "an object");
    return HfConfig(*value, at_, std::move(consumed));
  }

  // Absent and null both read as "not given".
  std::optional<std::int64_t> size(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    return as_size(*value, key);
  }
  std::int64_t size_or(std::string_view key, std::int64_t fallback) const {
    return size(key).value_or(fallback);
  }
  std::int64_t required_size(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr) at_.fail(key, "required key is missing");
    return as_size(*value, key);
  }
  // An array of sizes; absent or null reads as empty.
  std::vector<std::int64_t> sizes(std::string_view key) const {
    const Json* value = find(key);
    std::vector<std::int64_t> out;
    if (value == nullptr || value->is_null()) return out;
    if (!value->is_array()) wrong_type(*value, key, "an array of integers");
    for (const Json& entry : *value) out.push_back(as_size(entry, key));
    return out;
  }
  // An array of strings; absent or null reads as empty.
  std::vector<std::string> texts(std::string_view key) const {
    const Json* value = find(key);
    std::vector<std::string> out;
    if (value == nullptr || value->is_null()) return out;
    if (!value->is_array()) wrong_type(*value, key, "an array of strings");
    for (const Json& entry : *value) {
      if (!entry.is_string()) wrong_type(entry, key, "an array of strings");
      out.push_back(entry.get<std::string>());
    }
    return out;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The value when it is a string (a size that may also be spelled "auto"), else empty.
  std::string text_if_string(std::string_view key) const {
    const Json* value = find(key);
    return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
  }
  bool is_array(std::string_view key) const {
    const Json* value = find(key);
    return value != nullptr && value->is_array();
  }
  bool is_null(std::string_view key) const {
    const Json* value = find(key);
    return value != nullptr && value->is_null();
  }
  // A number, integer or not; absent or null reads as the fallback.
  double number_or(std::string_view key, double fallback) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_number()) wrong_type(*value, key, "a number");
    return value->get<double>();
  }
  bool flag_or(std::string_view key, bool fallback) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_boolean()) wrong_type(*value, key, "a boolean");
    return value->get<bool>();
  }
  std::optional<std::string> text(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (!value->is_string()) wrong_type(*value, key, "a string");
    return value->get<std::string>();
  }

 private:
  const Json* find(std::string_view key) const {
    if (std::find(consumed_.begin(), consumed_.end(), key) == consumed_.end()) {
      throw std::logic_error("model_file_hf: key `" + std::string(key) +
                             "` is read but not declared as consumed");
    }
    const auto it = root_.find(key);
    return it == root_.end() ? nullptr : &*it;
  }

  [[noreturn]] void wrong_type(const Json& value, std::string_view key,
                               std::string_view expected) const {
    at_.fail(key, "expected " + std::string(expected) + ", found " + describe(value));
  }

  std::int64_t as_size(const Json& value, std::string_view key) const {
    if (value.is_number_unsigned()) {
      const auto number = value.get<std::uint64_t>();
      if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        at_.fail(key, std::to_string(number) + " does not fit in a 64-bit signed integer");
      }
      return static_cast<std::int64_t>(number);
    }
    if (!value.is_number_integer()) wrong_type(value, key, "an integer");
    const auto number = value.get<std::int64_t>();
    if (number < 0) {
      at_.fail(key, "expected a non-negative integer, found " + std::to_string(number));
    }
    return number;
  }

  const Json& root_;
  const Locator& at_;
  std::vector<std::string_view> consumed_;
};

}  // namespace ckpt::harness::hf
