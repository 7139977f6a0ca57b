#pragma once

#include <string>

namespace ckpt::harness {

// [mlperf]: the case declares itself a run of an MLPerf Storage checkpointing workload, which the
// rules checker (check_mlperf) holds to the rules before any I/O and labels in the result. Set when
// mlperf.model is.
struct MlperfSpec {
  std::string model;             // mlperf.model: llama3-8b | llama3-70b | llama3-405b | llama3-1t
  std::string accelerator_type;  // mlperf.accelerator_type: b200 | mi355
  bool subset = false;           // mlperf.subset: one host's share (node-local storage)
  std::string division;          // mlperf.division: closed | open
};

}  // namespace ckpt::harness
