#include "harness/engine/tier_recovery.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "harness/common/config_error.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

bool holds(const NodeHolding& node, std::int64_t iteration, int process) {
  return node.iteration == iteration &&
         std::find(node.parts.begin(), node.parts.end(), process) != node.parts.end();
}

// Where `process`'s part of `iteration` survives, nearest first: its own memory tier, its own
// node's local tier, a surviving clique peer's memory tier (`replicas_in_memory`: they hold the
// clique's parts; no read), a surviving peer's node's local tier; nullopt when none holds it.
struct TierCopy {
  PartSource source;
  int holder;
  bool in_memory;
};
std::optional<TierCopy> tier_copy(const TierLayout& layout, const std::vector<NodeHolding>& nodes,
                                  const std::set<int>& lost,
                                  const std::vector<std::int64_t>& memory, bool replicas_in_memory,
                                  std::int64_t iteration, int process) {
  const auto alive = [&](int q) {
    const int node = layout.node_of(q);
    return !lost.contains(node) && holds(nodes[static_cast<std::size_t>(node)], iteration, process);
  };
  const auto in_memory = [&](int q) {
    const auto i = static_cast<std::size_t>(q);
    return i < memory.size() && memory[i] == iteration && !lost.contains(layout.node_of(q));
  };
  if (in_memory(process)) return TierCopy{PartSource::memory, process, true};
  if (alive(process)) return TierCopy{PartSource::local, process, false};
  const std::vector<int> clique = layout.clique(process);
  for (const int q : clique) {
    if (q != process && replicas_in_memory && in_memory(q))
      return TierCopy{PartSource::peer, q, true};
  }
  for (const int q : clique) {
    if (q != process && alive(q)) return TierCopy{PartSource::peer, q, false};
  }
  return std::nullopt;
}

std::string lost_part_refusal(const TierLayout& layout, const std::set<int>& lost,
                              std::int64_t iteration, int process, int drain_every) {
  std::vector<int> clique_nodes;
  for (const int q : layout.clique(process)) clique_nodes.push_back(layout.node_of(q));
  return fmt::format(
      "process {}'s part of iteration {} is in no surviving tier: its clique's nodes {{{}}} hold "
      "its {} copies and nodes {{{}}} are lost, and the remote tier holds no complete checkpoint "
      "(tiers.drain_every = {}); lose fewer nodes of one clique, raise "
      "tiers.replicas, or drain more often",
      process, iteration, fmt::join(clique_nodes, ", "), layout.replicas(), fmt::join(lost, ", "),
      drain_every);
}

// Process `to` gets the part of process `to` from this process's node's copy, read in chunks
// through the local tier's backend and sent as read.
std::string send_part(Comm& comm, const TierSetup& setup, const fs::path& path, int to) {
  std::error_code ec;
  std::uint64_t size = fs::file_size(path, ec);
  if (ec) size = 0;  // the reader below names the missing file
  comm.send(to, std::as_bytes(std::span(&size, 1)));
  PartFile file(*setup.local, path, size, setup.chunk_bytes, false);
  std::vector<std::byte> chunk(static_cast<std::size_t>(std::min(size, setup.chunk_bytes)));
  while (const std::uint64_t n = file.next_bytes()) {
    const std::span<std::byte> into(chunk.data(), n);
    file.next(into);
    comm.send(to, into);  // the peer waits for every chunk, even after a failed read
  }
  return file.finish().error;
}

// Process `to` gets its part from this process's memory tier, which holds it among its replicas,
// in chunks as send_part sends a file's.
std::string send_from_memory(Comm& comm, const TierSetup& setup, int to) {
  std::span<const std::byte> held;
  bool found = false;
  if (setup.memory != nullptr) {
    if (const auto replica = setup.memory->replica_of(to)) {
      held = *replica;
      found = true;
    }
  }
  const std::uint64_t size = held.size();
  comm.send(to, std::as_bytes(std::span(&size, 1)));
  for (std::uint64_t sent = 0; sent < size;) {
    const std::uint64_t n = std::min(setup.chunk_bytes, size - sent);
    comm.send(to, held.subspan(sent, n));
    sent += n;
  }
  return found ? "" : fmt::format("the memory tier holds no replica of process {}'s part", to);
}

// This process's part from process `from`, straight into `part` (into scratch when the sizes
// differ: every chunk is still received). Returns the bytes received.
std::uint64_t receive_part(Comm& comm, const TierSetup& setup, int from, std::span<std::byte> part,
                           std::string& error) {
  std::uint64_t size = 0;
  comm.receive(from, std::as_writable_bytes(std::span(&size, 1)));
  std::vector<std::byte> scratch;
  if (size != part.size()) {
    if (error.empty())
      error = fmt::format("the copy of process {}'s part at process {} has {} bytes, expected {}",
                          comm.rank(), from, size, part.size());
    scratch.resize(static_cast<std::size_t>(std::min(size, setup.chunk_bytes)));
  }
  for (std::uint64_t got = 0; got < size;) {
    const std::uint64_t n = std::min(setup.chunk_bytes, size - got);
    comm.receive(from, scratch.empty() ? part.subspan(got, n) : std::span(scratch.data(), n));
    got += n;
  }
  return scratch.empty() ? size : 0;
}

// This process's part of `iteration` from its memory tier into `into`; the problem, or "".
std::string copy_from_memory(const TierSetup& setup, std::int64_t iteration,
                             std::span<std::byte> into) {
  const MemoryTier* memory = setup.memory;
  if (memory == nullptr || memory->iteration() != iteration) {
    return fmt::format("the memory tier holds no copy of iteration {}",
                       iteration);  // plan_recovery takes it only where it does
  }
  const std::span<const std::byte> held = memory->part();
  if (held.size() != into.size()) {
    return fmt::format("the memory tier's copy of iteration {} has {} bytes, expected {}",
                       iteration, held.size(), into.size());
  }
  std::copy(held.begin(), held.end(), into.begin());
  return "";
}

bool from_peer_memory(const RecoveryPlan& plan, int process) {
  const auto p = static_cast<std::size_t>(process);
  return p < plan.peer_memory.size() && plan.peer_memory[p];
}

fs::path copy_path(const TierSetup& setup, int holder, std::int64_t iteration, int process) {
  const fs::path node = node_dir(setup.local_dir, setup.layout.node_of(holder));
  return part_path(tier_checkpoint_dir(node, iteration), process);
}

}  // namespace

std::string_view part_source_name(PartSource source) {
  switch (source) {
    case PartSource::memory:
      return "memory";
    case PartSource::local:
      return "local";
    case PartSource::peer:
      return "peer";
    case PartSource::remote:
      return "remote";
  }
  return "?";
}

std::variant<RecoveryPlan, std::string> plan_recovery(
    const TierLayout& layout, const std::vector<NodeHolding>& nodes, const std::set<int>& lost,
    std::int64_t remote_iteration, int drain_every, const std::vector<std::int64_t>& memory,
    bool replicas_in_memory) {
  std::int64_t newest = -1;
  for (int n = 0; n < layout.nodes(); ++n) {
    if (!lost.contains(n)) newest = std::max(newest, nodes[static_cast<std::size_t>(n)].iteration);
  }
  RecoveryPlan plan{.iteration = newest};
  std::optional<int> missing;
  for (int p = 0; p < layout.processes() && newest >= 0; ++p) {
    if (const auto copy = tier_copy(layout, nodes, lost, memory, replicas_in_memory, newest, p)) {
      plan.source.push_back(copy->source);
      plan.from.push_back(copy->holder);
      plan.peer_memory.push_back(copy->source == PartSource::peer && copy->in_memory);
    } else if (remote_iteration == newest) {
      plan.source.push_back(PartSource::remote);
      plan.from.push_back(p);
      plan.peer_memory.push_back(false);
    } else {
      missing = missing.value_or(p);
      break;
    }
  }
  if (newest >= 0 && !missing) return plan;
  if (remote_iteration >= 0) {
    const auto all = static_cast<std::size_t>(layout.processes());
    std::vector<int> self(all);
    for (std::size_t p = 0; p < all; ++p) self[p] = static_cast<int>(p);
    return RecoveryPlan{.iteration = remote_iteration,
                        .source = std::vector<PartSource>(all, PartSource::remote),
                        .from = self,
                        .peer_memory = std::vector<bool>(all, false)};
  }
  if (!missing) {
    return fmt::format(
        "no surviving node's local tier holds a complete checkpoint and the remote tier holds "
        "none (tiers.drain_every = {}); nothing to recover",
        drain_every);
  }
  return lost_part_refusal(layout, lost, newest, *missing, drain_every);
}

std::vector<NodeHolding> survey_nodes(Comm& comm, const TierSetup& setup,
                                      const std::set<int>& lost) {
  const TierLayout& layout = setup.layout;
  const int me = comm.rank();
  nlohmann::json mine = nullptr;  // only a node's first process reports it
  if (me % layout.per_node() == 0) {
    const int node = layout.node_of(me);
    const fs::path root = node_dir(setup.local_dir, node);
    std::error_code ec;
    if (lost.contains(node)) {
      fs::remove_all(root, ec);  // the node is gone, and its local tier with it
    } else {
      std::int64_t newest = -1;
      for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
        std::optional<TierManifest> mark;
        try {
          mark = read_tier_manifest(entry.path());
        } catch (const ConfigError& e) {
          mine = {{"node", node}, {"damaged", e.what()}};
          break;
        }
        if (mark && mark->iteration > newest) {  // without a mark the copy is not complete
          newest = mark->iteration;
          mine = {{"node", node}, {"iteration", newest}, {"parts", mark->parts}};
        }
      }
    }
  }
  const std::vector<std::string> reports = comm.gather(mine.dump());
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& r : reports) all.push_back(nlohmann::json::parse(r));
  all = nlohmann::json::parse(comm.broadcast(all.dump()));
  std::vector<NodeHolding> nodes(static_cast<std::size_t>(layout.nodes()));
  for (const nlohmann::json& r : all) {
    if (r.is_null()) continue;
    NodeHolding& n = nodes.at(r.at("node").get<std::size_t>());
    if (r.contains("damaged")) {
      n.damaged = r.at("damaged").get<std::string>();
      continue;
    }
    n.iteration = r.at("iteration").get<std::int64_t>();
    n.parts = r.at("parts").get<std::vector<int>>();
  }
  return nodes;
}

std::vector<std::int64_t> survey_memory(Comm& comm, const TierSetup& setup,
                                        const std::set<int>& lost) {
  const bool held = setup.memory != nullptr && !lost.contains(setup.layout.node_of(comm.rank()));
  const std::int64_t mine = held ? setup.memory->iteration() : -1;
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& r : comm.gather(std::to_string(mine))) all.push_back(std::stoll(r));
  return nlohmann::json::parse(comm.broadcast(all.dump())).get<std::vector<std::int64_t>>();
}

RecoveryBytes fetch_parts(Comm& comm, const TierSetup& setup, const RecoveryPlan& plan,
                          std::span<std::byte> part) {
  const int me = comm.rank();
  RecoveryBytes bytes;
  const PartSource mine = plan.source[static_cast<std::size_t>(me)];
  if (mine == PartSource::memory) {
    bytes.error = copy_from_memory(setup, plan.iteration, part);
    if (bytes.error.empty()) bytes.memory = part.size();
  } else if (mine == PartSource::local) {
    const Execution read = read_part(*setup.local, copy_path(setup, me, plan.iteration, me), part);
    bytes.error = read.error;
    if (bytes.error.empty()) bytes.local = read.bytes;
  }
  if (mine == PartSource::memory || mine == PartSource::local)
    bytes.in_place = std::chrono::steady_clock::now();
  for (int p = 0; p < comm.size(); ++p) {
    const auto i = static_cast<std::size_t>(p);
    if (plan.source[i] != PartSource::peer) continue;
    const int holder = plan.from[i];
    if (me == holder) {
      std::string problem =
          from_peer_memory(plan, p)
              ? send_from_memory(comm, setup, p)
              : send_part(comm, setup, copy_path(setup, me, plan.iteration, p), p);
      if (bytes.error.empty()) bytes.error = std::move(problem);
    } else if (me == p) {
      bytes.peer += receive_part(comm, setup, holder, part, bytes.error);
      bytes.in_place = std::chrono::steady_clock::now();
    }
  }
  return bytes;
}

}  // namespace ckpt::harness
