#include "harness/checkpoint/selective_sources.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// The key that tells a piece from the others (as the manifest's checks use it).
using PieceKey = std::tuple<std::int64_t, std::string, workloads::StateKind,
                            std::vector<std::int64_t>, std::int64_t>;

PieceKey piece_key(const ManifestTensor& t) {
  return {t.rank, t.shard.name, t.shard.state, t.shard.offset, t.shard.flat_begin};
}

// Whether `held` (the source's entry) is the copy `wanted` points at; a delta piece's checksum is
// of its bytes after the runs over the base's, so it is not compared.
bool same_copy(const ManifestTensor& held, const ManifestTensor& wanted) {
  return held.file == wanted.file && held.file_offset == wanted.file_offset &&
         held.bytes == wanted.bytes && held.data_key == wanted.data_key &&
         (!wanted.delta_file.empty() || held.checksum == wanted.checksum);
}

// The data files of `source` (its manifest) present and as long as it says.
std::optional<std::string> short_file(const Manifest& source, const fs::path& source_dir) {
  for (const ManifestFile& f : source.files) {
    std::error_code error;
    const std::uintmax_t size = fs::file_size(source_dir / f.path, error);
    if (error) return fmt::format("its file {} is missing", f.path);
    if (size < f.min_size)
      return fmt::format("its file {} has {} bytes, its manifest says at least {}", f.path, size,
                         f.min_size);
  }
  return std::nullopt;
}

// Whether `source` holds each of `wanted` (the entries pointing at it) as recorded.
std::optional<std::string> missing_piece(const Manifest& source,
                                         const std::vector<const ManifestTensor*>& wanted) {
  std::map<PieceKey, const ManifestTensor*> held;
  for (const ManifestTensor& t : source.tensors) {
    if (t.checkpoint.empty()) held[piece_key(t)] = &t;
  }
  for (const ManifestTensor* t : wanted) {
    const auto it = held.find(piece_key(*t));
    if (it == held.end())
      return fmt::format("it does not hold tensor {} ({}, rank {})", t->shard.name,
                         workloads::state_kind_name(t->shard.state), t->rank);
    if (!same_copy(*it->second, *t))
      return fmt::format("it holds tensor {} ({}, rank {}) otherwise (file, offset or checksum)",
                         t->shard.name, workloads::state_kind_name(t->shard.state), t->rank);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> source_checkpoints(const Manifest& manifest) {
  std::set<std::string> names;
  for (const ManifestTensor& t : manifest.tensors) {
    if (!t.checkpoint.empty()) names.insert(t.checkpoint);
  }
  // Directory names carry their step zero-padded (dcp, megatron layouts): name order is step
  // order.
  return {names.begin(), names.end()};
}

std::optional<std::string> selective_source_problem(const Manifest& manifest, const fs::path& dir) {
  std::map<std::string, std::vector<const ManifestTensor*>> by_source;
  for (const ManifestTensor& t : manifest.tensors) {
    if (!t.checkpoint.empty()) by_source[t.checkpoint].push_back(&t);
  }
  for (const auto& entry : by_source) {
    // Named apart: clang 14 cannot capture structured bindings in the lambda below.
    const std::vector<const ManifestTensor*>& wanted = entry.second;
    const fs::path source_dir = dir.parent_path() / entry.first;
    const auto refuse = [&](const std::string& why) {
      return fmt::format(
          "checkpoint {} needs earlier checkpoint {} for {} of its pieces (a {} checkpoint), "
          "but {}; write the checkpoints again (a run's first holds every piece)",
          dir.string(), source_dir.string(), wanted.size(),
          manifest.writer.selective.delta() ? "delta" : "selective", why);
    };
    std::error_code error;
    if (!fs::is_directory(source_dir, error)) return refuse("it is missing");
    Manifest source;
    try {
      source = read_manifest(source_dir);
    } catch (const std::exception& e) {
      return refuse(fmt::format("its manifest does not read: {}", e.what()));
    }
    if (source.checkpoint_hash.empty() || source.config_hash != manifest.config_hash)
      return refuse("it was written by another configuration");
    if (auto why = missing_piece(source, wanted)) return refuse(*why);
    if (auto why = short_file(source, source_dir)) return refuse(*why);
  }
  return std::nullopt;
}

}  // namespace ckpt::harness
