#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ckpt::harness {

struct CodecCommandOptions {
  std::vector<std::string> files;     // inputs read from files
  std::vector<std::string> contents;  // inputs generated (trained content kinds, random)
  std::vector<std::string> codecs;    // zstd, grouped-bf16, grouped-fp32 (default: all)
  std::uint64_t bytes = std::uint64_t{64} << 20;       // per generated input
  std::uint64_t chunk_bytes = std::uint64_t{4} << 20;  // one frame per chunk; 0: one frame
  int level = 3;
  int repeat = 3;
  std::uint64_t seed = 1;
  std::string save;  // write the generated inputs here instead of measuring
  bool json = false;
};

// `ckptbench codec`: each codec's ratio and compress / decompress speed on files or generated
// content, every decoded byte checked.
CLI::App* add_codec_command(CLI::App& app, CodecCommandOptions& options);
int run_codec(const CodecCommandOptions& options, std::ostream& out);

}  // namespace ckpt::harness
