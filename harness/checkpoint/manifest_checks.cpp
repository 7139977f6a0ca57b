#include "harness/checkpoint/manifest_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "harness/checkpoint/safetensors_check.hpp"
#include "harness/memory/checksum.hpp"
#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// A manifest value as one short line for messages (a hostile value may be long).
std::string shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

std::string entry_name(const nlohmann::json& t) {
  const auto name = t.is_object() ? t.find("name") : t.end();
  return name != t.end() && name->is_string() ? name->get<std::string>() : "(unnamed)";
}

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
using EntryKey = std::tuple<std::int64_t, std::string, std::string, std::string, std::string>;

std::optional<EntryKey> key_of(const nlohmann::json& t) {
  if (!t.is_object()) return std::nullopt;
  const auto rank = t.find("rank");
  const auto name = t.find("name");
  const auto state = t.find("state");
  if (rank == t.end() || !rank->is_number_integer() || name == t.end() || !name->is_string() ||
      state == t.end() || !state->is_string()) {
    return std::nullopt;
  }
  return EntryKey{rank->get<std::int64_t>(), name->get<std::string>(), state->get<std::string>(),
                  t.value("offset", nlohmann::json()).dump(),
                  t.value("flat_begin", nlohmann::json()).dump()};
}

std::string entry_text(const EntryKey& key) {
  return fmt::format("tensor {} ({}, rank {})", std::get<1>(key), std::get<2>(key),
                     std::get<0>(key));
}

// The entries the case writes for the ranks of `planned`, by key, and how many each rank has.
std::pair<std::map<EntryKey, nlohmann::json>, std::map<std::int64_t, std::size_t>> planned_entries(
    const std::vector<RankPlan>& planned) {
  std::vector<std::vector<std::uint64_t>> no_checksums;
  for (const RankPlan& p : planned) no_checksums.emplace_back(p.shards.size(), 0);
  std::map<EntryKey, nlohmann::json> expected;
  std::map<std::int64_t, std::size_t> per_rank;
  for (nlohmann::json& e : manifest_tensors(planned, no_checksums)) {
    const EntryKey key = *key_of(e);
    ++per_rank[std::get<0>(key)];
    expected.emplace(key, std::move(e));
  }
  return {std::move(expected), std::move(per_rank)};
}

// The first field in which `recorded` differs from `expected` (checksums aside), or "".
std::string differing_field(const nlohmann::json& recorded, const nlohmann::json& expected) {
  for (const auto& [field, value] : expected.items()) {
    if (field == "checksum") continue;
    const auto it = recorded.find(field);
    if (it == recorded.end())
      return fmt::format("field {} is missing (the case writes {})", field, shown(value));
    if (*it != value)
      return fmt::format("field {} is {}, the case writes {}", field, shown(*it), shown(value));
  }
  for (const auto& entry : recorded.items()) {
    const std::string& field = entry.key();
    if (field != "checksum" && !expected.contains(field))
      return fmt::format("field {} is not one the case writes", field);
  }
  return "";
}

// The recorded `scale` and `data` that regeneration uses, against the configuration the hash
// covers.
std::optional<std::string> recorded_state_problem(const nlohmann::json& manifest,
                                                  const fs::path& path) {
  using Pointer = nlohmann::json::json_pointer;
  struct Pair {
    const char* field;
    const char* recorded;
    const char* configured;
    const char* key;
  };
  static constexpr Pair kPairs[] = {
      {"scale", "/scale", "/config/model/scale", "model.scale"},
      {"data.seed", "/data/seed", "/config/data/seed", "data.seed"},
      {"data.pattern", "/data/pattern", "/config/data/pattern", "data.pattern"}};
  for (const Pair& p : kPairs) {
    const Pointer recorded(p.recorded), configured(p.configured);
    const bool has_recorded = manifest.contains(recorded),
               has_configured = manifest.contains(configured);
    if (has_recorded && has_configured && manifest[recorded] == manifest[configured]) continue;
    return fmt::format(
        "{}: {}: {} does not match its configuration's {} = {} — the manifest was "
        "changed after its checkpoint was written",
        path.string(), p.field, has_recorded ? shown(manifest[recorded]) : "(missing)", p.key,
        has_configured ? shown(manifest[configured]) : "(missing)");
  }
  return std::nullopt;
}

}  // namespace

std::string manifest_hash(std::string_view identity_hash, const nlohmann::json& tensors) {
  std::string text(identity_hash);
  text += '\n';
  text += tensors.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return checksum_hex(checksum64(text));
}

std::int64_t written_iteration(const nlohmann::json& manifest) {
  const auto it = manifest.find("training_iteration");
  if (it == manifest.end()) return -1;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
    throw std::runtime_error(fmt::format(
        "training_iteration {} is not an iteration number (a non-negative integer)", shown(*it)));
  }
  return it->get<std::int64_t>();
}

std::optional<std::string> manifest_version_problem(const nlohmann::json& manifest,
                                                    const fs::path& path) {
  const auto version = manifest.find("version");
  if (version != manifest.end() && version->is_number_integer() &&
      version->get<std::int64_t>() == kManifestVersion) {
    return std::nullopt;
  }
  const bool older = version != manifest.end() && version->is_number_integer() &&
                     version->get<std::int64_t>() < kManifestVersion;
  if (older) {
    return fmt::format(
        "{}: manifest version {} was written by an older ckptbench, whose checkpoint_hash covers "
        "the configuration but not the tensor list, so this version cannot check that list — "
        "write the checkpoint again",
        path.string(), shown(*version));
  }
  return fmt::format(
      "{}: manifest version {} is not one this ckptbench reads (it reads version {}): written "
      "by a newer ckptbench, or damaged",
      path.string(), version == manifest.end() ? "(missing)" : shown(*version), kManifestVersion);
}

std::optional<std::string> manifest_path_problem(const nlohmann::json& manifest,
                                                 const fs::path& dir) {
  const auto problem = [&dir](const std::string& who,
                              const nlohmann::json& file) -> std::optional<std::string> {
    if (file.is_string() && inside(dir, file.get<std::string>())) return std::nullopt;
    return fmt::format("{} names file {}, which is not a file inside {}", who, shown(file),
                       dir.string());
  };
  const auto tensors = manifest.find("tensors");
  if (tensors == manifest.end() || !tensors->is_array())
    return std::string("tensors: missing or not a list");
  for (const nlohmann::json& t : *tensors) {
    if (!t.is_object() || !t.contains("file")) continue;  // the planner names the missing field
    if (auto p = problem("tensor " + entry_name(t), t["file"])) return p;
  }
  if (const auto files = manifest.find("files"); files != manifest.end() && files->is_array()) {
    for (const nlohmann::json& f : *files) {
      if (!f.is_object() || !f.contains("path")) continue;
      if (auto p = problem("a `files` entry", f["path"])) return p;
    }
  }
  return std::nullopt;
}

std::optional<std::string> manifest_hash_problem(const nlohmann::json& manifest,
                                                 const fs::path& path) {
  const auto tensors = manifest.find("tensors");
  if (tensors == manifest.end() || !tensors->is_array() || tensors->empty()) {
    return fmt::format(
        "{}: tensors: {} — a checkpoint lists at least one tensor; the manifest was changed "
        "after its checkpoint was written",
        path.string(), tensors == manifest.end() ? "missing" : "is " + shown(*tensors));
  }
  if (auto problem = recorded_state_problem(manifest, path)) return problem;
  const auto config = manifest.find("config");
  std::string identity;
  try {
    if (config == manifest.end() || !config->is_object()) throw std::runtime_error("no config");
    identity = checkpoint_hash(*config);
  } catch (const std::exception&) {
    return fmt::format("{}: config: missing or not the object of a configuration", path.string());
  }
  const std::string computed = manifest_hash(identity, *tensors);
  const auto recorded = manifest.find("checkpoint_hash");
  if (recorded != manifest.end() && recorded->is_string() &&
      recorded->get<std::string>() == computed)
    return std::nullopt;
  return fmt::format(
      "{}: checkpoint_hash: {} does not match the manifest's configuration and tensor list "
      "(they hash to {}): a tensors entry was removed, added or changed after the checkpoint "
      "was written",
      path.string(), recorded == manifest.end() ? "(missing)" : shown(*recorded), computed);
}

std::optional<std::string> tensor_list_problem(const nlohmann::json& manifest,
                                               const std::vector<RankPlan>& planned,
                                               const fs::path& path,
                                               const std::vector<std::int64_t>* selected) {
  const auto tensors = manifest.find("tensors");
  if (tensors == manifest.end() || !tensors->is_array()) {
    return fmt::format("{}: tensors: missing or not a list", path.string());
  }
  auto [expected, planned_per_rank] = planned_entries(planned);
  std::set<std::int64_t> all;
  if (selected != nullptr) all.insert(selected->begin(), selected->end());
  std::set<EntryKey> seen;
  std::map<std::int64_t, std::size_t> listed_per_rank;
  for (const nlohmann::json& t : *tensors) {
    const std::optional<EntryKey> key = key_of(t);
    if (!key) {
      return fmt::format("{}: tensors: entry {} lacks a rank, name or state", path.string(),
                         shown(t));
    }
    const std::int64_t rank = std::get<0>(*key);
    if (!planned_per_rank.contains(rank)) {
      if (selected != nullptr && !all.contains(rank)) {
        return fmt::format("{}: tensors: {} is of a rank the case does not write", path.string(),
                           entry_text(*key));
      }
      continue;  // another process checks that rank
    }
    ++listed_per_rank[rank];
    const auto it = expected.find(*key);
    if (it == expected.end()) {
      return fmt::format("{}: tensors: {} is not one the case writes", path.string(),
                         entry_text(*key));
    }
    if (!seen.insert(*key).second)
      return fmt::format("{}: tensors: {} is listed twice", path.string(), entry_text(*key));
    if (const std::string field = differing_field(t, it->second); !field.empty()) {
      return fmt::format(
          "{}: tensors: {}: {} — the manifest was changed after its checkpoint was written",
          path.string(), entry_text(*key), field);
    }
  }
  for (const auto& [key, entry] : expected) {
    if (seen.contains(key)) continue;
    const std::int64_t rank = std::get<0>(key);
    return fmt::format(
        "{}: tensors: {} is missing (the case writes {} tensors for rank {}, the manifest lists "
        "{}) — "
        "the manifest was changed after its checkpoint was written",
        path.string(), entry_text(key), planned_per_rank[rank], rank, listed_per_rank[rank]);
  }
  return std::nullopt;
}

std::optional<std::string> damaged_checkpoint_problem(const nlohmann::json& manifest,
                                                      const fs::path& dir,
                                                      const std::vector<RankPlan>& planned,
                                                      const std::vector<std::int64_t>* selected,
                                                      int process, int processes) {
  const fs::path path = dir / kManifestName;
  if (auto problem = tensor_list_problem(manifest, planned, path, selected)) return problem;
  if (process == 0) {
    if (auto problem = manifest_hash_problem(manifest, path)) return problem;
  }
  if (is_safetensors_checkpoint(manifest))
    return safetensors_checkpoint_problem(dir, manifest, process, processes);
  return std::nullopt;
}

}  // namespace ckpt::harness
