#include "harness/run/target_check.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <fstream>

#include "harness/run/manifest.hpp"

namespace ckpt::harness {
namespace fs = std::filesystem;

fs::path case_directory(const Case& c) { return c.target / c.campaign / fmt::format("case-{:04d}", c.index); }

namespace {

// Whether a case directory holds a checkpoint (a `latest` file, or a directory with a manifest);
// leftovers without a manifest are not checkpoints.
bool holds_checkpoint(const fs::path& dir) {
  std::error_code ec;
  bool found = fs::exists(dir / "latest", ec);
  for (const auto& entry : fs::directory_iterator(dir, ec)) found = found || fs::exists(entry.path() / kManifestName, ec);
  return found;
}

bool writable_directory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

}  // namespace

std::optional<fs::path> uncreatable_directory(const fs::path& dir) {
  std::error_code ec;
  fs::path existing = dir;
  while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  if (writable_directory(existing)) return std::nullopt;
  return existing;
}

std::optional<std::string> target_problem(const Case& c) {
  std::error_code ec;
  if (!fs::exists(c.target, ec)) {
    if (!c.create_target) {
      return fmt::format("campaign.target: directory {} does not exist — create it, or set campaign.create_target = true",
                         c.target.string());
    }
    if (const auto blocking = uncreatable_directory(c.target)) {
      return fmt::format("campaign.target: cannot create {}: {} is not a writable directory", c.target.string(),
                         blocking->string());
    }
    return std::nullopt;
  }
  if (!fs::is_directory(c.target, ec)) return fmt::format("campaign.target: {} is not a directory", c.target.string());
  if (!writable_directory(c.target)) {
    return fmt::format("campaign.target: {} is not writable by this user — choose another directory",
                       c.target.string());
  }
  const fs::path dir = case_directory(c);
  if (fs::exists(dir, ec) && holds_checkpoint(dir) && !c.overwrite) {
    return fmt::format("campaign.target: {} holds an older checkpoint of this case — set campaign.overwrite = true "
                       "(or --set campaign.overwrite=true) to replace it, or choose another target",
                       dir.string());
  }
  return std::nullopt;
}

std::optional<std::string> prepare_target_for_checkpoint(const Case& c) {
  if (auto problem = target_problem(c)) return problem;
  std::error_code ec;
  if (!fs::exists(c.target, ec)) {
    fs::create_directories(c.target, ec);
    if (ec) return fmt::format("campaign.target: cannot create {}: {}", c.target.string(), ec.message());
  }
  // An older complete checkpoint stays until this run's first checkpoint is complete (the
  // runner retires it then); leftovers without a manifest go now.
  const fs::path dir = case_directory(c);
  if (fs::exists(dir, ec) && !holds_checkpoint(dir)) {
    fs::remove_all(dir, ec);
    if (ec) return fmt::format("campaign.target: cannot clear {}: {}", dir.string(), ec.message());
  }
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("campaign.target: cannot create {}: {}", dir.string(), ec.message());
  return std::nullopt;
}

std::optional<std::string> find_latest_checkpoint(const Case& c, fs::path& dir) {
  const fs::path latest = case_directory(c) / "latest";
  std::ifstream in(latest);
  std::string name;
  if (!in || !(in >> name)) {
    return fmt::format("no complete checkpoint to restore: {} is missing — run with --phase checkpoint first "
                       "(with the same campaign and target)",
                       latest.string());
  }
  dir = case_directory(c) / name;
  return std::nullopt;
}

std::optional<std::string> find_restorable_checkpoint(const Case& c, fs::path& dir, nlohmann::json& manifest) {
  if (auto problem = find_latest_checkpoint(c, dir)) return problem;
  try {
    manifest = read_manifest(dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  if (manifest.value("checkpoint_hash", "") == checkpoint_hash(c)) return std::nullopt;
  const std::string difference =
      manifest.contains("config") ? checkpoint_difference(manifest["config"], c) : std::string();
  if (!difference.empty()) {
    return fmt::format("checkpoint at {} was written with {}; restore with the keys it was written with (its "
                       "manifest's `config` lists them)",
                       dir.string(), difference);
  }
  return fmt::format("{}: the checkpoint was written with a different model, parallelism, state, rank selection, "
                     "strategy or data (hash {}, this case {}); restore with the keys it was written with (its "
                     "manifest's `config` lists them)",
                     dir.string(), manifest.value("checkpoint_hash", "none"), checkpoint_hash(c));
}

void record_latest_checkpoint(const Case& c, const fs::path& dir, std::int64_t step) {
  // `latest` holds the directory name, as DeepSpeed's does; Megatron keeps the number apart.
  write_file_atomically(case_directory(c) / "latest", dir.filename().string() + "\n");
  if (c.directory_layout == DirectoryLayout::megatron) {
    write_file_atomically(case_directory(c) / "latest_checkpointed_iteration.txt", std::to_string(step) + "\n");
  }
}

}  // namespace ckpt::harness
