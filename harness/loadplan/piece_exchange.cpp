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

// Adds `piece` to `out` as this process (`me`) reads or receives it; nothing when it does neither.
void add_piece(const FilePiece& piece, const std::vector<Need>& needs, int reader, int me,
               std::uint64_t staging_offset, PieceExchange& out) {
  if (!std::binary_search(piece.readers.begin(), piece.readers.end(), me)) return;
  ExchangedPiece x{.reader = reader,
                   .bytes = piece.span.second - piece.span.first,
                   .staging_offset = staging_offset};
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

// A piece only one rank plan of this process reads: read straight into that rank's buffer.
bool read_in_place(const FilePiece& piece, const std::vector<Need>& needs, int me,
                   const std::string& path, std::uint64_t data_end, PieceExchange& out) {
  if (piece.readers != std::vector<int>{me}) return false;
  for (const std::size_t n : piece.needs) {
    if (needs[n].plan != needs[piece.needs.front()].plan) return false;
  }
  for (const std::size_t n : piece.needs) {
    const Need& need = needs[n];
    const std::uint64_t begin = std::max(need.begin, piece.span.first);
    const std::uint64_t end = std::min(need.end, piece.span.second);
    add_own_read(out.own[need.plan], path, data_end,
                 {.file_offset = begin,
                  .memory_offset = need.memory_offset + (begin - need.begin),
                  .length = end - begin});
  }
  return true;
}

}  // namespace

std::uint64_t PieceExchange::storage_bytes() const {
  std::uint64_t bytes = staging.payload_bytes;
  for (const RankPlan& plan : own) bytes += plan.payload_bytes;
  return bytes;
}

PieceExchange plan_piece_exchange(const std::vector<std::vector<RankPlan>>& by_process, int process,
                                  std::uint64_t piece_bytes, std::uint64_t alignment) {
  alignment = std::max<std::uint64_t>(alignment, 1);
  PieceExchange out;
  out.staging.rank = -1;
  for (const RankPlan& plan : by_process[static_cast<std::size_t>(process)])
    out.own.push_back({.rank = plan.rank, .buffer_bytes = plan.buffer_bytes});
  LeastLoaded readers;
  std::uint64_t cursor = 0;
  for (const auto& [path, file] : needs_by_file(by_process)) {
    backends::FilePlan read{.path = path, .data_end = file.data_end};
    for (const FilePiece& piece : cut_pieces(file.needs, piece_bytes)) {
      const std::uint64_t bytes = piece.span.second - piece.span.first;
      const int reader = readers.pick(piece.readers, bytes);
      if (reader == process && read_in_place(piece, file.needs, process, path, file.data_end, out))
        continue;
      // A piece following the last one read in the file and the buffer extends its request.
      const bool continues =
          reader == process && !read.extents.empty() &&
          read.extents.back().file_offset + read.extents.back().length == piece.span.first &&
          read.extents.back().memory_offset + read.extents.back().length == cursor;
      const std::uint64_t at = continues ? cursor : round_up(cursor, alignment);
      if (continues) {
        read.extents.back().length += bytes;
      } else if (reader == process) {
        read.extents.push_back(
            {.file_offset = piece.span.first, .memory_offset = at, .length = bytes});
      }
      if (reader == process) {
        out.staging.payload_bytes += bytes;
        cursor = at + bytes;
      }
      add_piece(piece, file.needs, reader, process, at, out);
    }
    if (!read.extents.empty()) out.staging.io.files.push_back(std::move(read));
  }
  // At least one block: every process passes its (maybe empty) read to the backend.
  out.staging.buffer_bytes = std::max(round_up(cursor, alignment), alignment);
  return out;
}

}  // namespace ckpt::harness
