#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ckpt::workloads {

// A model or parallelism description that cannot be laid out. `key()` names the offending
// setting (a model key such as "num_key_value_heads", or a parallelism option such as "tp")
// so that callers reading a file can point at its line.
class SpecError : public std::invalid_argument {
 public:
  SpecError(std::string key, const std::string& message)
      : std::invalid_argument(message), key_(std::move(key)) {}
  const std::string& key() const noexcept { return key_; }

 private:
  std::string key_;
};

// Throws SpecError(key) unless value >= 1.
inline void require_positive(std::int64_t value, const char* key) {
  if (value < 1) {
    throw SpecError(
        key, std::string(key) + " must be a positive integer (got " + std::to_string(value) + ")");
  }
}

}  // namespace ckpt::workloads
