#pragma once

// A .jsonl fixture (one JSON object per line, as the measuring scripts under tests/data write
// them), parsed line by line.

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ckpt::test_support {

inline std::vector<nlohmann::json> json_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

}  // namespace ckpt::test_support
