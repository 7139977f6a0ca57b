#include "harness/load/framed_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <utility>

#include "harness/common/align.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/exec/codec_plans.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/memory/host_buffer.hpp"
#include "workloads/parallel_spec.hpp"

namespace ckpt::harness {
namespace {

using Piece = FramedFiles::Piece;

// Each piece's frames go to a cache line of the scratch.
constexpr std::uint64_t kPieceAlignment = 64;

// A piece of file `file` that a load needs, and where its frames and decoded bytes go.
struct Needed {
  std::size_t file = 0;
  const Piece* piece = nullptr;
  std::uint64_t frames_at = 0;   // in the frames' scratch
  std::uint64_t decoded_at = 0;  // in the decoded scratch
};

// The pieces `ranges` touch, each once, in file and decoded order, with their scratch places.
std::vector<Needed> needed_pieces(const FileRanges& ranges, const FramedFiles& framed) {
  std::set<std::pair<std::size_t, const Piece*>> touched;  // a vector's pieces: decoded order
  for (const ByteRange& r : ranges.ranges) {
    const std::string& path = ranges.files.at(r.file);
    const auto it = framed.files.find(path);
    if (it == framed.files.end())
      throw std::runtime_error(fmt::format("{}: no compressed pieces listed for it", path));
    const std::vector<Piece>& pieces = it->second;
    const std::uint64_t end = r.file_offset + r.length;
    const std::uint64_t size =
        pieces.empty() ? 0 : pieces.back().decoded_offset + pieces.back().bytes;
    if (end > size) {
      throw std::runtime_error(fmt::format(
          "{}: the load needs decoded bytes up to {}, its pieces decode to {}", path, end, size));
    }
    auto p =
        std::upper_bound(pieces.begin(), pieces.end(), r.file_offset,
                         [](std::uint64_t at, const Piece& q) { return at < q.decoded_offset; });
    if (p != pieces.begin()) --p;
    for (; p != pieces.end() && p->decoded_offset < end; ++p) touched.insert({r.file, &*p});
  }
  std::vector<Needed> needed;
  std::uint64_t frames = 0, decoded = 0;
  for (const auto& [file, piece] : touched) {
    needed.push_back({file, piece, frames, decoded});
    frames = align_up(frames + piece->stored_bytes, kPieceAlignment);
    decoded = align_up(decoded + piece->bytes, kPieceAlignment);
  }
  return needed;
}

// Copies range `r` out of the decoded pieces of its file (`needed` is in file and decoded order)
// into `destination`.
void copy_range(const ByteRange& r, const std::vector<Needed>& needed, const std::byte* decoded,
                Buffer& destination) {
  const std::uint64_t end = r.file_offset + r.length;
  auto n =
      std::lower_bound(needed.begin(), needed.end(), r, [](const Needed& q, const ByteRange& x) {
        return q.file < x.file ||
               (q.file == x.file && q.piece->decoded_offset + q.piece->bytes <= x.file_offset);
      });
  for (; n != needed.end() && n->file == r.file && n->piece->decoded_offset < end; ++n) {
    const Piece& p = *n->piece;
    const std::uint64_t from = std::max(r.file_offset, p.decoded_offset);
    const std::uint64_t to = std::min(end, p.decoded_offset + p.bytes);
    if (from >= to) continue;
    destination.copy_from_host(
        r.memory_offset + (from - r.file_offset),
        std::span<const std::byte>(decoded + n->decoded_at + (from - p.decoded_offset), to - from));
  }
}

}  // namespace

FramedFiles framed_files(const Manifest& manifest, const std::filesystem::path& dir) {
  FramedFiles framed;
  if (!manifest.writer.compression.enabled()) return framed;
  const Manifest decoded = decoded_manifest(manifest);
  for (std::size_t i = 0; i < manifest.tensors.size(); ++i) {
    const ManifestTensor& t = manifest.tensors[i];
    framed.files[(dir / t.file).string()].push_back(
        {.decoded_offset = decoded.tensors[i].file_offset,
         .bytes = t.bytes,
         .stored_offset = t.file_offset,
         .stored_bytes = t.stored_bytes,
         .tensor = fmt::format("{} ({}, rank {})", t.shard.name,
                               workloads::state_kind_name(t.shard.state), t.rank)});
  }
  for (auto& [path, pieces] : framed.files) {
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.decoded_offset < b.decoded_offset; });
  }
  return framed;
}

LoadTiming load_framed(const FileRanges& ranges, const FramedFiles& framed, Buffer& destination,
                       const LoadSettings& settings, MemorySpace& pool_space,
                       const LoadStorage& storage) {
  const std::vector<Needed> needed = needed_pieces(ranges, framed);
  FileRanges frames{.files = ranges.files, .ranges = {}};
  std::uint64_t decoded_bytes = 0;
  for (const Needed& n : needed) {
    frames.ranges.push_back({n.file, n.piece->stored_offset, n.frames_at, n.piece->stored_bytes});
    decoded_bytes = std::max(decoded_bytes, n.decoded_at + n.piece->bytes);
  }
  // Scratch allocated and touched before the clock, as the loader's own pool is.
  const std::unique_ptr<Buffer> stored =
      pool_space.allocate(std::max<std::uint64_t>(destination_bytes(frames), 4096));
  stored->zero();
  HostBuffer decoded(std::max<std::uint64_t>(decoded_bytes, 4096));
  LoadTiming timing = load_files(frames, *stored, settings, pool_space, storage);
  const auto start = Clock::now();
  std::vector<FramedPiece> pieces;
  const backends::MemoryView view = stored->view();
  for (const Needed& n : needed) {
    pieces.push_back({{view.data + n.frames_at, n.piece->stored_bytes},
                      {decoded.data() + n.decoded_at, n.piece->bytes}});
  }
  const std::vector<std::string> problems = decode_pieces(pieces, settings.threads, timing.decode);
  for (std::size_t k = 0; k < needed.size(); ++k) {
    if (problems[k].empty()) continue;
    const Needed& n = needed[k];
    throw std::runtime_error(fmt::format("{} at byte {}: tensor {}: damaged compressed piece: {}",
                                         ranges.files[n.file], n.piece->stored_offset,
                                         n.piece->tensor, problems[k]));
  }
  for (const ByteRange& r : ranges.ranges) copy_range(r, needed, decoded.data(), destination);
  timing.seconds += seconds_since(start);
  timing.bytes = ranges.bytes();
  return timing;
}

}  // namespace ckpt::harness
