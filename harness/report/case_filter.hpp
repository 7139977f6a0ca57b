#pragma once

// Picking cases by KEY=VALUE pairs (report's --baseline, project's --near-tier and --far-tier).
#include <string>
#include <utility>
#include <vector>

#include "harness/report/run_input.hpp"

namespace ckpt::harness {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// "KEY=VALUE[,KEY=VALUE...]"; throws std::runtime_error naming `flag` for a part without `=` or
// without a key.
KeyValues parse_key_values(const std::string& text, const std::string& flag);

// Every pair's key has that value in the case (CaseRecord::value_of: `run` or a campaign key).
bool case_matches(const CaseRecord& c, const KeyValues& pairs);

}  // namespace ckpt::harness
