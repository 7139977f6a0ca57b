#pragma once

#include <cstdint>

#include "harness/exec/process_plans.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

class DpGather;

// What a process allocates for a case with these plans: their buffers, the sources of Megatron's DP
// gather (DpGather; none without one), the engine's host pool and the tiered engine's memory
// tier. The run's memory check and
// --dry-run's figure are this one sum.
std::uint64_t process_memory_bytes(const Case& c, const ProcessPlans& plans,
                                   const DpGather& gather);

}  // namespace ckpt::harness
