// Key paths of results records and of results/SCHEMA.md, for the test that holds one against the
// other. The doc's convention (SCHEMA.md says it too): in each table whose first column is headed
// `key path`, that column names key paths in backticks, dotted from the record's root;
// `name[]` is every element of an array of objects; `{a,b}` is the alternatives a and b;
// `<name>` is any one key, whose value the doc describes in words (the walk stops there).
// Arrays of numbers, strings or arrays are leaves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ckpt::schema_doc {

// Segments from the record's root; "[]" stands for the elements of an array.
using Path = std::vector<std::string>;

inline std::string path_text(const Path& path) {
  std::string text;
  for (const std::string& segment : path) {
    if (segment != "[]" && !text.empty()) text += '.';
    text += segment;
  }
  return text;
}

namespace detail {

inline void walk(const nlohmann::json& value, Path& at, std::set<Path>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      at.push_back(key);
      out.insert(at);
      walk(child, at, out);
      at.pop_back();
    }
  } else if (value.is_array()) {
    at.push_back("[]");
    for (const auto& element : value) {
      if (element.is_object()) walk(element, at, out);
    }
    at.pop_back();
  }
}

// "a.{b,c}.d" -> "a.b.d", "a.c.d" (every brace group, left to right).
inline std::vector<std::string> expand_braces(const std::string& text) {
  const std::size_t open = text.find('{');
  if (open == std::string::npos) return {text};
  const std::size_t close = text.find('}', open);
  if (close == std::string::npos) throw std::invalid_argument("unclosed { in `" + text + "`");
  std::vector<std::string> out;
  const std::string inside = text.substr(open + 1, close - open - 1);
  for (std::size_t start = 0; start <= inside.size();) {
    const std::size_t comma = std::min(inside.find(',', start), inside.size());
    const std::string choice = inside.substr(start, comma - start);
    for (std::string& rest : expand_braces(text.substr(close + 1)))
      out.push_back(text.substr(0, open) + choice + rest);
    start = comma + 1;
  }
  return out;
}

// "training.checkpoints[].times.due" -> training, checkpoints, [], times, due.
inline Path split(const std::string& text) {
  Path path;
  std::string segment;
  const auto finish = [&] {
    bool elements = false;
    if (segment.size() > 2 && segment.ends_with("[]")) {
      segment.resize(segment.size() - 2);
      elements = true;
    }
    if (segment.empty()) throw std::invalid_argument("an empty key in `" + text + "`");
    path.push_back(segment);
    if (elements) path.emplace_back("[]");
    segment.clear();
  };
  bool placeholder = false;
  for (const char ch : text) {
    if (ch == '<') placeholder = true;
    if (ch == '>') placeholder = false;
    if (ch == '.' && !placeholder) {
      finish();
    } else {
      segment += ch;
    }
  }
  finish();
  return path;
}

inline std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::size_t start = row.find('|') + 1;
  for (std::size_t bar = row.find('|', start); bar != std::string::npos;
       bar = row.find('|', start)) {
    out.push_back(row.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

inline std::string trimmed(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') - begin + 1);
}

inline bool is_placeholder(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '<' && segment.back() == '>';
}

inline bool segment_matches(const std::string& doc, const std::string& record) {
  return doc == record || (is_placeholder(doc) && record != "[]");
}

// The first n segments of `doc` match the first n of `record`.
inline bool prefix_matches(const Path& doc, const Path& record, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!segment_matches(doc[i], record[i])) return false;
  }
  return true;
}

}  // namespace detail

// Every key path of a record: each member of each object at every depth, array elements as "[]".
inline std::set<Path> record_paths(const nlohmann::json& record) {
  std::set<Path> out;
  Path at;
  detail::walk(record, at, out);
  return out;
}

// A key path the doc names, as written and as segments.
struct DocPath {
  std::string written;
  Path path;
};

// The key paths of the `key path` tables of a Markdown text. Throws std::invalid_argument on a
// path it cannot read.
inline std::vector<DocPath> doc_paths(const std::string& markdown) {
  std::vector<DocPath> out;
  bool in_table = false;
  bool key_table = false;
  std::size_t start = 0;
  while (start < markdown.size()) {
    const std::size_t end = std::min(markdown.find('\n', start), markdown.size());
    const std::string line = markdown.substr(start, end - start);
    start = end + 1;
    if (!line.starts_with("|")) {
      in_table = false;
      continue;
    }
    const std::vector<std::string> row = detail::cells(line);
    if (row.empty()) continue;
    const std::string first = detail::trimmed(row[0]);
    if (!in_table) {  // the header row
      in_table = true;
      key_table = first == "key path";
      continue;
    }
    if (!key_table || first.starts_with("---")) continue;
    for (std::size_t open = first.find('`'); open != std::string::npos;
         open = first.find('`', open)) {
      const std::size_t close = first.find('`', open + 1);
      if (close == std::string::npos) throw std::invalid_argument("unclosed ` in " + line);
      for (const std::string& text :
           detail::expand_braces(first.substr(open + 1, close - open - 1)))
        out.push_back({text, detail::split(text)});
      open = close + 1;
    }
  }
  return out;
}

// A record path is documented when a doc path matches it, or goes on below it (an object whose
// members the doc names), or ends in a placeholder matching the start of it.
inline bool documented(const Path& record, const std::vector<DocPath>& doc) {
  return std::any_of(doc.begin(), doc.end(), [&record](const DocPath& d) {
    const Path& p = d.path;
    if (p.size() >= record.size()) return detail::prefix_matches(p, record, record.size());
    return detail::is_placeholder(p.back()) && detail::prefix_matches(p, record, p.size());
  });
}

// The doc path names a key path of at least one record.
inline bool in_some_record(const DocPath& doc, const std::set<Path>& records) {
  return std::any_of(records.begin(), records.end(), [&doc](const Path& r) {
    return r.size() == doc.path.size() && detail::prefix_matches(doc.path, r, r.size());
  });
}

}  // namespace ckpt::schema_doc
