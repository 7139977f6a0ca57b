#include "harness/common/json_input.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <system_error>

namespace ckpt::harness {
namespace {

using nlohmann::json;

[[noreturn]] void fail_at(const JsonSource& source, const std::string& key,
                          const std::string& problem) {
  throw ConfigError(source.file, source.line, key,
                    source.fix.empty() ? problem : problem + " — " + source.fix);
}

// Walks the text as a JSON tokenizer would (strings with their escapes, brackets outside
// strings) without building anything, so that the limits hold before the parser allocates or
// nests. Text that is not JSON passes here and is refused by the parser.
void check_limits(std::string_view text, const JsonSource& source, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    fail_at(source, "",
            fmt::format("{} bytes of JSON, more than the {} this file may hold", text.size(),
                        limits.max_bytes));
  }
  std::vector<std::size_t> commas;  // per open array or object
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"') {
      const std::size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i - start - 1 > limits.max_string_bytes) {
        fail_at(source, "",
                fmt::format("a string of {} bytes at byte {}, longer than the {} allowed",
                            i - start - 1, start, limits.max_string_bytes));
      }
    } else if (ch == '[' || ch == '{') {
      if (commas.size() >= limits.max_depth) {
        fail_at(source, "",
                fmt::format("arrays and objects nested more than {} deep (at byte {})",
                            limits.max_depth, i));
      }
      commas.push_back(0);
    } else if ((ch == ']' || ch == '}') && !commas.empty()) {
      commas.pop_back();
    } else if (ch == ',' && !commas.empty() && ++commas.back() >= limits.max_elements) {
      fail_at(source, "",
              fmt::format("an array or object of more than {} elements (at byte {})",
                          limits.max_elements, i));
    }
  }
}

// The parser's complaint without its "[json.exception.parse_error.101] " prefix, and short:
// its "last read" quotes the input, which may be long.
std::string parser_complaint(const std::string& what) {
  const std::size_t close =
      what.starts_with("[json.exception.") ? what.find("] ") : std::string::npos;
  std::string text = close == std::string::npos ? what : what.substr(close + 2);
  constexpr std::size_t kLongest = 200;
  if (text.size() > kLongest) text = text.substr(0, kLongest) + "…";
  return text;
}

// A value as the messages quote it: short scalars whole, containers by size.
std::string quoted(const json& value) {
  if (value.is_array()) return fmt::format("an array of {} elements", value.size());
  if (value.is_object()) return fmt::format("an object of {} members", value.size());
  std::string text = value.dump();
  constexpr std::size_t kLongest = 40;
  if (text.size() > kLongest) text = text.substr(0, kLongest) + "…";
  return json_type_text(value) + " (" + text + ")";
}

}  // namespace

json parse_untrusted_json(std::string_view text, const JsonSource& source,
                          const JsonLimits& limits) {
  check_limits(text, source, limits);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail_at(source, "", "not JSON: " + parser_complaint(e.what()));
  }
}

json read_untrusted_json_file(const std::filesystem::path& path, const JsonSource& source,
                              const JsonLimits& limits) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limits.max_bytes) {
    fail_at(source, "",
            fmt::format("{} bytes, more than the {} this file may hold", size, limits.max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_at(source, "", "cannot be read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_untrusted_json(text, source, limits);
}

std::string json_excerpt(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

std::string json_type_text(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::binary:
      return "binary data";
    case json::value_t::discarded:
      return "nothing";
    default:
      return "a number";
  }
}

JsonField::JsonField(const nlohmann::json& value, JsonSource source, std::string key)
    : JsonField(value, std::make_shared<const JsonSource>(std::move(source)), std::move(key)) {}

JsonField::JsonField(const nlohmann::json& value, std::shared_ptr<const JsonSource> source,
                     std::string key)
    : value_(&value), source_(std::move(source)), key_(std::move(key)) {}

JsonField JsonField::child(const nlohmann::json& value, std::string key) const {
  return JsonField(value, source_, std::move(key));
}

void JsonField::fail(const std::string& problem) const {
  fail_at(*source_, key_, problem);
}

void JsonField::wrong_type(const char* wanted) const {
  fail(fmt::format("must be {}, found {}", wanted, quoted(*value_)));
}

JsonField JsonField::at(std::string_view name) const {
  std::optional<JsonField> field = find(name);
  if (!field) {
    const std::string key = key_.empty() ? std::string(name) : key_ + "." + std::string(name);
    fail_at(*source_, key, "missing");
  }
  return *field;
}

std::optional<JsonField> JsonField::find(std::string_view name) const {
  object();
  const auto it = value_->find(name);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return child(*it, key_.empty() ? std::string(name) : key_ + "." + std::string(name));
}

std::vector<JsonField> JsonField::elements(std::size_t max) const {
  if (!value_->is_array()) wrong_type("an array");
  if (value_->size() > max)
    fail(fmt::format("must hold at most {} elements, found {}", max, value_->size()));
  std::vector<JsonField> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.push_back(child((*value_)[i], fmt::format("{}[{}]", key_, i)));
  return out;
}

std::vector<std::pair<std::string, JsonField>> JsonField::members() const {
  object();
  std::vector<std::pair<std::string, JsonField>> out;
  for (const auto& [name, value] : value_->items()) {
    out.emplace_back(name, child(value, key_.empty() ? name : key_ + "." + name));
  }
  return out;
}

const nlohmann::json& JsonField::object() const {
  if (!value_->is_object()) wrong_type("an object");
  return *value_;
}

std::string JsonField::string() const {
  if (!value_->is_string()) wrong_type("a string");
  return value_->get<std::string>();
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) wrong_type("true or false");
  return value_->get<bool>();
}

double JsonField::number() const {
  if (!value_->is_number()) wrong_type("a number");
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail(fmt::format("must be a finite number, found {}", v));
  return v;
}

double JsonField::non_negative() const {
  const double v = number();
  if (v < 0) fail(fmt::format("must be a number of at least 0, found {}", value_->dump()));
  return v;
}

std::int64_t JsonField::integer(std::int64_t min, std::int64_t max) const {
  const auto out_of_range = [&] {
    fail(fmt::format("must be a whole number from {} to {}, found {}", min, max, quoted(*value_)));
  };
  if (value_->is_number_unsigned()) {
    const std::uint64_t v = value_->get<std::uint64_t>();
    if (max < 0 || v > static_cast<std::uint64_t>(max) || static_cast<std::int64_t>(v) < min)
      out_of_range();
    return static_cast<std::int64_t>(v);
  }
  if (value_->is_number_integer()) {
    const std::int64_t v = value_->get<std::int64_t>();
    if (v < min || v > max) out_of_range();
    return v;
  }
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    // 2^63 is the first double past int64's range; within it the conversion is exact for whole
    // numbers.
    if (!(v == std::floor(v) && v >= -9.2233720368547758e18 && v < 9.2233720368547758e18))
      out_of_range();
    const auto whole = static_cast<std::int64_t>(v);
    if (whole < min || whole > max) out_of_range();
    return whole;
  }
  wrong_type("a whole number");
}

std::uint64_t JsonField::count(std::uint64_t max) const {
  const auto out_of_range = [&] {
    fail(fmt::format("must be a whole number from 0 to {}, found {}", max, quoted(*value_)));
  };
  if (!value_->is_number()) wrong_type("a whole number");
  std::uint64_t v = 0;
  if (value_->is_number_unsigned()) {
    v = value_->get<std::uint64_t>();
  } else if (value_->is_number_integer()) {
    if (value_->get<std::int64_t>() < 0) out_of_range();
    v = static_cast<std::uint64_t>(value_->get<std::int64_t>());
  } else {
    const double d = value_->get<double>();
    // 2^64 is the first double past uint64's range.
    if (!(d == std::floor(d) && d >= 0 && d < 1.8446744073709552e19)) out_of_range();
    v = static_cast<std::uint64_t>(d);
  }
  if (v > max) out_of_range();
  return v;
}

}  // namespace ckpt::harness
