#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ckpt::harness {

// A table printed as aligned text (columns padded by display width) or as a Markdown table.
class Table {
 public:
  // right[i]: column i is right-aligned (numbers).
  Table(std::vector<std::string> header, std::vector<bool> right);
  void add(std::vector<std::string> row);
  // A line of its own between rows ("strategy.mapping = shared_file"); a bold row in Markdown.
  void add_heading(std::string text);
  void print(std::ostream& out, bool markdown) const;
  const std::vector<std::string>& header() const { return header_; }
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;  // a heading: one cell
};

}  // namespace ckpt::harness
