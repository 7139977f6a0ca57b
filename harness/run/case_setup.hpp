#pragma once

// Private to harness/run: the setup steps the phases' preparations share, before any clock. Each
// is collective; a problem throws the same SetupError on every process.
#include <cstdint>
#include <vector>

#include "harness/memory/memory_space.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Records the largest process's need `mine` and refuses a case over its memory budget (`exchange`
// of `mine`: the cooperative read's exchange buffers, named in the refusal).
void check_memory(CaseState& s, std::uint64_t mine, std::uint64_t exchange = 0);
// The case's memory space, made on first use (Kokkos starts with the first kokkos case).
MemorySpace& case_memory_space(CaseState& s);
// The case's bytes, padding, extents and distinct files per checkpoint, over every process.
void record_sizes(CaseState& s, const std::vector<RankPlan>& plans);
// memory.reuse_bytes: every request of both phases through one small buffer (`write`: the
// write's buffer too).
void reuse_buffers(CaseState& s, MemorySpace& space, bool write);
// The case's backend, made on every process, and the device staging it needs.
void prepare_backend(CaseState& s);

}  // namespace ckpt::harness
