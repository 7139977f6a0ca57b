#pragma once

// The tiered engine's geometry: which (emulated) node each process is on, which processes form a
// clique (the processes holding copies of each other's parts), and where a node's local tier keeps
// a checkpoint's parts. Pure: no I/O, no MPI; checked before any I/O (tier_layout_problem).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/spec/engine_spec.hpp"

namespace ckpt::harness {

// Nodes are blocks of per_node consecutive processes; the clique of process p is
// {b + (p mod J) + k J : k = 0..F-1} inside its block b of J x F processes.
class TierLayout {
 public:
  // Precondition: tier_layout_problem found nothing for these values (throws
  // std::invalid_argument otherwise).
  TierLayout(int processes, int per_node, int replicas, int stride);

  int processes() const { return processes_; }
  int per_node() const { return per_node_; }
  int nodes() const { return processes_ / per_node_; }
  int replicas() const { return replicas_; }
  int stride() const { return stride_; }
  int node_of(int process) const { return process / per_node_; }
  // The F processes of `process`'s clique, ascending; `process` among them.
  std::vector<int> clique(int process) const;
  // The processes whose parts node `node`'s local tier holds: its own processes' and every clique
  // peer's of them, ascending.
  std::vector<int> held_by(int node) const;
  // Bytes a node's local tier needs for parts of at most `part_bytes`: two checkpoints (the newest
  // complete one stays while the next is written) x F parts x its processes.
  std::uint64_t local_need_bytes(std::uint64_t part_bytes) const;

 private:
  int processes_, per_node_, replicas_, stride_;
};

// tiers.processes_per_node, or the launcher's when 0 (`launch`: launch_processes_per_node()).
std::optional<int> resolved_processes_per_node(const TierSpec& t, std::optional<int> launch);

// What tiers.* cannot do with `processes` processes, each part at most `part_bytes` (0: not
// known yet), in words naming the keys and the fix; nullopt when the layout works.
std::optional<std::string> tier_layout_problem(const TierSpec& t, int processes,
                                               std::optional<int> launch, std::uint64_t part_bytes);

// The layout of a spec tier_layout_problem accepted.
TierLayout tier_layout(const TierSpec& t, int processes, std::optional<int> launch);

// tiers.lost_nodes as a set of node numbers.
std::set<int> node_set(const std::vector<std::int64_t>& nodes);

// Node `node`'s local tier: tiers.local_dir with every "{node}" replaced by the number.
std::filesystem::path node_dir(const std::string& pattern, int node);
// The directory of the checkpoint of `iteration` in a node's local tier.
std::filesystem::path tier_checkpoint_dir(const std::filesystem::path& node,
                                          std::int64_t iteration);
// Process `process`'s part in a checkpoint's directory of a local tier.
std::filesystem::path part_path(const std::filesystem::path& checkpoint, int process);

}  // namespace ckpt::harness
