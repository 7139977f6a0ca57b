#include "harness/run/target_check.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <fstream>

#include "harness/run/manifest.hpp"

namespace ckpt::harness {
namespace fs = std::filesystem;

fs::path case_directory(const Case& c) { return c.target / c.campaign / fmt::format("case-{:04d}", c.index); }

std::optional<std::string> prepare_target_for_checkpoint(const Case& c) {
  std::error_code ec;
  if (!fs::exists(c.target, ec)) {
    if (!c.create_target) {
      return fmt::format("campaign.target: directory {} does not exist — create it, or set campaign.create_target = true",
                         c.target.string());
    }
    fs::create_directories(c.target, ec);
    if (ec) return fmt::format("campaign.target: cannot create {}: {}", c.target.string(), ec.message());
  }
  if (!fs::is_directory(c.target, ec)) return fmt::format("campaign.target: {} is not a directory", c.target.string());
  if (::access(c.target.c_str(), W_OK | X_OK) != 0) {
    return fmt::format("campaign.target: {} is not writable by this user — choose another directory",
                       c.target.string());
  }
  const fs::path dir = case_directory(c);
  if (fs::exists(dir, ec)) {
    bool holds_checkpoint = fs::exists(dir / "latest", ec);
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      holds_checkpoint = holds_checkpoint || fs::exists(entry.path() / kManifestName, ec);
    }
    if (holds_checkpoint && !c.overwrite) {
      return fmt::format("campaign.target: {} holds an older checkpoint of this case — set campaign.overwrite = true "
                         "(or --set campaign.overwrite=true) to replace it, or choose another target",
                         dir.string());
    }
    // An older complete checkpoint stays until this run's first checkpoint is complete (the
    // runner retires it then); leftovers without a manifest are not checkpoints.
    if (!holds_checkpoint) fs::remove_all(dir, ec);
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

void record_latest_checkpoint(const Case& c, const fs::path& dir, std::int64_t step) {
  // `latest` holds the directory name, as DeepSpeed's does; Megatron keeps the number apart.
  write_file_atomically(case_directory(c) / "latest", dir.filename().string() + "\n");
  if (c.directory_layout == DirectoryLayout::megatron) {
    write_file_atomically(case_directory(c) / "latest_checkpointed_iteration.txt", std::to_string(step) + "\n");
  }
}

}  // namespace ckpt::harness
