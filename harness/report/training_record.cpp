#include "harness/report/training_record.hpp"

namespace ckpt::harness {
namespace {

// Far more than a loop a benchmark runs; bounds what a hostile file can make the report hold.
constexpr std::size_t kMaxEntries = std::size_t{1} << 20;

double number_or(const JsonField& j, const char* key, double otherwise) {
  const std::optional<JsonField> f = j.find(key);
  return f ? f->non_negative() : otherwise;
}

std::optional<LoopSpan> span_of(const JsonField& times, const char* key) {
  const std::optional<JsonField> f = times.find(key);
  if (!f) return std::nullopt;
  const std::vector<JsonField> ends = f->elements(2);
  if (ends.size() != 2) f->fail("must be [start, end] in seconds from the loop's start");
  const LoopSpan span{ends[0].non_negative(), ends[1].non_negative()};
  if (span.end < span.start) f->fail("ends before it starts");
  return span;
}

LoopCheckpoint checkpoint_of(const JsonField& j) {
  LoopCheckpoint c;
  if (const auto f = j.find("iteration")) c.iteration = f->integer();
  c.stall_seconds = number_or(j, "stall_seconds", 0);
  c.time_to_durable_seconds = number_or(j, "time_to_durable_seconds", 0);
  c.flush_gib_s = number_or(j, "flush_gib_s", 0);
  if (const auto f = j.find("committed")) c.committed = f->boolean();
  if (const auto times = j.find("times")) {
    c.timed = true;
    c.due = times->at("due").non_negative();
    c.resumed = times->at("resumed").non_negative();
    c.snapshot = span_of(*times, "snapshot");
    c.flush = span_of(*times, "flush");
    c.commit = span_of(*times, "commit");
  }
  return c;
}

}  // namespace

std::vector<double> TrainingRecord::committed(double LoopCheckpoint::*field) const {
  std::vector<double> out;
  for (const LoopCheckpoint& c : checkpoints) {
    if (c.committed && (field != &LoopCheckpoint::flush_gib_s || c.*field > 0))
      out.push_back(c.*field);
  }
  return out;
}

TrainingRecord parse_training(const JsonField& t) {
  TrainingRecord r;
  if (const auto f = t.find("engine")) r.engine = f->string();
  r.flush_gib_s = number_or(t, "flush_gib_s", 0);
  if (const auto list = t.find("checkpoints")) {
    for (const JsonField& c : list->elements(kMaxEntries))
      r.checkpoints.push_back(checkpoint_of(c));
  }
  if (const auto list = t.find("iteration_times")) {
    for (const JsonField& i : list->elements(kMaxEntries)) {
      r.iterations.push_back({i.at("start").non_negative(), i.at("compute_end").non_negative(),
                              i.at("update_start").non_negative(), i.at("end").non_negative()});
    }
  }
  return r;
}

}  // namespace ckpt::harness
