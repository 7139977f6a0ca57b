#pragma once

// The harness's "did you mean" suggestions: the backends' contract library has the one
// implementation (backends may depend on nothing of the harness).
#include "backends/suggest.hpp"

namespace ckpt::harness {

using backends::closest_match;
using backends::did_you_mean;
using backends::edit_distance;

}  // namespace ckpt::harness
