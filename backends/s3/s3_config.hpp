#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/options.hpp"

namespace ckpt::backends::s3 {

// The keys requests are signed with, read from the environment only (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and, for temporary credentials, AWS_SESSION_TOKEN): never from a
// campaign, so they reach no result, log or message.
struct Credentials {
  std::string key_id;
  std::string secret;
  std::string session_token;  // "" without one
};

// Empty when AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is unset or empty.
std::optional<Credentials> credentials_from_environment();

// Which endpoint a request goes to (backend.s3.endpoint_choice).
enum class EndpointChoice { rank, least_loaded };

// The options of [backend.s3], checked and parsed.
struct S3Config {
  std::vector<std::string> endpoints;  // "scheme://authority[/path]", without a trailing '/'
  EndpointChoice endpoint_choice = EndpointChoice::rank;
  std::string bucket;
  std::string prefix;
  std::string region;
  bool virtual_addressing = false;
  std::uint64_t part_size = 0;
  int concurrency = 1;
  int retries = 0;
  int backoff_ms = 1;
  std::string ca_file;

  // The index in `endpoints` of process `rank`'s own endpoint: rank modulo their number.
  std::size_t endpoint_index(int rank) const;
  // The endpoint process `rank` talks to under EndpointChoice::rank.
  const std::string& endpoint_for(int rank) const { return endpoints.at(endpoint_index(rank)); }
};

// Throws std::invalid_argument naming `backend.s3.<key>`: an unknown option or a bad value (the
// option table's checks), a missing endpoint or bucket, an endpoint that is not an http(s) URL,
// a ca_file that cannot be read.
S3Config parse_config(const BackendOptions& options);

// What parse_config refuses, and missing credentials, as one message; "" when fine. Touches no
// network (the registry calls it for dry runs).
std::string config_problem(const BackendOptions& options);

}  // namespace ckpt::backends::s3
