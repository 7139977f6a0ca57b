#include "harness/report/report_table.hpp"

#include <algorithm>

#include "harness/report/report_format.hpp"

namespace ckpt::harness {

Table::Table(std::vector<std::string> header, std::vector<bool> right)
    : header_(std::move(header)), right_(std::move(right)) {
  right_.resize(header_.size(), false);
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void Table::add_heading(std::string text) {
  rows_.push_back({std::move(text)});
}

void Table::print(std::ostream& out, bool markdown) const {
  if (markdown) {
    std::string line = "|";
    for (const std::string& h : header_) line += " " + h + " |";
    out << line << "\n|";
    for (std::size_t i = 0; i < header_.size(); ++i) out << (right_[i] ? "---:|" : "---|");
    out << '\n';
    for (const auto& row : rows_) {
      if (row.size() == 1) {
        out << "| **" << row[0] << "** |" << std::string(header_.size() - 1, '|') << '\n';
        continue;
      }
      out << "|";
      for (const std::string& cell : row) out << " " << cell << " |";
      out << '\n';
    }
    return;
  }
  std::vector<std::size_t> width(header_.size());
  for (std::size_t i = 0; i < header_.size(); ++i) width[i] = display_width(header_[i]);
  for (const auto& row : rows_) {
    if (row.size() == 1) continue;
    for (std::size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], display_width(row[i]));
  }
  const auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      line += right_[i] ? pad_left(row[i], width[i]) : pad_right(row[i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print_row(header_);
  for (const auto& row : rows_) {
    if (row.size() == 1) {
      out << row[0] << '\n';
    } else {
      print_row(row);
    }
  }
}

}  // namespace ckpt::harness
