#include "backends/s3/s3_xml.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace ckpt::backends::s3 {
namespace {

constexpr std::array<std::pair<std::string_view, char>, 5> kEntities = {
    {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}}};

std::string unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool replaced = false;
    for (const auto& [entity, c] : kEntities) {
      if (text.substr(i, entity.size()) == entity) {
        out += c;
        i += entity.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> xml_elements(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  std::vector<std::string> found;
  for (std::size_t at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at)) {
    const std::size_t end = xml.find(close, at + open.size());
    if (end == std::string_view::npos) break;
    found.emplace_back(xml.substr(at + open.size(), end - at - open.size()));
    at = end + close.size();
  }
  return found;
}

std::string xml_value(std::string_view xml, std::string_view tag) {
  const std::vector<std::string> found = xml_elements(xml, tag);
  return found.empty() ? std::string() : unescape(found.front());
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto entity = std::find_if(kEntities.begin(), kEntities.end(),
                                     [c](const auto& e) { return e.second == c; });
    if (entity == kEntities.end()) {
      out += c;
    } else {
      out += entity->first;
    }
  }
  return out;
}

}  // namespace ckpt::backends::s3
