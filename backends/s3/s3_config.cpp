#include "backends/s3/s3_config.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "backends/s3/s3_declaration.hpp"

namespace ckpt::backends::s3 {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

// "http://a:9000, https://b/" -> {"http://a:9000", "https://b"}; throws for anything else.
std::vector<std::string> parse_endpoints(const std::string& list) {
  std::vector<std::string> endpoints;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    std::string endpoint = trimmed(list.substr(begin, comma - begin));
    while (endpoint.ends_with('/')) endpoint.pop_back();
    const bool http = endpoint.starts_with("http://") || endpoint.starts_with("https://");
    const std::size_t host = endpoint.find("://") + 3;
    if (!http || endpoint.size() <= host) {
      throw std::invalid_argument(
          "s3: `backend.s3.endpoint` = \"" + list + "\": \"" + endpoint +
          "\" is not an http:// or https:// URL; give base URLs separated by commas, e.g. "
          "\"http://127.0.0.1:9000\" or \"https://s3.us-east-1.amazonaws.com\"");
    }
    endpoints.push_back(endpoint);
    begin = comma + 1;
  }
  return endpoints;
}

[[noreturn]] void throw_required(const char* key, const char* example) {
  throw std::invalid_argument(std::string("s3: `backend.s3.") + key + "` is required: set it in " +
                              "the campaign's [backend.s3] table, e.g. " + key + " = " + example);
}

}  // namespace

std::optional<Credentials> credentials_from_environment() {
  Credentials c{environment("AWS_ACCESS_KEY_ID"), environment("AWS_SECRET_ACCESS_KEY"),
                environment("AWS_SESSION_TOKEN")};
  if (c.key_id.empty() || c.secret.empty()) return std::nullopt;
  return c;
}

std::size_t S3Config::endpoint_index(int rank) const {
  return static_cast<std::size_t>(rank < 0 ? 0 : rank) % endpoints.size();
}

S3Config parse_config(const BackendOptions& options) {
  const OptionValues values("s3", option_table(), options);
  S3Config config;
  if (values.text("endpoint").empty()) throw_required("endpoint", "\"http://127.0.0.1:9000\"");
  if (values.text("bucket").empty()) throw_required("bucket", "\"checkpoints\"");
  config.endpoints = parse_endpoints(values.text("endpoint"));
  config.endpoint_choice = values.text("endpoint_choice") == "least_loaded"
                               ? EndpointChoice::least_loaded
                               : EndpointChoice::rank;
  config.bucket = values.text("bucket");
  config.prefix = values.text("prefix");
  config.region = values.text("region");
  config.virtual_addressing = values.text("addressing") == "virtual";
  config.part_size = static_cast<std::uint64_t>(values.integer("part_size"));
  config.concurrency = static_cast<int>(values.integer("concurrency"));
  config.retries = static_cast<int>(values.integer("retries"));
  config.backoff_ms = static_cast<int>(values.integer("backoff_ms"));
  config.ca_file = values.text("ca_file");
  if (!config.ca_file.empty() && ::access(config.ca_file.c_str(), R_OK) != 0) {
    throw std::invalid_argument("s3: `backend.s3.ca_file` = \"" + config.ca_file +
                                "\" cannot be read: give the path of a PEM file of certificate "
                                "authorities, or leave it out to use the system's");
  }
  return config;
}

std::string config_problem(const BackendOptions& options) {
  try {
    parse_config(options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  if (!credentials_from_environment()) {
    return "s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
           "AWS_SESSION_TOKEN for temporary ones) in the environment of every process; they are "
           "never read from the campaign";
  }
  return "";
}

}  // namespace ckpt::backends::s3
