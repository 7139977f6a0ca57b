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

// Adds `piece` to `out` as this process (`me`) reads or receives it in round `round`; nothing
// when it does neither.
void add_piece(const FilePiece& piece, const std::vector<Need>& needs, int reader, int me,
               std::uint64_t staging_offset, int round, PieceExchange& out) {
  if (!std::binary_search(piece.readers.begin(), piece.readers.end(), me)) return;
  ExchangedPiece x{.reader = reader,
                   .bytes = piece.span.second - piece.span.first,
                   .staging_offset = staging_offset,
                   .round = round};
  for (const int q : piece.readers) {
    if (q != reader) x.receivers.push_back(q);
  }
  for (const std::size_t n : piece.needs) {
    const Need& need = needs[n];
    if (need.process != me) continue;
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

PieceExchange plan_piece_exchange(const std::vector<std::vector<RankPlan>>& by_process, int process,
                                  std::uint64_t piece_bytes, std::uint64_t alignment,
                                  std::uint64_t exchange_budget) {
  alignment = std::max<std::uint64_t>(alignment, 1);
  struct CutFile {
    std::string path;
    FileNeeds file;
    std::vector<FilePiece> pieces;
  };
  std::vector<CutFile> files;
  std::uint64_t largest = 0;  // the largest shared piece: any process's bounce holds it
  for (auto& [path, file] : needs_by_file(by_process)) {
    CutFile& cut = files.emplace_back(CutFile{path, std::move(file), {}});
    cut.pieces = cut_pieces(cut.file.needs, piece_bytes);
    for (const FilePiece& piece : cut.pieces) {
      if (!one_rank_reads(piece, cut.file.needs))
        largest = std::max(largest, piece.span.second - piece.span.first);
    }
  }
  // What the budget leaves the staging of one round beside the bounce (at least a byte: then a
  // piece per round).
  const std::uint64_t round_bytes =
      exchange_budget == 0
          ? 0
          : std::max<std::uint64_t>(
                exchange_budget > largest ? (exchange_budget - largest) / alignment * alignment : 0,
                1);
  PieceExchange out;
  out.staging.push_back({.rank = -1});
  for (const RankPlan& plan : by_process[static_cast<std::size_t>(process)])
    out.own.push_back({.rank = plan.rank, .buffer_bytes = plan.buffer_bytes});
  LeastLoaded readers;
  std::map<int, std::uint64_t> round_use;  // each reader's staging in the round, as all count it
  std::uint64_t cursor = 0, widest = 0;    // this process's, in the round and in any round
  for (const CutFile& cut : files) {
    for (const FilePiece& piece : cut.pieces) {
      const std::uint64_t bytes = piece.span.second - piece.span.first;
      const int reader = readers.pick(piece.readers, bytes);
      if (one_rank_reads(piece, cut.file.needs)) {
        if (reader == process)
          read_in_place(piece, cut.file.needs, cut.path, cut.file.data_end, out);
        continue;
      }
      if (starts_round(round_use, reader, bytes, round_bytes, alignment)) {
        out.staging.push_back({.rank = -1});
        cursor = 0;
      }
      std::uint64_t at = 0;
      if (reader == process) {
        at = stage(out.staging.back(), cut.path, cut.file.data_end, piece.span, cursor, alignment);
        widest = std::max(widest, cursor);
      }
      add_piece(piece, cut.file.needs, reader, process, at, out.rounds() - 1, out);
    }
  }
  // At least one block: every process passes its (maybe empty) read to the backend.
  const std::uint64_t buffer = std::max(round_up(widest, alignment), alignment);
  for (RankPlan& round : out.staging) round.buffer_bytes = buffer;
  return out;
}

}  // namespace ckpt::harness
