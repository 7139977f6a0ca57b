#include "harness/common/config_error.hpp"

namespace ckpt::harness {
namespace {

std::string format_message(const std::string& source, std::int64_t line, const std::string& key,
                           const std::string& problem) {
  std::string message = source;
  if (line > 0) message.append(":").append(std::to_string(line));
  message.append(": ");
  if (!key.empty()) message.append("`").append(key).append("`: ");
  return message.append(problem);
}

}  // namespace

ConfigError::ConfigError(std::string source, std::int64_t line, std::string key,
                         const std::string& problem)
    : std::runtime_error(format_message(source, line, key, problem)),
      source_(std::move(source)),
      line_(line),
      key_(std::move(key)) {}

}  // namespace ckpt::harness
