#include "harness/run/codec_steps.hpp"

#include <algorithm>
#include <utility>

namespace ckpt::harness {
namespace {

std::uint64_t stored_bytes_of(const std::vector<RankPlan>& plans) {
  std::uint64_t bytes = 0;
  for (const RankPlan& p : plans) {
    for (const PlacedShard& s : p.shards) bytes += s.stored_bytes;
  }
  return bytes;
}

}  // namespace

void record_codec_work(CaseState& s, const CodecWork& mine, bool encode, bool timed) {
  Comm& comm = s.context.comm;
  const double seconds = comm.max(mine.seconds);
  // Comm sums integers: CPU time goes over in nanoseconds.
  const double cpu =
      static_cast<double>(comm.sum(static_cast<std::uint64_t>(mine.cpu_seconds * 1e9))) * 1e-9;
  const std::uint64_t logical = comm.sum(mine.raw_bytes);
  const std::uint64_t stored = comm.sum(mine.stored_bytes);
  CompressionSummary& z = *s.record.result.compression;
  z.threads = std::max(z.threads, static_cast<int>(comm.max(static_cast<double>(mine.threads))));
  if (encode || z.stored_bytes == 0) {  // a load's: the pieces it decoded
    z.logical_bytes = logical;
    z.stored_bytes = stored;
  }
  if (!timed) return;
  (encode ? z.encode_seconds : z.decode_seconds).push_back(seconds);
  (encode ? z.encode_cpu_seconds : z.decode_cpu_seconds).push_back(cpu);
}

void prepare_stored(CaseState& s, ProcessPlans& plans, MemorySpace& space) {
  CaseBuffers& data = s.data;
  data.stored_plans = std::move(plans.stored);
  const Case& c = s.context.c;
  if (!c.compression.enabled()) return;
  data.stored_buffer = ProcessBuffer(data.stored_plans, space);
  start_compression_record(s, c.compression);
  CompressionSummary& z = *s.record.result.compression;
  Comm& comm = s.context.comm;
  std::uint64_t logical = 0;
  for (const RankPlan& p : data.stored_plans) logical += p.payload_bytes;
  z.logical_bytes = comm.sum(logical);
  // A restore's frames are the manifest's; a write's are known after its first compression.
  const bool restoring = s.context.phase == PhaseSelection::restore;
  z.stored_bytes = restoring ? comm.sum(stored_bytes_of(data.stored_plans)) : 0;
}

void start_compression_record(CaseState& s, const CompressionSpec& codec) {
  CompressionSummary z;
  z.codec = std::string(compression_name(codec.codec));
  z.level = codec.level;
  z.unit = std::string(compression_unit_name(codec.unit));
  z.chunk_bytes = codec.chunk_bytes;
  s.record.result.compression = std::move(z);
}

void compress_for_write(CaseState& s, bool timed) {
  CaseBuffers& data = s.data;
  const CodecWork work = compress_plans(data.write_plans, data.write_buffer, s.context.c,
                                        data.stored_plans, data.stored_buffer);
  record_codec_work(s, work, true, timed);
}

std::pair<double, std::string> decode_after_read(CaseState& s, const ProcessBuffer& raw,
                                                 bool read_ok, bool timed) {
  CaseBuffers& data = s.data;
  CodecWork work;
  std::string problem;
  if (read_ok) {
    problem = decode_plans(data.stored_plans, data.stored_buffer, raw,
                           s.context.c.compression.threads, work);
  }
  record_codec_work(s, work, false, timed);
  return {work.seconds, problem};
}

}  // namespace ckpt::harness
