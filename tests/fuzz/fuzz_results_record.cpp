// One results.jsonl line, as report, compare, gate and project read it: bounded parsing, the
// typed fields, then the report and comparison built and printed from the case (their labels,
// flattened configurations and tables recurse into what the line holds), and the HTML page with its
// charts and the loop's timeline.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "harness/common/json_input.hpp"
#include "harness/report/compare.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_model.hpp"
#include "harness/report/run_input.hpp"
#include "tests/fuzz/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ckpt::harness;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  return ckpt::fuzz::run_one([&] {
    const JsonSource source{.file = "fuzz.jsonl", .line = 1};
    RunRecord run{.name = "fuzz", .file = "fuzz.jsonl", .cases = {}};
    run.cases.push_back(parse_case(
        parse_untrusted_json(text, source, {.max_bytes = std::uint64_t{1} << 20}), source));
    std::ostringstream out;
    print_report(build_report({run}, {}), true, out);
    out << html_report(build_report({run}, {}));
    const Comparison c = compare_runs(run, run, 0.05);
    print_comparison(c, run, run, 0.05, false, out);
    workload_difference(c, run, run);
  });
}
