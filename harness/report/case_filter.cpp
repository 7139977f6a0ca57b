#include "harness/report/case_filter.hpp"

#include <algorithm>
#include <stdexcept>

namespace ckpt::harness {

KeyValues parse_key_values(const std::string& text, const std::string& flag) {
  KeyValues pairs;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    const std::size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::runtime_error(flag + ": `" + part + "` is not KEY=VALUE");
    pairs.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    start = comma + 1;
  }
  return pairs;
}

bool case_matches(const CaseRecord& c, const KeyValues& pairs) {
  return std::all_of(pairs.begin(), pairs.end(),
                     [&](const auto& p) { return c.value_of(p.first) == p.second; });
}

}  // namespace ckpt::harness
