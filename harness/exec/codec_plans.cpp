#include "harness/exec/codec_plans.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>

#include "harness/codec/codec.hpp"
#include "harness/codec/frame.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/stored_plan.hpp"

namespace ckpt::harness {
namespace {

using Item = std::pair<std::size_t, std::size_t>;  // (plan, shard)

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<Item> items_of(const std::vector<RankPlan>& plans) {
  std::vector<Item> items;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t i = 0; i < plans[p].shards.size(); ++i) items.emplace_back(p, i);
  }
  return items;
}

int threads_for(int wanted, std::size_t items) {
  return static_cast<int>(std::clamp<std::size_t>(items, 1, static_cast<std::size_t>(wanted)));
}

// Runs body(t) for t in [0, threads), 0 on the calling thread; returns their CPU seconds summed.
// Every thread is joined before the first exception (in thread order) goes through.
double on_threads(int threads, const std::function<void(int)>& body) {
  std::vector<double> cpu(static_cast<std::size_t>(threads), 0.0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  const auto run = [&](int t) {
    const double start = thread_cpu_seconds();
    try {
      body(t);
    } catch (...) {
      errors[static_cast<std::size_t>(t)] = std::current_exception();
    }
    cpu[static_cast<std::size_t>(t)] = thread_cpu_seconds() - start;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& thread : pool) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  double sum = 0;
  for (const double seconds : cpu) sum += seconds;
  return sum;
}

// bytegroup groups the bytes of 2- and 4-byte elements; other dtypes go through plain zstd.
codec::CodecSettings settings_for(const PlacedShard& s, const CompressionSpec& z) {
  const auto element = static_cast<int>(workloads::dtype_bytes(s.shard.dtype));
  if (z.codec == Compression::bytegroup && (element == 2 || element == 4))
    return {.codec = codec::Codec::grouped, .level = z.level, .element_bytes = element};
  return {.codec = codec::Codec::zstd, .level = z.level, .element_bytes = 1};
}

// One thread's encoders, one per element size.
class Encoders {
 public:
  explicit Encoders(const CompressionSpec& z) : z_(z) {}

  codec::Encoder& of(const PlacedShard& s) {
    const codec::CodecSettings settings = settings_for(s, z_);
    auto it = by_element_.find(settings.element_bytes);
    if (it == by_element_.end()) it = by_element_.emplace(settings.element_bytes, settings).first;
    return it->second;
  }

  // The most bytes the frames of shard `s` can take.
  std::uint64_t bound(const PlacedShard& s) {
    codec::Encoder& encoder = of(s);
    const std::uint64_t frame = z_.frame_raw_bytes(s.bytes);
    std::uint64_t total = 0;
    for (std::uint64_t from = 0; from < s.bytes; from += frame)
      total += encoder.frame_bound(std::min(frame, s.bytes - from));
    return total;
  }

  // The shard's frames into `out`; their bytes.
  std::uint64_t encode(const PlacedShard& s, std::span<const std::byte> raw,
                       std::span<std::byte> out) {
    codec::Encoder& encoder = of(s);
    const std::uint64_t frame = z_.frame_raw_bytes(raw.size());
    std::uint64_t at = 0;
    for (std::uint64_t from = 0; from < raw.size(); from += frame)
      at += encoder.encode(raw.subspan(from, std::min(frame, raw.size() - from)), out.subspan(at));
    return at;
  }

 private:
  CompressionSpec z_;
  std::map<int, codec::Encoder> by_element_;
};

// The frames of one piece decoded into `out`: "" or what is wrong with them.
std::string decode_piece(codec::Decoder& decoder, std::span<const std::byte> stored,
                         std::span<std::byte> out) {
  std::uint64_t at = 0;
  std::uint64_t to = 0;
  try {
    while (at < stored.size()) {
      const codec::FrameHeader h = codec::read_frame_header(stored.subspan(at));
      if (h.frame_bytes() > stored.size() - at) {
        return fmt::format("the frame at byte {} of the piece needs {} bytes, {} remain", at,
                           h.frame_bytes(), stored.size() - at);
      }
      if (h.raw_bytes > out.size() - to)
        return fmt::format("its frames hold more than the tensor's {} bytes", out.size());
      decoder.decode(stored.subspan(at, h.frame_bytes()), out.subspan(to, h.raw_bytes));
      at += h.frame_bytes();
      to += h.raw_bytes;
    }
  } catch (const codec::FrameError& e) {
    return fmt::format("the frame at byte {} of the piece: {}", at, e.what());
  }
  if (to != out.size())
    return fmt::format("its frames hold {} bytes, the tensor {}", to, out.size());
  return "";
}

std::byte* base_of(const ProcessBuffer& buffer, std::size_t plan) {
  return buffer.view().data + buffer.offset(plan);
}

}  // namespace

std::vector<RankPlan> bounded_stored_plans(const std::vector<RankPlan>& plans, const Case& c) {
  Encoders encoders(c.compression);
  std::vector<RankPlan> stored;
  for (const RankPlan& plan : plans) {
    std::vector<std::uint64_t> bounds;
    for (const PlacedShard& s : plan.shards) bounds.push_back(encoders.bound(s));
    stored.push_back(stored_plan(plan, bounds));
  }
  return stored;
}

CodecWork compress_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& raw,
                         const Case& c, std::vector<RankPlan>& stored,
                         const ProcessBuffer& stored_buffer) {
  return compress_plans(plans, raw, raw.view().data, c, stored, stored_buffer);
}

CodecWork compress_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& layout,
                         const std::byte* data, const Case& c, std::vector<RankPlan>& stored,
                         const ProcessBuffer& stored_buffer) {
  const auto start = Clock::now();
  stored = bounded_stored_plans(plans, c);  // each shard's slot, at its bound
  const std::vector<Item> items = items_of(plans);
  std::vector<std::vector<std::uint64_t>> sizes;
  for (const RankPlan& plan : plans) sizes.emplace_back(plan.shards.size(), 0);
  CodecWork work;
  work.threads = threads_for(c.compression.threads, items.size());
  work.cpu_seconds = on_threads(work.threads, [&](int t) {
    Encoders encoders(c.compression);
    for (std::size_t k = static_cast<std::size_t>(t); k < items.size();
         k += static_cast<std::size_t>(work.threads)) {
      const auto [p, i] = items[k];
      const PlacedShard& s = plans[p].shards[i];
      const PlacedShard& slot = stored[p].shards[i];
      sizes[p][i] =
          encoders.encode(s, {data + layout.offset(p) + s.memory_offset, s.bytes},
                          {base_of(stored_buffer, p) + slot.stored_offset, slot.stored_bytes});
    }
  });
  for (std::size_t p = 0; p < plans.size(); ++p) {
    std::vector<std::uint64_t> slots;
    for (const PlacedShard& s : stored[p].shards) slots.push_back(s.stored_offset);
    settle_stored(stored[p], sizes[p]);
    // Every piece moves towards the start of its file's region, never past a later slot.
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const PlacedShard& s = stored[p].shards[i];
      std::byte* base = base_of(stored_buffer, p);
      if (s.stored_offset != slots[i])
        std::memmove(base + s.stored_offset, base + slots[i], s.stored_bytes);
      work.raw_bytes += s.bytes;
      work.stored_bytes += s.stored_bytes;
    }
    build_stored_io(stored[p], c);
  }
  work.seconds = seconds_since(start);
  return work;
}

std::vector<std::string> decode_pieces(const std::vector<FramedPiece>& pieces, int threads,
                                       CodecWork& work) {
  const auto start = Clock::now();
  std::vector<std::string> problems(pieces.size());
  work = CodecWork{};
  work.threads = threads_for(threads, pieces.size());
  work.cpu_seconds = on_threads(work.threads, [&](int t) {
    codec::Decoder decoder;
    for (std::size_t k = static_cast<std::size_t>(t); k < pieces.size();
         k += static_cast<std::size_t>(work.threads))
      problems[k] = decode_piece(decoder, pieces[k].frames, pieces[k].out);
  });
  work.seconds = seconds_since(start);
  for (const FramedPiece& piece : pieces) {
    work.raw_bytes += piece.out.size();
    work.stored_bytes += piece.frames.size();
  }
  return problems;
}

std::string decode_plans(const std::vector<RankPlan>& stored, const ProcessBuffer& stored_buffer,
                         const ProcessBuffer& raw, int threads, CodecWork& work) {
  // A delta's changed runs, listed after the pieces and decoded over their bytes, go once every
  // piece is decoded: a shard that starts before an earlier one ends begins that second pass.
  std::vector<Item> passes[2];
  for (std::size_t p = 0; p < stored.size(); ++p) {
    std::uint64_t end = 0;
    bool over = false;
    for (std::size_t i = 0; i < stored[p].shards.size(); ++i) {
      const PlacedShard& s = stored[p].shards[i];
      over = over || s.memory_offset < end;
      end = std::max(end, s.memory_offset + s.bytes);
      passes[over ? 1 : 0].emplace_back(p, i);
    }
  }
  work = CodecWork{};
  for (const std::vector<Item>& items : passes) {
    std::vector<FramedPiece> pieces;
    for (const auto& [p, i] : items) {
      const PlacedShard& s = stored[p].shards[i];
      pieces.push_back({{base_of(stored_buffer, p) + s.stored_offset, s.stored_bytes},
                        {base_of(raw, p) + s.memory_offset, s.bytes}});
    }
    if (pieces.empty()) continue;
    CodecWork pass;
    const std::vector<std::string> problems = decode_pieces(pieces, threads, pass);
    work.seconds += pass.seconds;
    work.cpu_seconds += pass.cpu_seconds;
    work.threads = std::max(work.threads, pass.threads);
    work.raw_bytes += pass.raw_bytes;
    work.stored_bytes += pass.stored_bytes;
    for (std::size_t k = 0; k < items.size(); ++k) {
      const PlacedShard& s = stored[items[k].first].shards[items[k].second];
      if (!problems[k].empty()) {
        return fmt::format("{} at byte {}: tensor {} ({}, rank {}): damaged compressed piece: {}",
                           s.file, s.file_offset, s.shard.name,
                           workloads::state_kind_name(s.shard.state), s.rank, problems[k]);
      }
    }
  }
  return "";
}

namespace {

using FilePlace = std::pair<std::string, std::uint64_t>;  // file (from this checkpoint), offset

// A compressed delta's changed runs, each its own frames: appended to `stored` as pieces of their
// own (decoded over their piece's bytes, after it), their frames after the stored buffer's, read
// from the delta file of this checkpoint (`places`).
void add_framed_runs(RankPlan& stored, const std::vector<const ManifestTensor*>& entries,
                     std::vector<FilePlace>& places) {
  const std::size_t pieces = stored.shards.size();
  for (std::size_t i = 0; i < pieces; ++i) {
    for (const DeltaRun& run : entries[i]->delta) {
      if (run.stored_bytes == 0)
        throw std::runtime_error(fmt::format(
            "tensor {}: its changed run at byte {} has no stored_bytes, which a compressed delta "
            "records",
            entries[i]->shard.name, run.offset));
      PlacedShard piece = stored.shards[i];
      piece.memory_offset += run.offset;
      piece.bytes = run.bytes;
      piece.stored_offset = stored.buffer_bytes;
      piece.stored_bytes = run.stored_bytes;
      stored.buffer_bytes += run.stored_bytes;
      stored.shards.push_back(std::move(piece));
      places.emplace_back(entries[i]->delta_file, run.file_offset);
    }
  }
}

// A selective checkpoint's frames lie where `places` says (per shard), in its own files or an
// earlier checkpoint's: `stored`'s shards read from there (its buffer places kept), one FilePlan
// per file in first-use order, its extents in file order.
void place_selective_frames(RankPlan& stored, const std::vector<FilePlace>& places, const Case& c) {
  if (stored.shards.empty()) return;
  // The checkpoint directory: a file's path without the relative name its shards give it.
  std::filesystem::path dir;
  for (const backends::FilePlan& f : stored.io.files) {
    const std::string& name = stored.shards.front().file;
    if (f.path.size() > name.size() && f.path.ends_with("/" + name))
      dir = f.path.substr(0, f.path.size() - name.size() - 1);
  }
  std::map<std::string, std::vector<backends::Extent>> by_file;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < stored.shards.size(); ++i) {
    PlacedShard& s = stored.shards[i];
    s.file = places[i].first;
    s.file_offset = places[i].second;
    auto [it, added] = by_file.try_emplace(s.file);
    if (added) order.push_back(s.file);
    it->second.push_back({s.file_offset, s.stored_offset, s.stored_bytes});
  }
  stored.io.files.clear();
  for (const std::string& file : order) {
    std::vector<backends::Extent>& extents = by_file[file];
    std::sort(extents.begin(), extents.end(),
              [](const backends::Extent& a, const backends::Extent& b) {
                return a.file_offset < b.file_offset;
              });
    backends::FilePlan& f = stored.io.files.emplace_back();
    f.path = (dir / file).lexically_normal().string();
    f.file_size = extents.back().file_offset + extents.back().length;
    f.extents = build_extents(std::move(extents), c.coalesce_bytes, c.chunk_bytes, 1);
  }
}

}  // namespace

std::vector<RankPlan> manifest_stored_plans(const Manifest& manifest,
                                            const std::vector<RankPlan>& plans, const Case& c) {
  // The key that tells the entries of one rank apart (as the manifest's checks use it).
  using Key = std::tuple<std::int64_t, std::string, workloads::StateKind, std::vector<std::int64_t>,
                         std::int64_t>;
  const auto key_of = [](std::int64_t rank, const workloads::Shard& s) {
    return Key{rank, s.name, s.state, s.offset, s.flat_begin};
  };
  std::map<Key, const ManifestTensor*> recorded;
  for (const ManifestTensor& t : manifest.tensors) recorded[key_of(t.rank, t.shard)] = &t;
  std::vector<RankPlan> stored;
  for (const RankPlan& plan : plans) {
    std::vector<const ManifestTensor*> entries;
    std::vector<std::uint64_t> sizes;
    for (const PlacedShard& s : plan.shards) {
      const auto it = recorded.find(key_of(s.rank, s.shard));
      const std::string who = fmt::format("tensor {} ({}, rank {})", s.shard.name,
                                          workloads::state_kind_name(s.shard.state), s.rank);
      if (it == recorded.end()) throw std::runtime_error(who + " is not listed");
      if (it->second->stored_bytes == 0)
        throw std::runtime_error(who +
                                 " has no stored_bytes, which a compressed checkpoint records");
      entries.push_back(it->second);
      sizes.push_back(it->second->stored_bytes);
    }
    RankPlan& out = stored.emplace_back(stored_plan(plan, sizes));
    if (manifest.writer.selective.enabled()) {
      std::vector<FilePlace> places;
      for (const ManifestTensor* t : entries) places.emplace_back(t->stored_file(), t->file_offset);
      add_framed_runs(out, entries, places);
      place_selective_frames(out, places, c);
      continue;
    }
    for (std::size_t i = 0; i < out.shards.size(); ++i) {
      if (out.shards[i].file_offset != entries[i]->file_offset ||
          out.shards[i].file != entries[i]->file) {
        throw std::runtime_error(
            fmt::format("tensor {}: file_offset {} in {}, but its compressed pieces lie back to "
                        "back: the pieces "
                        "before it in {} end at {}",
                        entries[i]->shard.name, entries[i]->file_offset, entries[i]->file,
                        out.shards[i].file, out.shards[i].file_offset));
      }
    }
    build_stored_io(out, c);
  }
  return stored;
}

}  // namespace ckpt::harness
