#pragma once

#include <string>

#include "harness/spec/case.hpp"

namespace ckpt::harness {

// XXH3_64 hex digest of the keys that decide which bytes a case writes: the model (by its
// name, not the path it was read from), model.scale and model.sizing, [parallel], [state],
// [ranks], the file layout and format keys of [strategy] and data.pattern and data.seed. The
// target, the backend and its tunables, thread counts, request shaping (chunk_bytes,
// coalesce_bytes), cache policy, iterations and [mlperf] are left out, so that the same
// workload hashes alike on any system and with any tuning (config_hash covers everything).
std::string workload_hash(const Case& c);

}  // namespace ckpt::harness
