#include "backends/s3/s3_url.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace ckpt::backends::s3 {
namespace {

bool unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

std::string with_query(std::string url, const std::string& query) {
  return query.empty() ? url : url + "?" + query;
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (unreserved(c) || (keep_slash && c == '/')) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

std::string object_key(std::string_view prefix, std::string_view path) {
  std::string relative = std::filesystem::path(path).lexically_normal().generic_string();
  relative.erase(0, relative.find_first_not_of('/'));
  if (relative.empty() || relative == "." || relative == ".." || relative.starts_with("../")) {
    throw std::invalid_argument("s3: path \"" + std::string(path) +
                                "\" names no object (empty, or above its root)");
  }
  std::string key(prefix);
  while (key.ends_with('/')) key.pop_back();
  return key.empty() ? relative : key + "/" + relative;
}

std::string canonical_query(std::vector<std::pair<std::string, std::string>> parameters) {
  std::sort(parameters.begin(), parameters.end());
  std::string query;
  for (const auto& parameter : parameters) {
    if (!query.empty()) query += '&';
    query += uri_encode(parameter.first, false) + "=" + uri_encode(parameter.second, false);
  }
  return query;
}

// The bucket's URL without a trailing '/': endpoint/bucket, or scheme://bucket.authority/path.
std::string Addressing::base() const {
  if (!virtual_host) return endpoint + "/" + bucket;
  const std::size_t host = endpoint.find("://") + 3;
  return endpoint.substr(0, host) + bucket + "." + endpoint.substr(host);
}

std::string Addressing::bucket_url(const std::string& query) const {
  std::string url = base();
  // A virtual-host URL without a path still needs the root path "/".
  if (url.find('/', url.find("://") + 3) == std::string::npos) url += '/';
  return with_query(url, query);
}

std::string Addressing::object_url(const std::string& key, const std::string& query) const {
  return with_query(base() + "/" + uri_encode(key, true), query);
}

std::string Addressing::name(const std::string& key) const {
  return "s3://" + bucket + "/" + key;
}

}  // namespace ckpt::backends::s3
