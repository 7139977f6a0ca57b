#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "harness/report/report_format.hpp"
#include "harness/report/reporter.hpp"

namespace ckpt::harness {

// The summary printed when the run ends: one row per case (swept values, size, files, write
// and read bandwidth as median [min–max] over the timed iterations, verification, status), the
// notes the rows need (units, model.scale, backends that store nothing), and per case where
// its wall time went.
class ConsoleReporter final : public Reporter {
 public:
  ConsoleReporter(std::ostream& out, BandwidthUnit unit) : out_(out), unit_(unit) {}
  void begin(const RunInfo& run) override;
  void add(const CaseResult& result) override;
  void end() override;

 private:
  std::ostream& out_;
  BandwidthUnit unit_;
  std::vector<CaseResult> results_;
};

// The table and its notes, as ConsoleReporter::end prints them.
void print_summary(std::ostream& out, const std::vector<CaseResult>& results, BandwidthUnit unit);

// "case 0: phases cover 97.1% of the 12.3 s wall time (setup 0.210 s, fill 0.105 s, …)".
std::string wall_time_line(const CaseResult& result);

}  // namespace ckpt::harness
