#pragma once

// The checks every read path makes of a strategy.format = "safetensors" checkpoint before it
// trusts its data: each file's header as a reader parses it (parse_safetensors_header: length,
// JSON, dtypes, offsets in bounds, back to back, covering the data exactly, nothing after it)
// and against the manifest (exactly the manifest's tensors of that file, each with its name,
// dtype, shape and data_offsets), and model.safetensors.index.json against the manifest.

#include <filesystem>
#include <optional>
#include <string>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {

// The first problem of the safetensors checkpoint in `dir` of `store` described by `manifest`, as
// "<file>: <field>: <problem>", or nullopt. Process `process` of `processes` checks every
// processes-th file of the manifest (from its process-th), process 0 the index too, so that
// together they check each file once. The index is required when the checkpoint has more than
// one file (a loader finds the files through it) and checked when present.
// `store` lists the checkpoint's files once (their sizes) and reads only the headers' bytes.
std::optional<std::string> safetensors_checkpoint_problem(CheckpointStore& store,
                                                          const std::filesystem::path& dir,
                                                          const Manifest& manifest, int process = 0,
                                                          int processes = 1);

}  // namespace ckpt::harness
