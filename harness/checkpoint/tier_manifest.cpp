#include "harness/checkpoint/tier_manifest.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <system_error>

#include "harness/checkpoint/manifest.hpp"
#include "harness/common/json_input.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// No emulated or real job of this tool has more processes; a larger count is a damaged mark.
constexpr std::int64_t kMaxProcesses = std::int64_t{1} << 24;
constexpr JsonLimits kTierManifestLimits{.max_bytes = std::uint64_t{1} << 30,
                                         .max_elements = std::size_t{1} << 24};

int process_count(const JsonField& field) {
  return static_cast<int>(field.integer(1, kMaxProcesses));
}

}  // namespace

void write_tier_manifest(const fs::path& checkpoint_dir, const TierManifest& mark) {
  const nlohmann::json json = {
      {"iteration", mark.iteration}, {"node", mark.node},
      {"processes", mark.processes}, {"processes_per_node", mark.processes_per_node},
      {"replicas", mark.replicas},   {"clique_stride", mark.clique_stride},
      {"parts", mark.parts},         {"remote", mark.remote}};
  write_file_atomically(checkpoint_dir / kTierManifestName, json.dump());
}

std::optional<TierManifest> read_tier_manifest(const fs::path& checkpoint_dir) {
  const fs::path path = checkpoint_dir / kTierManifestName;
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const JsonSource source{
      .file = path.string(),
      .fix = fmt::format("the node's copy in {} is damaged; remove that directory (the copy then "
                         "does not count and recovery takes the part from another tier)",
                         checkpoint_dir.string())};
  const nlohmann::json json = read_untrusted_json_file(path, source, kTierManifestLimits);
  const JsonField root(json, source);
  TierManifest mark{.iteration = root.at("iteration").integer(0),
                    .node = static_cast<int>(root.at("node").integer(0, kMaxProcesses - 1)),
                    .processes = process_count(root.at("processes")),
                    .processes_per_node = process_count(root.at("processes_per_node")),
                    .replicas = process_count(root.at("replicas")),
                    .clique_stride = process_count(root.at("clique_stride")),
                    .remote = root.at("remote").string()};
  for (const JsonField& part : root.at("parts").elements()) {
    mark.parts.push_back(static_cast<int>(part.integer(0, mark.processes - 1)));
  }
  return mark;
}

}  // namespace ckpt::harness
