#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/load/weight_loader.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

struct LoadCommandOptions {
  std::string checkpoint;  // a checkpoint directory (holding ckptbench-manifest.json)
  LoadSettings settings;   // the defaults of the options, shared with the campaign's load.* keys
  std::string method = std::string(load_method_name(settings.method));
  std::string memory = "host";  // host, pinned or cuda: where the weights go
  std::string backend =
      LoadStorage{}.backend;      // --backend: the storage backend the loader reads through
  std::vector<std::string> sets;  // --set backend.<name>.KEY=VALUE: the backend's options
  int repeat = 1;
  bool drop_caches = true;
  bool verify = true;
  std::int64_t tp = 0;     // --tp: the inference TP (0: the files whole)
  std::int64_t rank = -1;  // --rank: one inference rank of --tp (-1: every rank, one after another)
  std::uint64_t gap_bytes =
      kLoadGapBytes;  // --gap-bytes: with --tp, file gaps the reads bridge (as load.gap_bytes)
};

// `ckptbench load CHECKPOINT`: loads a checkpoint's weights (raw or safetensors) into host,
// pinned or device memory as an inference server does, verifies the bytes, prints time and GiB/s
// (and the host -> device copy time for device memory), reading through the storage backend
// --backend names (default posix) with its options (--set). With an object-store backend the
// checkpoint is that store's objects (its manifest, sizes and files read through it; the
// requests printed by kind), CHECKPOINT their path. Without --tp it reads a weights-only
// checkpoint's files whole; with --tp N it loads the TP slices of inference TP N (PP 1, DP 1)
// planned from the manifest by the resharding planner, as --phase load does, from weights-only
// and full-state checkpoints alike, and prints the plan's counts.
CLI::App* add_load_command(CLI::App& app, LoadCommandOptions& options);
// Returns 0 when every load verified, 1 when one did not or the checkpoint is damaged (its
// message on `err`); throws std::runtime_error (exit 2) for a checkpoint it cannot load, naming
// the path and the fix.
int run_load(const LoadCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ckpt::harness
