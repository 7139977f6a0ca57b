#include "harness/engine/tier_copies.hpp"

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "harness/common/bounded_slots.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// Received chunks from the slots written in order into `path` through the local tier's backend, on
// a thread of its own; a failure fails the slots (the receiving side then drops what still
// arrives).
class PartWriter {
 public:
  PartWriter(const fs::path& path, std::uint64_t bytes, const TierSetup& setup)
      : path_(path),
        bytes_(bytes),
        chunk_(setup.chunk_bytes),
        backend_(*setup.local),
        slots_(setup.slots),
        memory_(static_cast<std::size_t>(setup.slots) * setup.chunk_bytes) {
    thread_ = std::jthread([this] { run(); });
  }

  // Where the next chunk of `bytes` goes: a slot's memory, or scratch once writing failed.
  std::span<std::byte> acquire(std::uint64_t bytes) {
    slot_ = bytes > 0 ? slots_.acquire(bytes) : std::nullopt;
    if (slot_) return {memory_.data() + static_cast<std::size_t>(*slot_) * chunk_, bytes};
    if (bytes > 0 && scratch_.size() < bytes) scratch_.resize(bytes);
    return {scratch_.data(), bytes};
  }
  void filled(std::uint64_t bytes) {
    if (slot_) slots_.fill(*slot_, bytes);
  }
  // Waits for the writer; the file's problem, or "" with the file complete under its name.
  std::string finish() {
    thread_.join();
    return slots_.error();
  }
  // The bytes written through the backend (after finish()).
  std::uint64_t written() const { return written_; }

 private:
  void run() noexcept {
    try {
      PartFile file(backend_, path_, bytes_, chunk_, true);
      bool ok = true;
      while (ok && file.next_bytes() > 0) {
        const auto filled = slots_.take();
        if (!filled) break;
        ok = file.next(
            {memory_.data() + static_cast<std::size_t>(filled->slot) * chunk_, filled->payload});
        slots_.release(filled->slot);
      }
      const Execution done = file.finish();
      written_ = done.bytes;
      if (!done.error.empty()) slots_.fail(done.error);
    } catch (const std::exception& e) {
      slots_.fail(e.what());
    }
  }

  fs::path path_;
  std::uint64_t bytes_, chunk_;
  backends::Backend& backend_;
  BoundedSlots<std::uint64_t> slots_;  // payload: the chunk's bytes
  std::vector<std::byte> memory_;
  std::vector<std::byte> scratch_;
  std::optional<int> slot_;
  std::uint64_t written_ = 0;
  std::jthread thread_;  // last: it uses the members above
};

// With tiers.memory and F > 1: the memory tier's replica `slot` for `from`'s part of `bytes`, which
// the exchange fills as it arrives; empty without one (or, with the problem in `counts`, when the
// part does not fit).
std::span<std::byte> memory_replica(const TierSetup& setup, int slot, int from, std::uint64_t bytes,
                                    ReplicaCounts& counts) {
  if (setup.memory == nullptr || setup.memory->replicas() == 0) return {};
  try {
    return setup.memory->replica(slot, from, bytes);
  } catch (const std::invalid_argument& e) {
    if (counts.error.empty()) counts.error = e.what();
    return {};
  }
}

// One step of the clique's ring: this process's `part` to `to` while `from`'s arrives into `path`
// (and into the memory tier's replica `slot`, with one). Every process makes the same number of
// exchanges (the largest part's chunks), so each pair's messages match. The bytes received and
// written, and a write problem, go to `counts`.
void exchange_step(Comm& comm, const TierSetup& setup, int to, int from, int slot,
                   std::span<const std::byte> part, const fs::path& path, ReplicaCounts& counts) {
  std::uint64_t out_size = part.size();
  std::uint64_t in_size = 0;
  comm.exchange(to, std::as_bytes(std::span(&out_size, 1)), from,
                std::as_writable_bytes(std::span(&in_size, 1)));
  const std::uint64_t chunk = setup.chunk_bytes;
  const std::uint64_t rounds = (setup.max_part_bytes + chunk - 1) / chunk;
  const std::span<std::byte> kept = memory_replica(setup, slot, from, in_size, counts);
  PartWriter writer(path, in_size, setup);
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    const std::uint64_t out_n = std::min(chunk, out_size - sent);
    const std::uint64_t in_n = std::min(chunk, in_size - received);
    const std::span<std::byte> into = writer.acquire(in_n);
    comm.exchange(to, part.subspan(sent, out_n), from, into);
    if (!kept.empty() && in_n > 0) std::memcpy(kept.data() + received, into.data(), in_n);
    writer.filled(in_n);
    sent += out_n;
    received += in_n;
  }
  if (std::string problem = writer.finish(); !problem.empty() && counts.error.empty())
    counts.error = std::move(problem);
  counts.received_bytes += received;
  counts.written_bytes += writer.written();
}

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

// Collective: how many nodes have a process on this process's host.
std::size_t nodes_on_my_host(Comm& comm, const TierLayout& layout) {
  nlohmann::json hosts = comm.gather(host_name());
  const auto all =
      nlohmann::json::parse(comm.broadcast(hosts.dump())).get<std::vector<std::string>>();
  std::set<int> nodes;
  for (int p = 0; p < static_cast<int>(all.size()); ++p) {
    if (all[static_cast<std::size_t>(p)] == all[static_cast<std::size_t>(comm.rank())])
      nodes.insert(layout.node_of(p));
  }
  return nodes.size();
}

// The file system of `dir` lacks room for `sharing` nodes' local tiers of `need` bytes each.
std::string free_space_problem(const fs::path& dir, std::uint64_t need, std::size_t sharing,
                               const TierLayout& layout, std::uint64_t part_bytes) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0)
    return fmt::format("tiers.local_dir: statvfs {}: {}", dir.string(), std::strerror(errno));
  const std::uint64_t free =
      static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
  if (free >= need * sharing) return "";
  return fmt::format(
      "tiers.local_dir: {} has {} bytes free, and each of the {} node(s) on this host needs {} "
      "bytes (2 checkpoints x {} replicas x {} processes x {} bytes); free space, choose another "
      "tiers.local_dir, set tiers.local_bytes or lower tiers.replicas",
      dir.string(), free, sharing, need, layout.replicas(), layout.per_node(), part_bytes);
}

}  // namespace

TierLayoutRecord tier_layout_record(const TierSetup& setup) {
  const TierLayout& l = setup.layout;
  return {.processes_per_node = l.per_node(),
          .nodes = l.nodes(),
          .replicas = l.replicas(),
          .clique_stride = l.stride(),
          .drain_every = setup.drain_every,
          .local_dir = setup.local_dir,
          .memory = setup.memory != nullptr};
}

ReplicaCounts replicate(Comm& comm, const TierSetup& setup, std::int64_t iteration,
                        std::span<const std::byte> part) {
  const TierLayout& layout = setup.layout;
  const int me = comm.rank();
  const std::vector<int> clique = layout.clique(me);
  const int f = static_cast<int>(clique.size());
  const int k = static_cast<int>(std::find(clique.begin(), clique.end(), me) - clique.begin());
  const fs::path dir =
      tier_checkpoint_dir(node_dir(setup.local_dir, layout.node_of(me)), iteration);
  ReplicaCounts counts;
  for (int s = 1; s < f; ++s) {
    const int to = clique[static_cast<std::size_t>((k + s) % f)];
    const int from = clique[static_cast<std::size_t>((k - s + f) % f)];
    exchange_step(comm, setup, to, from, s - 1, part, part_path(dir, from), counts);
    counts.sent_bytes += part.size();
  }
  return counts;
}

std::string tier_commit(Comm& comm, const TierSetup& setup, std::int64_t iteration,
                        const std::string& remote) {
  const TierLayout& layout = setup.layout;
  std::string problem;
  if (comm.rank() % layout.per_node() == 0) {
    const int node = layout.node_of(comm.rank());
    const fs::path root = node_dir(setup.local_dir, node);
    const fs::path dir = tier_checkpoint_dir(root, iteration);
    try {
      write_tier_manifest(dir, {.iteration = iteration,
                                .node = node,
                                .processes = layout.processes(),
                                .processes_per_node = layout.per_node(),
                                .replicas = layout.replicas(),
                                .clique_stride = layout.stride(),
                                .parts = layout.held_by(node),
                                .remote = remote});
      for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
        if (entry.path() != dir && entry.path().filename().string().starts_with("iter_"))
          fs::remove_all(entry.path());
      }
    } catch (const std::exception& e) {
      problem = fmt::format("local tier of node {} ({}): {}", node, root.string(), e.what());
    }
  }
  return comm.first_problem(problem);
}

std::string tier_capacity_problem(Comm& comm, const TierSetup& setup, std::uint64_t local_bytes) {
  const TierLayout& layout = setup.layout;
  const std::size_t sharing = nodes_on_my_host(comm, layout);
  std::string problem;
  if (comm.rank() % layout.per_node() == 0) {
    const fs::path dir = node_dir(setup.local_dir, layout.node_of(comm.rank()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      problem = fmt::format("tiers.local_dir: cannot make {}: {}; choose a writable directory",
                            dir.string(), ec.message());
    } else if (local_bytes == 0) {  // tiers.local_bytes was checked against the need up front
      problem = free_space_problem(dir, layout.local_need_bytes(setup.max_part_bytes), sharing,
                                   layout, setup.max_part_bytes);
    }
  }
  return comm.first_problem(problem);
}

FlushWrites tier_flush(Comm& comm, const TierSetup& setup, std::int64_t iteration,
                       std::span<std::byte> part, const TierDrain& drain, TierProgress& progress) {
  std::string problem;
  const fs::path dir =
      tier_checkpoint_dir(node_dir(setup.local_dir, setup.layout.node_of(comm.rank())), iteration);
  if (setup.memory != nullptr) setup.memory->store(part);  // sized for the largest part
  progress.memory_at = std::chrono::steady_clock::now();
  const Execution local = write_part(*setup.local, part_path(dir, comm.rank()), part);
  if (!local.error.empty()) problem = fmt::format("local tier: {}", local.error);
  progress.local_at = std::chrono::steady_clock::now();
  progress.replicas = replicate(comm, setup, iteration, part);
  progress.local_bytes = local.bytes + progress.replicas.written_bytes;
  progress.replicated_at = std::chrono::steady_clock::now();
  if (problem.empty() && !progress.replicas.error.empty())
    problem = fmt::format("peer replica: {}", progress.replicas.error);
  FlushWrites out;
  if (drain.backend != nullptr) {
    std::string unprepared = drain.prepare ? drain.prepare() : "";
    if (unprepared.empty())
      out = write_whole(*drain.backend, *drain.target);
    else
      out.error = fmt::format("{}: {}", drain.target->what, unprepared);
  }
  if (!problem.empty() && out.error.empty())
    out.error =
        drain.target != nullptr ? fmt::format("{}: {}", drain.target->what, problem) : problem;
  return out;
}

}  // namespace ckpt::harness
