#pragma once

// The checkpoints DeepSpeed 0.19.8 saved for tiny Llama-shaped models (tests/data/deepspeed/
// *_files.jsonl, written by the measure_*.py scripts beside them), grouped by save, and the
// files ckptbench's deepspeed layout lists for the same job.

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/cli/layout_files.hpp"
#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness::testing {

// One measured save: the model's config.json, the DP size, the ZeRO stage and DeepSpeed's files
// by the path `ckptbench layout --files` gives them (relative to the checkpoint directory).
struct MeasuredSave {
  nlohmann::json config;
  std::int64_t dp = 1;
  int stage = 3;
  std::map<std::string, nlohmann::json> files;
};

inline std::string listed_path(const std::string& measured) {
  const std::string step = "global_step1/";
  if (measured.starts_with(step)) return measured.substr(step.size());
  return "../" + measured;  // latest and the recovery scripts, beside the checkpoint directory
}

// The saves of tests/data/deepspeed/`fixture` in file order; a row without "stage" is ZeRO-3's.
inline std::vector<MeasuredSave> measured_saves(const std::string& fixture) {
  std::ifstream in(std::string(CKPT_SOURCE_DIR) + "/tests/data/deepspeed/" + fixture);
  std::map<std::string, MeasuredSave> by_case;
  std::vector<std::string> order;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    if (!row.contains("case")) continue;  // the versions
    const std::string key = row.at("case").dump();
    auto [it, inserted] = by_case.try_emplace(key);
    if (inserted) {
      order.push_back(key);
      MeasuredSave& save = it->second;
      save.config = row.at("case");
      save.dp = save.config.at("dp").get<std::int64_t>();
      save.stage = save.config.value("stage", 3);
      save.config.erase("dp");
      save.config.erase("stage");
    }
    it->second.files[listed_path(row.at("path").get<std::string>())] = row;
  }
  std::vector<MeasuredSave> saves;
  for (const std::string& key : order) saves.push_back(std::move(by_case.at(key)));
  return saves;
}

inline workloads::Layout layout_of(const MeasuredSave& save) {
  workloads::ParallelSpec p;
  p.dp = save.dp;
  p.zero_stage = save.stage;
  return workloads::Layout(parse_model_hf_json(save.config.dump(), "config.json"), p,
                           workloads::StateSpec{});
}

inline std::string name_of(const MeasuredSave& save) {
  return "layers " + save.config.at("num_hidden_layers").dump() + ", hidden " +
         save.config.at("hidden_size").dump() + ", ZeRO " + std::to_string(save.stage) + ", DP " +
         std::to_string(save.dp);
}

inline std::map<std::string, ListedFile> listed_files(const MeasuredSave& save) {
  std::map<std::string, ListedFile> files;
  for (ListedFile& f :
       list_checkpoint_files(layout_of(save), {.directory_layout = DirectoryLayout::deepspeed}))
    files[f.path] = std::move(f);
  return files;
}

}  // namespace ckpt::harness::testing
