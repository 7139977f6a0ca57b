#include "harness/run/process_memory.hpp"

#include "harness/engine/engine_checks.hpp"
#include "harness/exec/dp_gather.hpp"
#include "harness/exec/process_buffer.hpp"

namespace ckpt::harness {

std::uint64_t process_memory_bytes(const Case& c, const ProcessPlans& plans,
                                   const DpGather& gather) {
  const std::uint64_t state = ProcessBuffer::bytes_for(plans.write);
  return plans.buffer_bytes() + gather.source_bytes() + host_pool_allocation(c, state) +
         tier_memory_allocation(c, state);
}

}  // namespace ckpt::harness
