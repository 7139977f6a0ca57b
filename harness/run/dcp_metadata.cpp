#include "harness/run/dcp_metadata.hpp"

#include <set>

#include "harness/run/manifest.hpp"

namespace ckpt::harness {

bool writes_dcp_metadata(const Case& c) {
  return c.directory_layout == DirectoryLayout::dcp && c.mapping == Mapping::file_per_rank;
}

std::uint64_t dcp_metadata_bytes(const nlohmann::json& items) {
  std::uint64_t bytes = 400;
  std::set<std::string> tensors;
  for (const nlohmann::json& item : items) {
    const std::string fqn = item.at("state").get<std::string>() + "/" + item.at("name").get<std::string>();
    const std::uint64_t ndim = item.at("global_shape").size();
    if (tensors.insert(fqn).second) bytes += fqn.size() + 130 + 3 * ndim;
    bytes += fqn.size() + item.at("file").get<std::string>().size() + 150 + 6 * ndim;
  }
  return bytes;
}

void write_dcp_metadata(const std::filesystem::path& dir, const nlohmann::json& items) {
  const std::uint64_t bytes = dcp_metadata_bytes(items);
  const std::string head = "ckptbench stand-in for DCP's pickled Metadata: " + std::to_string(items.size()) + " chunks\n";
  std::string text(bytes, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) {
    text[i] = i < head.size() ? head[i] : static_cast<char>('a' + i % 26);
  }
  write_file_atomically(dir / kDcpMetadataName, text);
}

}  // namespace ckpt::harness
