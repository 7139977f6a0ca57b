#include "harness/loadplan/piece_exchange.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "harness/loadplan/least_loaded.hpp"

namespace ckpt::harness {
namespace {

// One extent of one process's plans: file bytes [begin, end) read to `memory_offset` of plan
// `plan`'s buffer.
struct Need {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  int process = 0;
  std::size_t plan = 0;
  std::uint64_t memory_offset = 0;
};

struct FileNeeds {
  std::vector<Need> needs;
  std::uint64_t data_end = 0;  // the plans' FilePlan::data_end (direct reads past a file's end)
};

// Every process's extents by file, in path order (the one order on every process).
std::map<std::string, FileNeeds> needs_by_file(
    const std::vector<std::vector<RankPlan>>& by_process) {
  std::map<std::string, FileNeeds> out;
  for (std::size_t q = 0; q < by_process.size(); ++q) {
    for (std::size_t i = 0; i < by_process[q].size(); ++i) {
      for (const backends::FilePlan& f : by_process[q][i].io.files) {
        FileNeeds& file = out[f.path];
        file.data_end = std::max(file.data_end, f.data_end);
        for (const backends::Extent& e : f.extents) {
          if (e.length == 0) continue;
          file.needs.push_back({.begin = e.file_offset,
                                .end = e.file_offset + e.length,
                                .process = static_cast<int>(q),
                                .plan = i,
                                .memory_offset = e.memory_offset});
        }
      }
    }
  }
  return out;
}

using Span = std::pair<std::uint64_t, std::uint64_t>;  // [first, second)

struct FilePiece {
  Span span;
  std::vector<int> readers;        // the processes reading it, ascending
  std::vector<std::size_t> needs;  // indices of the needs overlapping it
};

// Appends [span) read by `readers` to `pieces`, cut at multiples of `piece_bytes`, joined to the
// last piece where that continues it with the same readers inside one multiple.
void add_span(std::vector<FilePiece>& pieces, Span span, const std::vector<int>& readers,
              std::uint64_t piece_bytes) {
  for (std::uint64_t at = span.first; at < span.second;) {
    const std::uint64_t end = std::min(span.second, (at / piece_bytes + 1) * piece_bytes);
    if (!pieces.empty() && pieces.back().span.second == at && at % piece_bytes != 0 &&
        pieces.back().readers == readers)
      pieces.back().span.second = end;
    else
      pieces.push_back({.span = {at, end}, .readers = readers});
    at = end;
  }
}

// The bytes of one file some process reads, cut where the set of processes reading them changes
// and at multiples of `piece_bytes`, each with the needs it serves.
std::vector<FilePiece> cut_pieces(const std::vector<Need>& needs, std::uint64_t piece_bytes) {
  std::vector<std::tuple<std::uint64_t, int, int>> edges;  // (offset, process, +1 or -1)
  for (const Need& n : needs) {
    edges.emplace_back(n.begin, n.process, 1);
    edges.emplace_back(n.end, n.process, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::map<int, int> open;  // process -> its needs covering the bytes after the edge
  std::vector<FilePiece> pieces;
  for (std::size_t i = 0; i < edges.size();) {
    const std::uint64_t at = std::get<0>(edges[i]);
    for (; i < edges.size() && std::get<0>(edges[i]) == at; ++i) {
      const int q = std::get<1>(edges[i]);
      if ((open[q] += std::get<2>(edges[i])) == 0) open.erase(q);
    }
    if (open.empty() || i == edges.size()) continue;
    std::vector<int> readers;
    for (const auto& entry : open) readers.push_back(entry.first);
    add_span(pieces, {at, std::get<0>(edges[i])}, readers, piece_bytes);
  }
  for (std::size_t n = 0; n < needs.size(); ++n) {
    auto it =
        std::upper_bound(pieces.begin(), pieces.end(), needs[n].begin,
                         [](std::uint64_t at, const FilePiece& p) { return at < p.span.second; });
    for (; it != pieces.end() && it->span.first < needs[n].end; ++it) it->needs.push_back(n);
  }
  return pieces;
}

std::uint64_t round_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Where `me` stands in the binomial tree that sends a piece from its `reader` to the other
// `readers` (ascending): the tree's nodes are the reader, then the others in order; node i > 0
// gets it from node i - 2^floor(log2 i) and node i passes it to i + 2^k for every 2^k > i, the
// farthest first (the tree's depth in time is ceil(log2 n) steps).
void tree_links(const std::vector<int>& readers, int reader, int me, ExchangedPiece& x) {
  const std::size_t n = readers.size();
  const auto at_reader = static_cast<std::size_t>(
      std::lower_bound(readers.begin(), readers.end(), reader) - readers.begin());
  const auto node_of = [&](int q) {
    if (q == reader) return std::size_t{0};
    const auto j = static_cast<std::size_t>(std::lower_bound(readers.begin(), readers.end(), q) -
                                            readers.begin());
    return j < at_reader ? j + 1 : j;
  };
  const auto process_of = [&](std::size_t i) {
    if (i == 0) return reader;
    return readers[i - 1 < at_reader ? i - 1 : i];
  };
  const std::size_t i = node_of(me);
  std::size_t span = 1;  // the lowest power of two above i: its first child's distance
  while (span <= i) span *= 2;
  if (i > 0) x.from = process_of(i - span / 2);
  std::vector<int> children;
  for (std::size_t step = span; i + step < n; step *= 2) children.push_back(process_of(i + step));
  x.sends_to.assign(children.rbegin(), children.rend());
}

// Adds `piece` to `out`, the exchange of process `me`, which reads (`me` == `reader`) or receives
// it in round `round`; `mine`: the indices of its needs the piece serves.
void add_piece(const FilePiece& piece, const std::vector<Need>& needs,
               const std::vector<std::size_t>& mine, int reader, int me,
               std::uint64_t staging_offset, int round, PieceExchange& out) {
  ExchangedPiece x{.reader = reader,
                   .bytes = piece.span.second - piece.span.first,
                   .staging_offset = staging_offset,
                   .round = round};
  tree_links(piece.readers, reader, me, x);
  for (const std::size_t n : mine) {
    const Need& need = needs[n];
    const std::uint64_t begin = std::max(need.begin, piece.span.first);
    const std::uint64_t end = std::min(need.end, piece.span.second);
    x.deliveries.push_back({.plan = need.plan,
                            .memory_offset = need.memory_offset + (begin - need.begin),
                            .source = begin - piece.span.first,
                            .length = end - begin});
  }
  if (me != reader) out.bounce_bytes = std::max(out.bounce_bytes, x.bytes);
  out.pieces.push_back(std::move(x));
}

// Reads `e` of `path` into `plan`'s buffer, joined to its last extent where it continues it in the
// file and in memory.
void add_own_read(RankPlan& plan, const std::string& path, std::uint64_t data_end,
                  const backends::Extent& e) {
  std::vector<backends::FilePlan>& files = plan.io.files;
  if (files.empty() || files.back().path != path)
    files.push_back({.path = path, .data_end = data_end});
  std::vector<backends::Extent>& extents = files.back().extents;
  if (!extents.empty() && extents.back().file_offset + extents.back().length == e.file_offset &&
      extents.back().memory_offset + extents.back().length == e.memory_offset)
    extents.back().length += e.length;
  else
    extents.push_back(e);
  plan.payload_bytes += e.length;
}

// Whether one rank plan alone reads `piece` (of one process): it is read straight into that
// rank's buffer, and never staged.
bool one_rank_reads(const FilePiece& piece, const std::vector<Need>& needs) {
  if (piece.readers.size() != 1) return false;
  for (const std::size_t n : piece.needs) {
    if (needs[n].plan != needs[piece.needs.front()].plan) return false;
  }
  return true;
}

// A piece one_rank_reads, by this process: read straight into that rank's buffer.
void read_in_place(const FilePiece& piece, const std::vector<Need>& needs, const std::string& path,
                   std::uint64_t data_end, PieceExchange& out) {
  for (const std::size_t n : piece.needs) {
    const Need& need = needs[n];
    const std::uint64_t begin = std::max(need.begin, piece.span.first);
    const std::uint64_t end = std::min(need.end, piece.span.second);
    add_own_read(out.own[need.plan], path, data_end,
                 {.file_offset = begin,
                  .memory_offset = need.memory_offset + (begin - need.begin),
                  .length = end - begin});
  }
}

// Whether `reader` staging `bytes` more would take its share of this round past `round_bytes`
// (0: no bound), counted as every process counts it (each piece aligned): then a new round
// starts, and `use` with it.
bool starts_round(std::map<int, std::uint64_t>& use, int reader, std::uint64_t bytes,
                  std::uint64_t round_bytes, std::uint64_t alignment) {
  bool fresh = false;
  if (const auto it = use.find(reader);
      round_bytes > 0 && it != use.end() && round_up(it->second, alignment) + bytes > round_bytes) {
    use.clear();
    fresh = true;
  }
  std::uint64_t& used = use[reader];
  used = round_up(used, alignment) + bytes;
  return fresh;
}

// Appends the read of file bytes `span` of `path` to `plan` (this round's staging) at `cursor`,
// aligned unless it continues the last read in the file and the buffer; returns its offset.
std::uint64_t stage(RankPlan& plan, const std::string& path, std::uint64_t data_end, Span span,
                    std::uint64_t& cursor, std::uint64_t alignment) {
  std::vector<backends::FilePlan>& files = plan.io.files;
  const std::uint64_t bytes = span.second - span.first;
  plan.payload_bytes += bytes;
  if (!files.empty() && files.back().path == path && !files.back().extents.empty()) {
    backends::Extent& last = files.back().extents.back();
    if (last.file_offset + last.length == span.first &&
        last.memory_offset + last.length == cursor) {
      last.length += bytes;
      cursor += bytes;
      return cursor - bytes;
    }
  }
  if (files.empty() || files.back().path != path)
    files.push_back({.path = path, .data_end = data_end});
  const std::uint64_t at = round_up(cursor, alignment);
  files.back().extents.push_back({.file_offset = span.first, .memory_offset = at, .length = bytes});
  cursor = at + bytes;
  return at;
}

}  // namespace

std::uint64_t PieceExchange::storage_bytes() const {
  std::uint64_t bytes = 0;
  for (const RankPlan& plan : staging) bytes += plan.payload_bytes;
  for (const RankPlan& plan : own) bytes += plan.payload_bytes;
  return bytes;
}

namespace {

struct CutFile {
  std::string path;
  FileNeeds file;
  std::vector<FilePiece> pieces;
};

// What the budget leaves the staging of one round beside a bounce of the largest shared piece (at
// least a byte: then a piece per round); 0: no bound.
std::uint64_t round_bytes_of(std::uint64_t exchange_budget, std::uint64_t largest,
                             std::uint64_t alignment) {
  if (exchange_budget == 0) return 0;
  const std::uint64_t left =
      exchange_budget > largest ? (exchange_budget - largest) / alignment * alignment : 0;
  return std::max<std::uint64_t>(left, 1);
}

// Every file's pieces, and the largest one several read (any process's bounce holds it).
std::vector<CutFile> cut_files(const std::vector<std::vector<RankPlan>>& by_process,
                               std::uint64_t piece_bytes, std::uint64_t& largest) {
  std::vector<CutFile> files;
  largest = 0;
  for (auto& [path, file] : needs_by_file(by_process)) {
    CutFile& cut = files.emplace_back(CutFile{path, std::move(file), {}});
    cut.pieces = cut_pieces(cut.file.needs, piece_bytes);
    for (const FilePiece& piece : cut.pieces) {
      if (!one_rank_reads(piece, cut.file.needs))
        largest = std::max(largest, piece.span.second - piece.span.first);
    }
  }
  return files;
}

// The exchanges being planned: every process's (`only` < 0) or process `only`'s alone (the others
// left empty). A piece's needs are grouped by process once, so that a piece many processes read
// costs its needs, not their square.
class ExchangeBuild {
 public:
  ExchangeBuild(const std::vector<std::vector<RankPlan>>& by_process, int only,
                std::uint64_t alignment)
      : only_(only),
        alignment_(alignment),
        out_(by_process.size()),
        cursor_(by_process.size(), 0),
        widest_(by_process.size(), 0) {
    for (std::size_t q = 0; q < by_process.size(); ++q) {
      if (!built(static_cast<int>(q))) continue;
      for (const RankPlan& plan : by_process[q])
        out_[q].own.push_back({.rank = plan.rank, .buffer_bytes = plan.buffer_bytes});
    }
  }

  bool built(int q) const { return only_ < 0 || q == only_; }

  // A piece one rank of `reader` alone reads.
  void in_place(const CutFile& cut, const FilePiece& piece, int reader) {
    if (built(reader))
      read_in_place(piece, cut.file.needs, cut.path, cut.file.data_end, at(reader));
  }

  // A piece several processes (or ranks) read: staged by `reader` in round `round`, received by
  // the others.
  void shared(const CutFile& cut, const FilePiece& piece, int reader, int round) {
    std::uint64_t offset = 0;
    if (built(reader)) {
      const auto r = static_cast<std::size_t>(reader);
      std::vector<RankPlan>& staging = out_[r].staging;
      if (staging.size() <= static_cast<std::size_t>(round)) {  // its first piece of the round
        staging.resize(static_cast<std::size_t>(round) + 1, RankPlan{.rank = -1});
        cursor_[r] = 0;
      }
      offset =
          stage(staging.back(), cut.path, cut.file.data_end, piece.span, cursor_[r], alignment_);
      widest_[r] = std::max(widest_[r], cursor_[r]);
    }
    mine_.clear();
    for (const std::size_t n : piece.needs) {
      if (built(cut.file.needs[n].process)) mine_[cut.file.needs[n].process].push_back(n);
    }
    for (const int q : piece.readers) {
      if (built(q))
        add_piece(piece, cut.file.needs, mine_[q], reader, q, q == reader ? offset : 0, round,
                  at(q));
    }
  }

  // The exchanges, each with `rounds` rounds whose buffer is its widest round's.
  std::vector<PieceExchange> finish(int rounds) {
    for (std::size_t q = 0; q < out_.size(); ++q) {
      if (!built(static_cast<int>(q))) continue;
      out_[q].staging.resize(static_cast<std::size_t>(rounds), RankPlan{.rank = -1});
      // At least one block: every process passes its (maybe empty) read to the backend.
      const std::uint64_t buffer = std::max(round_up(widest_[q], alignment_), alignment_);
      for (RankPlan& staged : out_[q].staging) staged.buffer_bytes = buffer;
    }
    return std::move(out_);
  }

 private:
  PieceExchange& at(int q) { return out_[static_cast<std::size_t>(q)]; }

  int only_;
  std::uint64_t alignment_;
  std::vector<PieceExchange> out_;
  std::vector<std::uint64_t> cursor_, widest_;    // each process's staging in its last round
  std::map<int, std::vector<std::size_t>> mine_;  // the current piece's needs by process
};

// The exchanges ExchangeBuild keeps, in one pass over every file's pieces.
std::vector<PieceExchange> plan_exchanges(const std::vector<std::vector<RankPlan>>& by_process,
                                          int only, std::uint64_t piece_bytes,
                                          std::uint64_t alignment, std::uint64_t exchange_budget) {
  alignment = std::max<std::uint64_t>(alignment, 1);
  std::uint64_t largest = 0;
  const std::vector<CutFile> files = cut_files(by_process, piece_bytes, largest);
  const std::uint64_t round_bytes = round_bytes_of(exchange_budget, largest, alignment);
  ExchangeBuild build(by_process, only, alignment);
  LeastLoaded readers;
  std::map<int, std::uint64_t> round_use;  // each reader's staging in the round, as all count it
  int round = 0;
  for (const CutFile& cut : files) {
    for (const FilePiece& piece : cut.pieces) {
      const std::uint64_t bytes = piece.span.second - piece.span.first;
      const int reader = readers.pick(piece.readers, bytes);
      if (one_rank_reads(piece, cut.file.needs)) {
        build.in_place(cut, piece, reader);
        continue;
      }
      if (starts_round(round_use, reader, bytes, round_bytes, alignment)) ++round;
      build.shared(cut, piece, reader, round);
    }
  }
  return build.finish(round + 1);
}

}  // namespace

PieceExchange plan_piece_exchange(const std::vector<std::vector<RankPlan>>& by_process, int process,
                                  std::uint64_t piece_bytes, std::uint64_t alignment,
                                  std::uint64_t exchange_budget) {
  return std::move(plan_exchanges(by_process, process, piece_bytes, alignment,
                                  exchange_budget)[static_cast<std::size_t>(process)]);
}

std::vector<PieceExchange> plan_piece_exchanges(
    const std::vector<std::vector<RankPlan>>& by_process, std::uint64_t piece_bytes,
    std::uint64_t alignment, std::uint64_t exchange_budget) {
  return plan_exchanges(by_process, -1, piece_bytes, alignment, exchange_budget);
}

}  // namespace ckpt::harness
