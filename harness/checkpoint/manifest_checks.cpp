#include "harness/checkpoint/manifest_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/safetensors_check.hpp"
#include "harness/common/json_input.hpp"
#include "harness/memory/checksum.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// A manifest value as one short line for messages (a hostile value may be long).
// A relative path that stays inside `dir`, also after following symbolic links.
bool inside(const fs::path& dir, const std::string& name) {
  const fs::path relative(name);
  if (name.empty() || relative.has_root_path()) return false;
  if (std::find(relative.begin(), relative.end(), fs::path("..")) != relative.end()) return false;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir, ec);
  if (ec) return true;  // the directory itself is unreadable: the read names that
  const fs::path resolved = fs::weakly_canonical(dir / relative, ec);
  if (ec) return true;
  return std::mismatch(base.begin(), base.end(), resolved.begin(), resolved.end()).first ==
         base.end();
}

// The key that tells a tensors entry from the others of its rank.
using EntryKey = std::tuple<std::int64_t, std::string, workloads::StateKind,
                            std::vector<std::int64_t>, std::int64_t>;

EntryKey key_of(const ManifestTensor& t) {
  return EntryKey{t.rank, t.shard.name, t.shard.state, t.shard.offset, t.shard.flat_begin};
}

std::string entry_text(const EntryKey& key) {
  return fmt::format("tensor {} ({}, rank {})", std::get<1>(key),
                     workloads::state_kind_name(std::get<2>(key)), std::get<0>(key));
}

// The entries the case writes for the ranks of `planned`, by key, and how many each rank has.
std::pair<std::map<EntryKey, ManifestTensor>, std::map<std::int64_t, std::size_t>> planned_entries(
    const std::vector<RankPlan>& planned) {
  std::vector<std::vector<std::uint64_t>> no_checksums;
  for (const RankPlan& p : planned) no_checksums.emplace_back(p.shards.size(), 0);
  std::map<EntryKey, ManifestTensor> expected;
  std::map<std::int64_t, std::size_t> per_rank;
  for (ManifestTensor& e : manifest_tensors(planned, no_checksums)) {
    const EntryKey key = key_of(e);
    ++per_rank[e.rank];
    expected.emplace(key, std::move(e));
  }
  return {std::move(expected), std::move(per_rank)};
}

// Fields the plan of the case does not decide: the checksum, a compressed piece's size and file
// offset (known only after compression), and a selective or delta checkpoint's file offsets (its
// pieces packed), the earlier checkpoint a piece lies in (and under [training] the iteration of
// that copy) and the changed runs a delta stores; the checkpoint_hash covers them.
bool unplanned(const std::string& field, bool compressed, bool packed) {
  return field == "checksum" || ((compressed || packed) && field == "file_offset") ||
         (compressed && field == "stored_bytes") ||
         (packed && (field == "checkpoint" || field == "iteration" || field == "delta"));
}

// The first field in which `recorded` differs from `expected` (unplanned fields aside), or "", by
// the names and values the manifest holds them with.
std::string differing_field(const ManifestTensor& recorded_entry,
                            const ManifestTensor& expected_entry, bool packed) {
  const nlohmann::json recorded = manifest_tensors_json({recorded_entry}).at(0);
  const nlohmann::json expected = manifest_tensors_json({expected_entry}).at(0);
  const bool compressed = recorded_entry.stored_bytes > 0;
  for (const auto& [field, value] : expected.items()) {
    if (unplanned(field, compressed, packed)) continue;
    const auto it = recorded.find(field);
    if (it == recorded.end())
      return fmt::format("field {} is missing (the case writes {})", field, json_excerpt(value));
    if (*it != value)
      return fmt::format("field {} is {}, the case writes {}", field, json_excerpt(*it),
                         json_excerpt(value));
  }
  for (const auto& entry : recorded.items()) {
    if (!unplanned(entry.key(), compressed, packed) && !expected.contains(entry.key())) {
      return fmt::format("field {} is not one the case writes", entry.key());
    }
  }
  return "";
}

// The recorded `scale` and `data` that regeneration uses, against the configuration the hash
// covers.
std::optional<std::string> recorded_state_problem(const Manifest& m, const fs::path& path) {
  const auto problem = [&path](const char* field, const std::string& recorded, const char* key,
                               const std::string& configured) {
    return fmt::format(
        "{}: {}: {} does not match its configuration's {} = {} — the manifest was changed after "
        "its checkpoint "
        "was written",
        path.string(), field, recorded, key, configured);
  };
  if (m.layout.scale != m.writer.scale) {
    return problem("scale", std::to_string(m.layout.scale), "model.scale",
                   std::to_string(m.writer.scale));
  }
  if (m.seed != m.writer.seed)
    return problem("data.seed", std::to_string(m.seed), "data.seed", std::to_string(m.writer.seed));
  if (m.pattern != m.writer.pattern) {
    return problem("data.pattern", fmt::format("\"{}\"", data_pattern_name(m.pattern)),
                   "data.pattern", fmt::format("\"{}\"", data_pattern_name(m.writer.pattern)));
  }
  return std::nullopt;
}

}  // namespace

std::string manifest_hash(std::string_view identity_hash,
                          std::optional<std::int64_t> training_iteration,
                          const std::vector<ManifestTensor>& tensors) {
  std::string text(identity_hash);
  text +=
      training_iteration ? fmt::format("\ntraining_iteration {}\n", *training_iteration) : "\n\n";
  text +=
      manifest_tensors_json(tensors).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return checksum_hex(checksum64(text));
}

std::optional<std::string> manifest_path_problem(const Manifest& manifest, const fs::path& dir) {
  const auto problem = [&dir](const std::string& who,
                              const std::string& file) -> std::optional<std::string> {
    if (inside(dir, file)) return std::nullopt;
    return fmt::format("{} names file {}, which is not a file inside {}", who, json_excerpt(file),
                       dir.string());
  };
  for (const ManifestTensor& t : manifest.tensors) {
    if (t.checkpoint.empty()) {
      if (auto p = problem("tensor " + t.shard.name, t.file)) return p;
    } else if (!inside(dir.parent_path() / t.checkpoint, t.file)) {
      return fmt::format("tensor {} names file {} of checkpoint {}, which is not a file inside it",
                         t.shard.name, json_excerpt(t.file), json_excerpt(t.checkpoint));
    }
    if (!t.delta_file.empty()) {
      if (auto p = problem("the delta of tensor " + t.shard.name, t.delta_file)) return p;
    }
  }
  for (const ManifestFile& f : manifest.files) {
    if (auto p = problem("a `files` entry", f.path)) return p;
  }
  return std::nullopt;
}

std::optional<std::string> manifest_hash_problem(const Manifest& manifest, const fs::path& path) {
  if (manifest.tensors.empty()) {
    return fmt::format(
        "{}: tensors: is [] — a checkpoint lists at least one tensor; the manifest was changed "
        "after its "
        "checkpoint was written",
        path.string());
  }
  if (auto problem = recorded_state_problem(manifest, path)) return problem;
  const std::string computed = manifest_hash(checkpoint_hash(manifest.config),
                                             manifest.training_iteration, manifest.tensors);
  if (manifest.checkpoint_hash == computed) return std::nullopt;
  return fmt::format(
      "{}: checkpoint_hash: {} does not match the manifest's configuration, training iteration and "
      "tensor list "
      "(they hash to {}): a tensors entry or the training iteration was removed, added or changed "
      "after the "
      "checkpoint was written",
      path.string(), json_excerpt(manifest.checkpoint_hash), computed);
}

std::optional<std::string> tensor_list_problem(const Manifest& manifest,
                                               const std::vector<RankPlan>& planned,
                                               const fs::path& path,
                                               const std::vector<std::int64_t>* selected) {
  auto [expected, planned_per_rank] = planned_entries(planned);
  std::set<std::int64_t> all;
  if (selected != nullptr) all.insert(selected->begin(), selected->end());
  std::set<EntryKey> seen;
  std::map<std::int64_t, std::size_t> listed_per_rank;
  for (const ManifestTensor& t : manifest.tensors) {
    const EntryKey key = key_of(t);
    if (!planned_per_rank.contains(t.rank)) {
      if (selected != nullptr && !all.contains(t.rank)) {
        return fmt::format("{}: tensors: {} is of a rank the case does not write", path.string(),
                           entry_text(key));
      }
      continue;  // another process checks that rank
    }
    ++listed_per_rank[t.rank];
    const auto it = expected.find(key);
    if (it == expected.end()) {
      return fmt::format("{}: tensors: {} is not one the case writes", path.string(),
                         entry_text(key));
    }
    if (!seen.insert(key).second)
      return fmt::format("{}: tensors: {} is listed twice", path.string(), entry_text(key));
    const bool packed = manifest.writer.selective.enabled();
    if (const std::string field = differing_field(t, it->second, packed); !field.empty()) {
      return fmt::format(
          "{}: tensors: {}: {} — the manifest was changed after its checkpoint was written",
          path.string(), entry_text(key), field);
    }
  }
  for (const auto& [key, entry] : expected) {
    if (seen.contains(key)) continue;
    const std::int64_t rank = std::get<0>(key);
    return fmt::format(
        "{}: tensors: {} is missing (the case writes {} tensors for rank {}, the manifest lists "
        "{}) — the manifest "
        "was changed after its checkpoint was written",
        path.string(), entry_text(key), planned_per_rank[rank], rank, listed_per_rank[rank]);
  }
  return std::nullopt;
}

std::optional<std::string> damaged_checkpoint_problem(const Manifest& manifest, const fs::path& dir,
                                                      const std::vector<RankPlan>& planned,
                                                      const std::vector<std::int64_t>* selected,
                                                      int process, int processes,
                                                      CheckpointStore& store) {
  const fs::path path = dir / kManifestName;
  if (auto problem = tensor_list_problem(manifest, planned, path, selected)) return problem;
  if (process == 0) {
    if (auto problem = manifest_hash_problem(manifest, path)) return problem;
  }
  if (manifest.writer.format != CheckpointFormat::safetensors) return std::nullopt;
  if (store.objects()) {
    if (process != 0) return std::nullopt;
    return safetensors_checkpoint_problem(store, dir, manifest);
  }
  return safetensors_checkpoint_problem(store, dir, manifest, process, processes);
}

}  // namespace ckpt::harness
