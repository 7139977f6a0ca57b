#include "harness/run/case_setup.hpp"

#include <fmt/format.h>

#include <set>
#include <string>

#include "backends/registry.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {
namespace {

std::unique_ptr<backends::Backend> make_backend_everywhere(CaseState& s) {
  const Case& c = s.context.c;
  Comm& comm = s.context.comm;
  std::string problem;
  std::unique_ptr<backends::Backend> backend;
  try {
    const backends::ProcessGroup group{comm.rank(), comm.size(), comm.mpi_handle()};
    backend = backends::make_backend(c.backend, c.io, c.backend_options, group);
    if (c.format == CheckpointFormat::safetensors && !backend->capabilities().raw_layout) {
      throw std::invalid_argument(
          "it writes its own file format, not the extents of strategy.format = \"safetensors\": "
          "choose a backend that writes extents as planned (posix, uring, mpiio)");
    }
  } catch (const std::exception& e) {
    problem = fmt::format("backend.name = \"{}\": {}", c.backend, e.what());
  }
  agree(comm, problem);
  return backend;
}

// Device memory for a backend that cannot address it goes through pinned staging buffers,
// allocated here, before any clock. Collective backends take the whole process buffer at once.
void prepare_staging(CaseState& s) {
  const Case& c = s.context.c;
  CaseBuffers& data = s.data;
  const bool device = data.write_buffer.view().kind == backends::MemoryKind::device ||
                      data.read_buffer.view().kind == backends::MemoryKind::device;
  if (!device || s.backend->capabilities().device_memory) return;
  const bool whole = s.backend->capabilities().collective;
  std::string problem;
  try {
    for (ProcessBuffer* b : {&data.write_buffer, &data.read_buffer}) {
      if (b->view().kind == backends::MemoryKind::device) b->prepare_staging(c.staging, whole);
    }
  } catch (const std::exception& e) {
    problem = fmt::format("memory.space = \"{}\": staging buffers: {}",
                          memory_space_name(c.memory_space), e.what());
  }
  agree(s.context.comm, problem);
  s.record.result.staging = whole ? "whole" : "pipelined";
  if (whole) {
    s.record.add_notes({fmt::format(
        "backend.name = \"{}\" is collective: each process's whole buffer is staged through pinned "
        "host memory before the write and after the read, without overlap",
        c.backend)});
  }
}

}  // namespace

void check_memory(CaseState& s, std::uint64_t mine, std::uint64_t exchange) {
  const CaseContext& context = s.context;
  const auto need = static_cast<std::uint64_t>(context.comm.max(static_cast<double>(mine)));
  const auto exchanged =
      static_cast<std::uint64_t>(context.comm.max(static_cast<double>(exchange)));
  s.record.result.memory_bytes_per_process = need;
  if (const auto problem = memory_budget_problem(context.c, need, context.selected.size(),
                                                 context.comm.size(), exchanged)) {
    throw SetupError(fmt::format("case {}: {}", context.c.index, *problem));
  }
}

MemorySpace& case_memory_space(CaseState& s) {
  std::string problem;
  MemorySpace* space = nullptr;
  try {
    space = &s.context.run.memory.get(s.context.c.memory_space);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  agree(s.context.comm, problem);
  return *space;
}

void record_sizes(CaseState& s, const std::vector<RankPlan>& plans) {
  Comm& comm = s.context.comm;
  CaseResult& result = s.record.result;
  std::uint64_t payload = 0, padding = 0, extents = 0;
  std::set<std::string> files;
  for (const RankPlan& p : plans) {
    payload += p.payload_bytes;
    padding += p.io.bytes() - std::min(p.io.bytes(), p.payload_bytes);
    extents += p.io.extents();
    for (const auto& f : p.io.files) files.insert(f.path);
  }
  result.bytes_per_checkpoint = comm.sum(payload);
  result.padding_bytes = comm.sum(padding);
  result.extents_per_checkpoint = comm.sum(extents);
  // Shared files are written by several processes: count distinct paths at process 0.
  std::string mine;
  for (const std::string& f : files) mine += f + '\n';
  std::set<std::string> all;
  for (const std::string& list : comm.gather(mine)) {
    std::size_t begin = 0;
    for (std::size_t end; (end = list.find('\n', begin)) != std::string::npos; begin = end + 1) {
      all.insert(list.substr(begin, end - begin));
    }
  }
  result.files_per_checkpoint = std::stoull(comm.broadcast(std::to_string(all.size())));
}

// fio's and IOR's footprint; the manifest's checksums are zero, as the files do not hold the
// checkpoint's data.
void reuse_buffers(CaseState& s, MemorySpace& space, bool write) {
  const Case& c = s.context.c;
  Comm& comm = s.context.comm;
  CaseBuffers& data = s.data;
  std::string problem = reuse_buffer(data.write_plans, c.reuse_bytes);
  if (problem.empty()) problem = reuse_buffer(data.read_plans, c.reuse_bytes);
  agree(comm, problem.empty() ? problem : fmt::format("case {}: {}", c.index, problem));
  if (write)
    data.write_buffer = ProcessBuffer::reused(data.write_plans, space, c.reuse_bytes, c.data);
  if (!data.read_plans.empty()) {
    data.read_buffer = ProcessBuffer::reused(data.read_plans, space, c.reuse_bytes, c.data);
  } else if (!write) {  // a restore process that reads no rank: an empty buffer of its own
    data.read_buffer = ProcessBuffer(data.read_plans, space);
  }
  data.checksums.clear();
  for (const RankPlan& plan : data.write_plans) data.checksums.emplace_back(plan.shards.size(), 0);
  s.record.add_notes(space.notes());
  s.record.add_notes(std::vector<std::string>{
      fmt::format("memory.reuse_bytes: every request moved through one buffer of {} bytes (the "
                  "footprint of fio and "
                  "IOR): the files do not hold the checkpoint's data, nothing verified",
                  c.reuse_bytes)});
  const std::uint64_t held =
      (write ? c.reuse_bytes : 0) + (data.read_plans.empty() ? 0 : c.reuse_bytes);
  s.record.result.memory_bytes_per_process =
      static_cast<std::uint64_t>(comm.max(static_cast<double>(held)));
}

void prepare_backend(CaseState& s) {
  s.backend = make_backend_everywhere(s);
  s.record.result.stores_data = s.backend->capabilities().stores_data;
  prepare_staging(s);
}

}  // namespace ckpt::harness
