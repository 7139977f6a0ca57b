#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "workloads/parallel_spec.hpp"

namespace ckpt::harness {

struct LayoutOptions {
  std::string model;
  workloads::ParallelSpec parallel;
  std::string state = "full";
  std::string names;  // "" = default for the state
  std::string weight_dtype = "bf16";
  std::string master_dtype = "fp32";  // or "none"
  std::string optimizer_dtype = "fp32";
  std::string sizing = "exact";         // or "dlio"
  std::string weights = "unquantized";  // or "fp8_block", "mxfp4" (model.weights)
  std::string zero_sharding = "flat";   // or "per_tensor" (parallel.zero_sharding)
  std::optional<std::int64_t> rank;
  bool json = false;
  bool files = false;                           // list the files of a checkpoint directory
  std::string directory_layout = "dcp";         // with files: strategy.layout's values
  std::string megatron_optimizer = "gathered";  // with files: strategy.megatron_optimizer's values
  int writer_threads = 2;                       // with files: strategy.writer_threads
  std::string framing = "on";                   // with files: strategy.framing's values
};

// Registers `ckptbench layout` on `app`, filling `options` when parsed.
CLI::App* add_layout_command(CLI::App& app, LayoutOptions& options);

// Prints the layout report; throws ConfigError (bad model, impossible parallelism).
void run_layout(const LayoutOptions& options, std::ostream& out);

}  // namespace ckpt::harness
