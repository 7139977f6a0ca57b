// Helpers shared by the campaign tests: a base campaign text, parse, and the error it raises.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "backends/registry.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/common/config_error.hpp"
#include "tests/unit/temp_dir.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness::campaign_test {

namespace fs = std::filesystem;
using nlohmann::json;

using test_support::TempDir;

// Lines 1-5; text appended to it starts on line 6, in [campaign] unless it opens a table.
const std::string kBase = R"([model]
name = "llama3-8b"
[campaign]
name = "t"
target = "out"
)";

// kBase with `lines` added to [model], from line 3.
inline std::string with_model(const std::string& lines) {
  return "[model]\nname = \"llama3-8b\"\n" + lines + "[campaign]\nname = \"t\"\ntarget = \"out\"\n";
}

inline Campaign parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_campaign(text, "c.toml", overrides);
}

// Runs `load` and returns the ConfigError it throws; fails the test if it throws none.
inline ConfigError config_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError";
  return ConfigError("", 0, "", "");
}

inline ConfigError error_of(const std::string& text,
                            const std::vector<std::string>& overrides = {}) {
  return config_error([&] { parse(text, overrides); });
}

inline std::string message_of(const std::string& text,
                              const std::vector<std::string>& overrides = {}) {
  return error_of(text, overrides).what();
}

}  // namespace ckpt::harness::campaign_test
