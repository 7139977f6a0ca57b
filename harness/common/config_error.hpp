#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ckpt::harness {

// A configuration or input-file problem. what() is the whole user-facing message:
// "<source>:<line>: <key>: <problem> — <fix>" (line and key omitted when unknown).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string source, std::int64_t line, std::string key, const std::string& problem);
  const std::string& source() const noexcept { return source_; }
  std::int64_t line() const noexcept { return line_; }
  const std::string& key() const noexcept { return key_; }

 private:
  std::string source_;
  std::int64_t line_;
  std::string key_;
};

}  // namespace ckpt::harness
