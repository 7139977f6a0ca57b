#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckpt::backends::s3 {

// Percent-encoding as SigV4 canonicalises it: unreserved characters (A-Z a-z 0-9 - _ . ~) stay,
// '/' stays when `keep_slash`, every other byte becomes %XX (upper case). URLs built from these
// parts are already canonical, so the signature libcurl computes over them matches the server's.
std::string uri_encode(std::string_view text, bool keep_slash);

// The object key of a plan's file: `prefix` and the path joined by one '/', the path lexically
// normalised and without its leading '/' ("/ckpt/iter_1/a.bin" with prefix "run7" ->
// "run7/ckpt/iter_1/a.bin"). Throws std::invalid_argument for an empty path or one that climbs
// above its root ("../x").
std::string object_key(std::string_view prefix, std::string_view path);

// A query string with its parameters sorted by name and encoded, "name=value&..." (an empty
// value keeps its '=': "uploads="), as SigV4's canonical form needs.
std::string canonical_query(std::vector<std::pair<std::string, std::string>> parameters);

// Where requests go. Path addressing: endpoint/bucket/key; virtual: scheme://bucket.host/key.
struct Addressing {
  std::string endpoint;  // "scheme://authority[/path]", no trailing '/'
  std::string bucket;
  bool virtual_host = false;

  std::string bucket_url(const std::string& query = "") const;
  std::string object_url(const std::string& key, const std::string& query = "") const;
  // "s3://bucket/key", for messages.
  std::string name(const std::string& key) const;
  // What every URL of the bucket starts with: endpoint/bucket, or scheme://bucket.authority/path.
  std::string base() const;
};

}  // namespace ckpt::backends::s3
