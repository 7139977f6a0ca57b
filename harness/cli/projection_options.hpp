#pragma once

// The options that describe the full-scale job (--nodes, --storage-gib-per-s, --mtbf-hours,
// --mtbf-preset): declared once here, used by `ckptbench project` and `ckptbench report`.
#include <CLI/CLI.hpp>

#include "harness/report/projection.hpp"

namespace ckpt::harness {

// Adds the four options to `cmd`, writing into `options`.
void add_projection_options(CLI::App* cmd, ProjectionOptions& options);

// Whether any of them was given (`report` projects only then).
bool projection_requested(const ProjectionOptions& options);

}  // namespace ckpt::harness
