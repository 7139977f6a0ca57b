#include "harness/engine/tier_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ckpt::harness {

TierLayout::TierLayout(int processes, int per_node, int replicas, int stride)
    : processes_(processes), per_node_(per_node), replicas_(replicas), stride_(stride) {
  if (processes < 1 || per_node < 1 || replicas < 1 || stride < 1 || processes % per_node != 0 ||
      processes % (stride * replicas) != 0) {
    throw std::invalid_argument(fmt::format(
        "TierLayout: {} processes, {} per node, F = {}, J = {} is not a layout (check it with "
        "tier_layout_problem first)",
        processes, per_node, replicas, stride));
  }
}

std::vector<int> TierLayout::clique(int process) const {
  const int block = stride_ * replicas_;
  const int first = process / block * block + process % stride_;
  std::vector<int> members;
  for (int k = 0; k < replicas_; ++k) members.push_back(first + k * stride_);
  return members;
}

std::vector<int> TierLayout::held_by(int node) const {
  std::set<int> held;
  for (int p = node * per_node_; p < (node + 1) * per_node_; ++p) {
    for (const int q : clique(p)) held.insert(q);
  }
  return {held.begin(), held.end()};
}

std::uint64_t TierLayout::local_need_bytes(std::uint64_t part_bytes) const {
  return 2 * static_cast<std::uint64_t>(replicas_) * static_cast<std::uint64_t>(per_node_) *
         part_bytes;
}

std::optional<int> resolved_processes_per_node(const TierSpec& t, std::optional<int> launch) {
  if (t.processes_per_node > 0) return t.processes_per_node;
  return launch;
}

namespace {

std::optional<std::string> clique_problem(const TierSpec& t, int processes, int per_node) {
  const int f = t.replicas;
  const int j = t.clique_stride > 0 ? t.clique_stride : per_node;
  if (f > 1 && j < per_node) {
    return fmt::format(
        "a clique inside one node: tiers.clique_stride = {} is less than the {} processes per "
        "node, so processes p and p + {} share a node and its loss takes both copies; set "
        "tiers.clique_stride to at least {} (0: one node)",
        j, per_node, j, per_node);
  }
  const std::int64_t block = static_cast<std::int64_t>(j) * f;
  if (processes % block != 0) {
    return fmt::format(
        "tiers.clique_stride x tiers.replicas = {} x {} = {} does not divide the {} processes "
        "({} nodes of {}), so the cliques {{p, p+J, ..., p+(F-1)J}} do not tile them; choose J "
        "and F whose product divides {} (with J = processes_per_node: F divides the node count)",
        j, f, block, processes, processes / per_node, per_node, processes);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> tier_layout_problem(const TierSpec& t, int processes,
                                               std::optional<int> launch,
                                               std::uint64_t part_bytes) {
  const std::optional<int> per_node = resolved_processes_per_node(t, launch);
  if (!per_node) {
    return std::string(
        "tiers.processes_per_node = 0 takes the processes per node from the MPI launch, and this "
        "launcher sets none of OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, PMI_LOCAL_SIZE; set "
        "tiers.processes_per_node");
  }
  if (processes % *per_node != 0) {
    return fmt::format(
        "tiers.processes_per_node = {} does not divide the {} processes: every node needs as "
        "many processes; choose a divisor of {}",
        *per_node, processes, processes);
  }
  if (auto problem = clique_problem(t, processes, *per_node)) return problem;
  const int nodes = processes / *per_node;
  if (t.processes_per_node > 0 && nodes > 1 && t.local_dir.find("{node}") == std::string::npos) {
    return fmt::format(
        "tiers.local_dir = \"{}\" has no {{node}}: the {} emulated nodes (tiers.processes_per_node "
        "= {}) would share one local tier, and losing one node would lose them all; put {{node}} "
        "in the path, e.g. \"{}/node{{node}}\"",
        t.local_dir, nodes, *per_node, t.local_dir);
  }
  for (const std::int64_t node : t.lost_nodes) {
    if (node >= nodes) {
      return fmt::format(
          "tiers.lost_nodes names node {}, and the {} processes make nodes 0 to {} ({} per "
          "node); name nodes of this run",
          node, processes, nodes - 1, *per_node);
    }
  }
  const TierLayout layout = tier_layout(t, processes, launch);
  if (t.local_bytes > 0 && layout.local_need_bytes(part_bytes) > t.local_bytes) {
    return fmt::format(
        "tiers.local_bytes = {} is too small: a node's local tier holds 2 checkpoints x {} "
        "replicas x {} processes x {} bytes (the largest process's part) = {} bytes; raise "
        "tiers.local_bytes or lower tiers.replicas",
        t.local_bytes, layout.replicas(), layout.per_node(), part_bytes,
        layout.local_need_bytes(part_bytes));
  }
  return std::nullopt;
}

TierLayout tier_layout(const TierSpec& t, int processes, std::optional<int> launch) {
  const int per_node = resolved_processes_per_node(t, launch).value_or(0);
  return {processes, per_node, t.replicas, t.clique_stride > 0 ? t.clique_stride : per_node};
}

std::set<int> node_set(const std::vector<std::int64_t>& nodes) {
  std::set<int> out;
  for (const std::int64_t n : nodes) out.insert(static_cast<int>(n));
  return out;
}

std::filesystem::path node_dir(const std::string& pattern, int node) {
  std::string out = pattern;
  const std::string number = std::to_string(node);
  for (auto at = out.find("{node}"); at != std::string::npos; at = out.find("{node}", at)) {
    out.replace(at, 6, number);
    at += number.size();
  }
  return out;
}

std::filesystem::path tier_checkpoint_dir(const std::filesystem::path& node,
                                          std::int64_t iteration) {
  return node / fmt::format("iter_{:07d}", iteration);
}

std::filesystem::path part_path(const std::filesystem::path& checkpoint, int process) {
  return checkpoint / fmt::format("part_{:05d}.bin", process);
}

}  // namespace ckpt::harness
