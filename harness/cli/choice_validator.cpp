#include "harness/cli/choice_validator.hpp"

#include <algorithm>

#include "harness/common/suggest.hpp"

namespace ckpt::harness {

CLI::Validator one_of(std::vector<std::string> choices) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  const std::string description = "{" + list + "}";
  return CLI::Validator(
      [choices = std::move(choices), list](std::string& value) -> std::string {
        if (std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
        return "`" + value + "` is not one of " + list + did_you_mean(value, choices);
      },
      description);
}

}  // namespace ckpt::harness
