#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "harness/spec/case.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

inline constexpr const char* kManifestName = "ckptbench-manifest.json";
// 2: checksums and hashes are XXH3_64, named by the manifest's checksum_algorithm.
// 3: checkpoint_hash covers the tensor list as well as the configuration (manifest_checks.hpp).
inline constexpr int kManifestVersion = 3;

// The manifest entries of one process's ranks: tensor -> file, offset, shape, dtype, checksum.
nlohmann::json manifest_tensors(const std::vector<RankPlan>& plans, const std::vector<std::vector<std::uint64_t>>& checksums);

// The whole manifest of a checkpoint (written by process 0 once every process succeeded).
nlohmann::json make_manifest(const Case& c, std::int64_t world_size, const std::vector<std::int64_t>& ranks,
                             nlohmann::json tensors, std::int64_t step);

// Writes `dir`/ckptbench-manifest.json by temp file + fsync + rename + directory fsync: a
// checkpoint without its manifest is incomplete. Throws std::runtime_error naming the path.
void commit_manifest(const std::filesystem::path& dir, const nlohmann::json& manifest);

// Reads and checks a checkpoint's manifest. Throws std::runtime_error when it is missing
// ("incomplete checkpoint"), unreadable, not a ckptbench manifest, or its checksum_algorithm is
// missing (an older ckptbench's) or not xxh3_64.
// The text is untrusted JSON (harness/common/json_input.hpp): nesting, strings, sizes are
// bounded before it is parsed, and every field a read path takes is typed and bounded (byte
// counts and offsets below 2^50, each tensor inside a listed file) — "…: damaged manifest:
// `tensors[3].bytes`: …" otherwise.
nlohmann::json read_manifest(const std::filesystem::path& dir);
// The same for a manifest's text; `path` names it in the messages.
nlohmann::json parse_manifest(std::string_view text, const std::filesystem::path& path);
// The checks after parsing: format, checksum_algorithm and every field read paths take.
void check_manifest(const nlohmann::json& manifest, const std::filesystem::path& path);

// The layout's shard a manifest entry describes (unscaled, as the writer's layout gave it).
workloads::Shard shard_from_json(const nlohmann::json& tensor);

// Rebuilds the plans of `ranks` from a manifest (restore in a new process), with the extents
// the case's settings give.
std::vector<RankPlan> plans_from_manifest(const nlohmann::json& manifest, const Case& c,
                                          const std::vector<std::int64_t>& ranks,
                                          const std::filesystem::path& dir);

// XXH3_64 hex digest of what decides a checkpoint's bytes and placement (model, parallelism, state,
// ranks, strategy, data pattern and seed, O_DIRECT alignment): a restore needs the same.
std::string checkpoint_hash(const Case& c);
// The same of a checkpoint's recorded `config` (its manifest's). Throws nlohmann::json's
// exceptions for a config that is not a configuration's object.
std::string checkpoint_hash(const nlohmann::json& config);
// What of the above differs between a checkpoint's recorded `config` (its manifest's) and case
// `c`: "parallel.tp = 8, this campaign has parallel.tp = 4 (and model.scale: 64 vs 128)"; ""
// when nothing does.
std::string checkpoint_difference(const nlohmann::json& recorded_config, const Case& c);

// Writes a small text file atomically (temp + fsync + rename).
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace ckpt::harness
