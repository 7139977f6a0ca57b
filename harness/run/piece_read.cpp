#include "harness/run/piece_read.hpp"

#include "harness/exec/piece_sharing.hpp"

namespace ckpt::harness {
namespace {

// `more`, a read that followed `sample`'s, counted in it.
void add_read(ProcessSample& sample, const ProcessSample& more) {
  sample.seconds += more.seconds;
  sample.phases.open += more.phases.open;
  sample.phases.transfer += more.phases.transfer;
  sample.phases.sync += more.phases.sync;
  sample.phases.close += more.phases.close;
  sample.copy_seconds += more.copy_seconds;
  sample.cpu_user_seconds += more.cpu_user_seconds;
  sample.cpu_system_seconds += more.cpu_system_seconds;
  for (const auto& [name, count] : more.counters) sample.counters[name] += count;
  sample.notes.insert(sample.notes.end(), more.notes.begin(), more.notes.end());
  if (more.latency && sample.latency)
    sample.latency->merge(*more.latency);
  else if (more.latency)
    sample.latency = more.latency;
  if (sample.error.empty()) sample.error = more.error;
}

}  // namespace

void prepare_piece_read(CaseState& s, PieceExchange exchange, MemorySpace& space) {
  CaseBuffers& data = s.data;
  data.exchange = std::move(exchange);
  data.exchange_buffer = ProcessBuffer({data.exchange.staging.front()}, space);  // every round's
  data.exchange_buffer.zero();
  data.bounce.assign(data.exchange.bounce_bytes, std::byte{0});
  std::uint64_t planned = 0;  // what the process's ranks would read each on its own
  for (const RankPlan& plan : data.read_plans) planned += plan.io.bytes();
  Comm& comm = s.context.comm;
  s.record.result.replicas =
      ReplicaSummary{.mode = "cooperative",
                     .held_bytes = comm.sum(planned),
                     .storage_bytes = comm.sum(data.exchange.storage_bytes()),
                     .rounds = data.exchange.rounds()};
}

ProcessSample timed_piece_read(CaseState& s, backends::Backend& backend,
                               const ProcessBuffer& buffer) {
  CaseBuffers& data = s.data;
  Comm& comm = s.context.comm;
  ProcessSample sample =
      timed_transfer(backend, data.exchange.own, buffer, false, comm, TransferOrder::by_file);
  PieceCounts counts;
  for (int round = 0; round < data.exchange.rounds(); ++round) {  // as many on every process
    const RankPlan& staged = data.exchange.staging[static_cast<std::size_t>(round)];
    add_read(sample, timed_transfer(backend, {staged}, data.exchange_buffer, false, comm));
    const auto start = Clock::now();
    const PieceCounts sent =
        exchange_pieces(comm, data.exchange, round, data.exchange_buffer, buffer, data.bounce);
    sample.seconds += seconds_since(start);
    counts.sent_bytes += sent.sent_bytes;
    counts.copied_bytes += sent.copied_bytes;
  }
  // Every rank's bytes are in place when the exchange ends.
  sample.rank_seconds.assign(buffer.ranks(), sample.seconds);
  ReplicaSummary& r = *s.record.result.replicas;
  r.interconnect_bytes = comm.sum(counts.sent_bytes);
  r.copied_bytes = comm.sum(counts.copied_bytes);
  return sample;
}

}  // namespace ckpt::harness
