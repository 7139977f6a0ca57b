#include "harness/cli/run_progress.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <numeric>

#include "harness/report/report_format.hpp"

namespace ckpt::harness {

std::string format_duration(double seconds) {
  if (seconds < 9.95) return fmt::format("{:.1f} s", std::max(0.0, seconds));
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 60) return fmt::format("{} s", whole);
  if (whole < 3600) return fmt::format("{} min {} s", whole / 60, whole % 60);
  return fmt::format("{} h {} min", whole / 3600, whole / 60 % 60);
}

RunProgress::RunProgress(std::ostream& out, Verbosity verbosity, std::size_t cases)
    : out_(out), verbosity_(verbosity), cases_(cases) {}

std::string RunProgress::position(const Case& c) const {
  return fmt::format("case {} ({} of {})", c.index, started_, cases_);
}

double RunProgress::mean_case_seconds(std::optional<double> current_projection) const {
  const double done = std::accumulate(case_seconds_.begin(), case_seconds_.end(), 0.0);
  const auto n = static_cast<double>(case_seconds_.size());
  if (n == 0 && !current_projection) return 0;
  return current_projection ? (done + *current_projection) / (n + 1) : done / n;
}

void RunProgress::case_started(const Case& c) {
  ++started_;
  case_start_ = Clock::now();
  if (verbosity_ == Verbosity::quiet) return;
  std::string line = position(c) + ": " + swept_label(c.swept);
  if (!case_seconds_.empty()) {
    line += " — campaign ETA " + format_duration(mean_case_seconds(std::nullopt) *
                                                 static_cast<double>(cases_ - started_ + 1));
  }
  fmt::print(out_, "{}\n", line);
  out_.flush();
}

void RunProgress::iteration_done(const Case& c, const IterationReport& r) {
  if (verbosity_ == Verbosity::quiet) return;
  const int done = r.iteration + 1;
  const double case_eta = r.elapsed_seconds / done * (r.iterations - done);
  const double case_so_far = std::chrono::duration<double>(Clock::now() - case_start_).count();
  const double campaign_eta =
      case_eta + mean_case_seconds(case_so_far + case_eta) * static_cast<double>(cases_ - started_);
  std::string line = fmt::format("{} iteration {}/{}{}:", position(c), done, r.iterations,
                                 r.warmup ? " (warm-up)" : "");
  if (r.write_gib_s) line += fmt::format(" write {:.2f} GiB/s", *r.write_gib_s);
  if (r.read_gib_s) line += fmt::format(" read {:.2f} GiB/s", *r.read_gib_s);
  if (done < r.iterations) {
    line += " — case ETA " + format_duration(case_eta) + ", campaign ETA " +
            format_duration(campaign_eta);
  } else if (started_ < cases_) {
    line += " — campaign ETA " + format_duration(campaign_eta);
  }
  fmt::print(out_, "{}\n", line);
  if (verbosity_ == Verbosity::verbose) {
    std::string times;
    const auto add = [&](const char* what, const std::optional<double>& seconds) {
      if (seconds) times += fmt::format("{}{} {:.3f} s", times.empty() ? "" : ", ", what, *seconds);
    };
    add("write", r.write_seconds);
    add("read", r.read_seconds);
    add("verify", r.verify_seconds);
    if (!r.cache_policy.empty()) times += "; before the read: " + r.cache_policy;
    if (!times.empty()) fmt::print(out_, "  {}\n", times);
  }
  out_.flush();
}

void RunProgress::case_done() {
  case_seconds_.push_back(std::chrono::duration<double>(Clock::now() - case_start_).count());
}

}  // namespace ckpt::harness
