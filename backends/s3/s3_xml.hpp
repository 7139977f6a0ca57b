#pragma once

// The little XML the S3 protocol needs: values out of an answer, escaped text into a request.
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::backends::s3 {

// The text of the first <tag>...</tag> in `xml`, entities decoded, or "".
std::string xml_value(std::string_view xml, std::string_view tag);
// The raw inner text of every <tag>...</tag> in `xml`, in order (for elements that hold others).
std::vector<std::string> xml_elements(std::string_view xml, std::string_view tag);
// `text` with &, <, >, " and ' as entities.
std::string xml_escape(std::string_view text);

}  // namespace ckpt::backends::s3
