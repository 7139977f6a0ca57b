#include "harness/plan/stand_in_text.hpp"

namespace ckpt::harness {

std::string stand_in_text(std::string_view head, std::uint64_t bytes) {
  std::string text(bytes, '\0');
  for (std::size_t i = 0; i < text.size(); ++i)
    text[i] = i < head.size() ? head[i] : static_cast<char>('a' + i % 26);
  return text;
}

}  // namespace ckpt::harness
