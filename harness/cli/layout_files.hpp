#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// One file of a checkpoint directory as the layout's ranks write it (no I/O).
struct ListedFile {
  std::string path;          // relative to the checkpoint directory
  std::int64_t rank = 0;     // the modeled rank that writes it
  std::uint64_t bytes = 0;   // tensor bytes (no serialisation overhead)
  std::int64_t tensors = 0;  // shards in it
};

// The files every rank (or only `rank`) writes for one checkpoint in `directory_layout`,
// by rank, then in the order the rank writes them. Throws ConfigError naming `option` when
// the layout refuses the job (deepspeed with ZeRO-2/3 and PP > 1).
// The coordinator's files (.metadata, common.pt, metadata.json) come last, from rank 0; for
// deepspeed then ../latest (the tag file in the directory above the checkpoint).
struct FilesRequest {
  DirectoryLayout directory_layout = DirectoryLayout::dcp;
  MegatronOptimizer megatron_optimizer = MegatronOptimizer::gathered;
  int writer_threads = 2;
  bool framing = true;               // strategy.framing (a dlio sizing has none)
  std::optional<std::int64_t> rank;  // only this rank's files
};
std::vector<ListedFile> list_checkpoint_files(const workloads::Layout& layout,
                                              const FilesRequest& request);

void print_files_text(std::ostream& out, DirectoryLayout directory_layout,
                      const std::vector<ListedFile>& files);
nlohmann::json files_json(DirectoryLayout directory_layout, const std::vector<ListedFile>& files);

}  // namespace ckpt::harness
