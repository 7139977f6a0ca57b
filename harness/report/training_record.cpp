#include "harness/report/training_record.hpp"

#include <limits>
#include <type_traits>
#include <utility>

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

// `key`'s members memory, local, peer and remote into the four fields (a missing one stays 0).
template <typename T>
void by_source(const JsonField& r, const char* key, T RecoveryRecord::*memory,
               T RecoveryRecord::*local, T RecoveryRecord::*peer, T RecoveryRecord::*remote,
               RecoveryRecord& out) {
  const std::optional<JsonField> f = r.find(key);
  if (!f) return;
  const std::pair<const char*, T RecoveryRecord::*> fields[] = {
      {"memory", memory}, {"local", local}, {"peer", peer}, {"remote", remote}};
  for (const auto& [name, field] : fields) {
    const std::optional<JsonField> v = f->find(name);
    if (!v) continue;
    if constexpr (std::is_same_v<T, double>)
      out.*field = v->non_negative();
    else if constexpr (std::is_same_v<T, int>)
      out.*field = static_cast<int>(v->integer(0, std::numeric_limits<int>::max()));
    else
      out.*field = v->count();
  }
}

RecoveryRecord recovery_of(const JsonField& r) {
  RecoveryRecord out;
  for (const JsonField& n : r.at("lost_nodes").elements(kMaxEntries))
    out.lost_nodes.push_back(n.integer(0));
  out.iteration = r.at("iteration").integer(-1);
  out.seconds = r.at("seconds").non_negative();
  by_source(r, "bytes", &RecoveryRecord::memory_bytes, &RecoveryRecord::local_bytes,
            &RecoveryRecord::peer_bytes, &RecoveryRecord::remote_bytes, out);
  by_source(r, "parts", &RecoveryRecord::memory_parts, &RecoveryRecord::local_parts,
            &RecoveryRecord::peer_parts, &RecoveryRecord::remote_parts, out);
  by_source(r, "seconds_by_source", &RecoveryRecord::memory_seconds, &RecoveryRecord::local_seconds,
            &RecoveryRecord::peer_seconds, &RecoveryRecord::remote_seconds, out);
  if (const auto f = r.find("restarted")) out.restarted = f->boolean();
  if (const auto f = r.find("peer_parts_from_memory"))
    out.peer_parts_from_memory = static_cast<int>(f->integer(0, out.peer_parts));
  return out;
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
  if (const auto f = t.find("recovery")) r.recovery = recovery_of(*f);
  return r;
}

}  // namespace ckpt::harness
