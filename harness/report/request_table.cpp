#include "harness/report/request_table.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "harness/report/html_report.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

// The counter names of results/SCHEMA.md's `phases.<direction>.counters`, in column order.
constexpr std::array<const char*, 10> kRequestCounters{
    "requests.put",  "requests.part", "requests.multipart", "requests.get", "requests.ranged_get",
    "requests.list", "requests.head", "requests.delete",    "retries",      "throttled"};

const std::vector<std::string> kRequestHeader{
    "case", "where", "per",    "PUT",     "part",      "multipart",  "GET",       "ranged GET",
    "LIST", "HEAD",  "DELETE", "retries", "throttled", "back-off s", "first byte"};

bool any_requests(const ReportModel& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const ReportRow& r) { return !r.c->requests.empty(); });
}

// How many checkpoints or restores a place's counts add up over, and its "per" cell: the
// counts are sums over the timed iterations (the loop: over its checkpoints); the store's cover
// the whole case.
std::pair<std::size_t, std::string> divisor(const CaseRecord& c, const std::string& where) {
  if (where == "write") return {c.write.seconds.size(), "checkpoint"};
  if (where == "read") return {c.read.seconds.size(), "restore or load"};
  if (where == "training")
    return {c.training ? c.training->checkpoints.size() : 0, "loop checkpoint"};
  return {1, "case"};
}

std::string per_one(std::uint64_t total, std::size_t n) {
  return fmt::format("{:.4g}", static_cast<double>(total) / static_cast<double>(n));
}

// The mean time to the first byte of a GET ("-" without GETs or without the counter).
std::string first_byte(const RequestCounts& counts) {
  const auto count = [&](const char* name) {
    const auto it = counts.find(name);
    return it == counts.end() ? std::uint64_t{0} : it->second;
  };
  const std::uint64_t gets = count("requests.get") + count("requests.ranged_get");
  if (gets == 0 || !counts.contains("first_byte_us")) return "-";
  return fmt::format(
      "{:.3g} ms", static_cast<double>(count("first_byte_us")) * 1e-3 / static_cast<double>(gets));
}

std::vector<std::vector<std::string>> request_rows(const ReportModel& m) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportRow& r : m.rows) {
    for (const auto& [where, counts] : r.c->requests) {
      auto [n, unit] = divisor(*r.c, where);
      if (n == 0) n = 1, unit = "case";
      std::vector<std::string> row{r.name, where, unit};
      for (const char* name : kRequestCounters) {
        const auto it = counts.find(name);
        row.push_back(it == counts.end() ? "-" : per_one(it->second, n));
      }
      const auto backoff = counts.find("backoff_us");
      row.push_back(backoff == counts.end()
                        ? "-"
                        : fmt::format("{:.4g}", static_cast<double>(backoff->second) * 1e-6 /
                                                    static_cast<double>(n)));
      row.push_back(first_byte(counts));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

constexpr const char* kRequestNote =
    "requests of one checkpoint, restore or load (the median case's counts are sums over the "
    "timed iterations and every process, divided by their number); store: the checkpoint "
    "store's own requests by process 0 over the whole case (listing, lock, manifests, retiring); "
    "part: multipart part uploads; multipart: create + complete; throttled: 503 and 429 answers; "
    "first byte: mean time from sending a GET until its answer's first byte. "
    "Multiply by your store's price per request kind";

}  // namespace

void print_request_table(const ReportModel& m, bool markdown, std::ostream& out) {
  if (!any_requests(m)) return;
  fmt::print(out, "\n{}Requests (object storage)\n\n", markdown ? "## " : "");
  std::vector<bool> right(kRequestHeader.size(), true);
  right[0] = right[1] = right[2] = false;
  Table table(kRequestHeader, right);
  for (auto& row : request_rows(m)) table.add(std::move(row));
  table.print(out, markdown);
  fmt::print(out, "\n{}\n", kRequestNote);
}

std::string request_table_html(const ReportModel& m) {
  if (!any_requests(m)) return "";
  return "<h2>Requests (object storage)</h2>" + html_table(kRequestHeader, request_rows(m), 3) +
         "<p>" + html_escape(kRequestNote) + ".</p>";
}

}  // namespace ckpt::harness
