#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "harness/spec/case.hpp"

namespace ckpt::harness {

struct Campaign {
  std::string name;
  std::string source;
  std::vector<Case> cases;  // the cartesian product of every list-valued key, in file order
  // Things worth telling the user that change nothing, e.g. options of a backend no case uses.
  std::vector<std::string> notes;
};

// Reads a campaign TOML file, applies `overrides` ("dotted.key=value", the same keys as the
// file; the value is a TOML value, or a bare string), expands sweeps into cases and validates
// each (model, parallelism, option values). Throws ConfigError naming file, line and key.
Campaign load_campaign(const std::filesystem::path& path,
                       const std::vector<std::string>& overrides);
Campaign parse_campaign(std::string_view text, const std::string& source,
                        const std::vector<std::string>& overrides);

}  // namespace ckpt::harness
