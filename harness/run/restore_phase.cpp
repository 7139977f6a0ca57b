#include "harness/run/restore_phase.hpp"

#include <algorithm>

#include "harness/exec/cache_policy.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/exec/replica_share.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/run/case_setup.hpp"
#include "harness/run/codec_steps.hpp"
#include "harness/run/piece_read.hpp"
#include "harness/run/read_checks.hpp"
#include "harness/run/reshard_result.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

std::vector<backends::IoPlan> io_of(const std::vector<RankPlan>& plans) {
  std::vector<backends::IoPlan> out;
  for (const RankPlan& p : plans) out.push_back(p.io);
  return out;
}

std::uint64_t payload_bytes(const std::vector<RankPlan>& plans) {
  std::uint64_t bytes = 0;
  for (const RankPlan& p : plans) bytes += p.payload_bytes;
  return bytes;
}

// Copies out of scratch after the reads: a resharding restore's, or a delta checkpoint's runs
// over its base's pieces.
bool copies_after_read(const std::vector<RankPlan>& plans) {
  return std::any_of(plans.begin(), plans.end(),
                     [](const RankPlan& p) { return !p.reshard.copies.empty(); });
}

// One message of the cooperative restore's sharing between processes.
constexpr std::uint64_t kShareChunkBytes = std::uint64_t{4} << 20;

// restore.replicas = "cooperative", after this process read its pieces: every process's shared
// with the others holding them (collective, also after a failed read: the others wait for it).
// Its seconds count in the restore's; its bytes go to the record's `replicas`.
void share_after_read(CaseState& s, const ProcessBuffer& buffer, ProcessSample& sample) {
  const auto start = Clock::now();
  const ShareCounts counts =
      share_replicas(s.context.comm, s.data.shares, buffer, kShareChunkBytes);
  sample.seconds += seconds_since(start);
  ReplicaSummary& r = *s.record.result.replicas;
  r.interconnect_bytes = s.context.comm.sum(counts.sent_bytes);
  r.copied_bytes = s.context.comm.sum(counts.copied_bytes);
}

}  // namespace

RestorePhase::RestorePhase(CaseState& state) : s_(state) {}

void RestorePhase::prepare() {
  const Case& c = s_.context.c;
  fs::path dir;
  Manifest manifest;
  if (!open_stored_checkpoint(s_, c, dir, manifest)) return;
  ProcessPlans plans = plan_stored_reads(s_, c, dir, manifest, "");
  check_memory(s_, plans.buffer_bytes(), plans.exchange.buffer_bytes());
  CaseBuffers& data = s_.data;
  data.read_plans = std::move(plans.read);
  data.fetched_plans = std::move(plans.fetched);
  data.shares = std::move(plans.shares);
  MemorySpace& space = case_memory_space(s_);
  if (c.reuse_bytes > 0) {
    reuse_buffers(s_, space, false);
  } else {
    data.read_buffer = ProcessBuffer(data.read_plans, space);
    prepare_stored(s_, plans, space);
    s_.record.add_notes(space.notes());
  }
  record_sizes(s_, data.read_plans);
  if (auto& selective = s_.record.result.selective) {
    selective->full_bytes = s_.record.result.bytes_per_checkpoint;
    // A compressed checkpoint's restore reads the frames; another, the plans' requests.
    std::uint64_t read = 0;
    for (const RankPlan& p : data.read_plans) read += p.reshard.bytes_read;
    for (const RankPlan& p : data.stored_plans) {
      for (const PlacedShard& shard : p.shards) read += shard.stored_bytes;
    }
    selective->restore_read_bytes = s_.context.comm.sum(read);
  }
  if (c.restore.reshard)
    s_.record.result.reshard = reshard_summary(c, s_.context.comm, data.read_plans);
  if (c.restore.reshard && c.restore.replicas == ReplicaRead::cooperative) {
    prepare_piece_read(s_, std::move(plans.exchange), space);
  } else if (c.restore.replicas != ReplicaRead::written) {
    Comm& comm = s_.context.comm;
    const bool cooperative = c.restore.replicas == ReplicaRead::cooperative;
    s_.record.result.replicas = ReplicaSummary{
        .mode = std::string(replica_read_name(c.restore.replicas)),
        .held_bytes = comm.sum(payload_bytes(data.read_plans)),
        .storage_bytes =
            comm.sum(payload_bytes(cooperative ? data.fetched_plans : data.read_plans))};
  }
}

bool RestorePhase::iteration(int iteration, std::vector<IterationTiming>* timings) {
  const CaseContext& context = s_.context;
  const Case& c = context.c;
  Comm& comm = context.comm;
  CaseRecorder& record = s_.record;
  CaseBuffers& data = s_.data;
  const bool own = data.reads_own_plans(context.phase);
  const std::vector<RankPlan>& plans = own ? data.read_plans : data.write_plans;
  ProcessBuffer& buffer = own ? data.read_buffer : data.write_buffer;
  // strategy.compression: the frames are read, then decoded into the logical buffer.
  const bool compressed = c.compression.enabled();  // on every process (collective steps)
  // restore.replicas = "cooperative" (--phase restore): each replicated piece read once, then
  // shared.
  const bool cooperative =
      context.phase == PhaseSelection::restore && c.restore.replicas == ReplicaRead::cooperative;
  // A resharded one reads its pieces of every process's plans, then exchanges them.
  const bool pieces = cooperative && c.restore.reshard;
  const std::vector<RankPlan> staged = pieces ? data.exchange.staging : std::vector<RankPlan>{};
  const std::vector<RankPlan>& read = compressed    ? data.stored_plans
                                      : pieces      ? staged
                                      : cooperative ? data.fetched_plans
                                                    : plans;
  auto start = Clock::now();
  const std::string applied = apply_cache_policy(c.cache, io_of(read));
  record.result.cache_policy_applied = comm.broadcast(applied);
  record.charge("cache drop", start);
  start = Clock::now();
  buffer.zero();
  if (compressed) data.stored_buffer.zero();
  if (c.restore.reshard)
    fill_reshard_padding(plans, buffer_offsets(plans, buffer), buffer.memory(), c.data);
  record.charge("zero buffers", start);
  start = Clock::now();
  ProcessSample sample =
      pieces
          ? timed_piece_read(s_, *s_.backend, buffer)
          : timed_transfer(*s_.backend, read, compressed ? data.stored_buffer : buffer, false, comm,
                           c.restore.reshard ? TransferOrder::by_file : TransferOrder::by_rank);
  if (cooperative && !pieces) share_after_read(s_, buffer, sample);
  if (compressed) {
    const auto [seconds, problem] =
        decode_after_read(s_, buffer, sample.error.empty(), timings != nullptr);
    sample.seconds += seconds;
    if (sample.error.empty()) sample.error = problem;
  }
  if ((c.restore.reshard || copies_after_read(plans)) && sample.error.empty()) {
    // Copies out of scratch (whole_items: narrowing, as in DCP's reader; exact: strided rows)
    // are part of the restore.
    const auto narrow = Clock::now();
    apply_reshard_copies(plans, buffer_offsets(plans, buffer), buffer.memory());
    sample.seconds += seconds_since(narrow);
  }
  const IterationTiming timing = gather_timing(sample, comm);
  record.charge("restore", start);
  record.add_notes(timing.notes);
  if (!finish_read(s_, "restore", sample, timing, plans, buffer,
                   c.verify && s_.backend->capabilities().stores_data, timings)) {
    return false;
  }
  if (context.phase == PhaseSelection::both) {
    start = Clock::now();
    if (context.keeping() && timings != nullptr)
      s_.store.name_latest(data.planned_dir, s_.store.step(iteration));
    record.charge("commit", start);
    s_.store.retire(data.planned_dir, timings != nullptr);
  }
  return true;
}

}  // namespace ckpt::harness
