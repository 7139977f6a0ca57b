#include "harness/run/case_recorder.hpp"

#include <algorithm>

#include "harness/results/environment.hpp"

namespace ckpt::harness {

CaseRecorder::CaseRecorder(const CaseContext& context) {
  Comm& comm = context.comm;
  result.started_at = std::chrono::system_clock::now();
  result.config = context.c;
  result.processes = comm.size();
  result.world_size = context.layout.world_size();
  result.full_scale_bytes = static_cast<std::uint64_t>(context.layout.checkpoint_bytes());
  if (const workloads::StateSpec& state = context.c.state;
      state.weights != workloads::WeightFormat::unquantized) {
    workloads::StateSpec plain = state;
    plain.weights = workloads::WeightFormat::unquantized;
    const workloads::Layout unquantized(context.c.model, context.c.parallel, plain);
    result.quantized_weights = QuantizedWeightsSummary{
        .format = std::string(workloads::weight_format_name(state.weights)),
        .bytes = result.full_scale_bytes,
        .unquantized_bytes = static_cast<std::uint64_t>(unquantized.checkpoint_bytes())};
  }
  result.modeled_ranks = static_cast<std::int64_t>(context.selected.size());
  if (context.c.mlperf)
    result.mlperf = check_mlperf(context.c, *context.c.mlperf,
                                 {.phase = context.phase,
                                  .full_scale_bytes = result.full_scale_bytes,
                                  .client_memory_bytes = host_memory_bytes()});
  result.environment = environment_record(context.c.target, comm.kind(), comm.size());
  result.hosts = comm.gather(host_name());
  add_notes(context.run.notes);  // the open-file limit raised at start
}

bool CaseRecorder::fail(const std::string& error) {
  result.status = "failed";
  result.error = error;
  return false;
}

void CaseRecorder::add_notes(const std::vector<std::string>& notes) {
  for (const std::string& note : notes) {
    if (std::find(result.notes.begin(), result.notes.end(), note) == result.notes.end())
      result.notes.push_back(note);
  }
}

void CaseRecorder::charge(const char* part, Clock::time_point start) {
  result.wall.add(warming_up ? "warm-up" : part, seconds_since(start));
}

}  // namespace ckpt::harness
