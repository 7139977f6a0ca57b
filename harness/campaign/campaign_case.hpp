#pragma once

// Turning one point of a campaign's expansion into a validated Case. Internal to
// harness/campaign.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "harness/campaign/campaign_settings.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness::schema {

// strategy.max_shard_bytes by default: save_pretrained's max_shard_size in transformers 5
// ("50GB", decimal); transformers 4's was 5 GB.
inline constexpr std::int64_t kMaxShardBytesDefault = 50'000'000'000;
inline constexpr std::int64_t kMaxShardBytesBefore = 5'000'000'000;

// The value of every key for one case — given, swept or default — and where it came from.
class CaseValues {
 public:
  // `choice[i]` picks the value of settings.given[i] (0 unless it is swept); this is case
  // `index` of `cases`.
  CaseValues(const Settings& settings, const std::vector<std::size_t>& choice,
             const std::string& source, std::int64_t index, std::int64_t cases);

  const Value& value(std::string_view dotted) const;
  std::int64_t integer(std::string_view dotted) const {
    return std::get<std::int64_t>(value(dotted));
  }
  bool boolean(std::string_view dotted) const { return std::get<bool>(value(dotted)); }
  const std::string& text(std::string_view dotted) const {
    return std::get<std::string>(value(dotted));
  }

  // Throws ConfigError at the key's file and line, naming the swept values of this case.
  [[noreturn]] void fail(std::string_view dotted, const std::string& problem) const;

  // {"strategy.mapping": "shared_file", ...}: the swept keys only.
  const nlohmann::json& swept() const { return swept_; }
  // Every key, nested by table: {"campaign": {...}, "model": {...}, ...}.
  nlohmann::json config() const;

 private:
  struct Origin {
    const std::string* source;
    std::int64_t line;
  };
  std::vector<const Value*> values_;  // by schema index
  std::vector<Origin> origins_;
  nlohmann::json swept_ = nlohmann::json::object();
  std::string context_;  // " (case 3 of 8: ...)" when the campaign sweeps
};

// Builds and validates cases. Caches loaded models and validated layouts: sweeps repeat the
// same (model, parallelism, state) many times, and model files are read once.
class CaseBuilder {
 public:
  Case build(const CaseValues& values, std::int64_t index, const std::string& source);

 private:
  const workloads::ModelSpec& model(const CaseValues& values);
  std::int64_t validated_world_size(const Case& c, const CaseValues& values);

  std::map<std::string, workloads::ModelSpec> models_;
  std::map<std::string, std::int64_t> world_sizes_;  // by the (model, parallel, state) config
};

}  // namespace ckpt::harness::schema
