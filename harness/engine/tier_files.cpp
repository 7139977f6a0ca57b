#include "harness/engine/tier_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "backends/registry.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// Each part is durable before it is named (fdatasync: its bytes and its size).
backends::IoSettings local_tier_settings() {
  return {.sync = backends::SyncPolicy::fdatasync};
}

fs::path temporary_part(const fs::path& path) {
  return path.string() + ".tmp";
}

// One file holding `bytes` at offset 0, from memory offset 0.
backends::IoPlan whole_file_plan(const fs::path& path, std::uint64_t bytes) {
  backends::FilePlan file{.path = path.string(), .file_size = bytes};
  if (bytes > 0) file.extents.push_back({.file_offset = 0, .memory_offset = 0, .length = bytes});
  return {.files = {std::move(file)}};
}

// Writing: the directory made and a stale temporary removed (the backend opens without O_TRUNC).
// Reading: the file holds exactly `bytes`. The problem, or "".
std::string prepare_part(const fs::path& path, std::uint64_t bytes, bool write) {
  std::error_code ec;
  if (write) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) return fmt::format("{}: {}", path.parent_path().string(), ec.message());
    // Anything else under the temporary name is the backend's to refuse, naming it.
    std::error_code absent;  // no temporary: nothing to remove
    if (fs::is_regular_file(fs::symlink_status(temporary_part(path), absent)))
      fs::remove(temporary_part(path), ec);
    return ec ? fmt::format("{}: {}", temporary_part(path).string(), ec.message()) : "";
  }
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) return fmt::format("{}: {}", path.string(), ec.message());
  if (size != bytes) return fmt::format("{}: {} bytes, expected {}", path.string(), size, bytes);
  return "";
}

}  // namespace

std::optional<std::string> local_tier_backend_problem(std::string_view name) {
  if (std::find(std::begin(kLocalTierBackends), std::end(kLocalTierBackends), name) ==
      std::end(kLocalTierBackends)) {
    return fmt::format(
        "tiers.local_backend = \"{}\": a local tier is written through \"posix\" or \"uring\" "
        "(file backends that stream a part through a file kept open); choose one of them",
        name);
  }
  try {
    backends::validate_backend(name, local_tier_settings());
  } catch (const std::invalid_argument& e) {
    return fmt::format("tiers.local_backend = \"{}\": {}; or set tiers.local_backend = \"posix\"",
                       name, e.what());
  }
  return std::nullopt;
}

std::unique_ptr<backends::Backend> make_local_tier_backend(std::string_view name) {
  if (const auto problem = local_tier_backend_problem(name)) throw std::invalid_argument(*problem);
  return backends::make_backend(name, local_tier_settings());
}

PartFile::PartFile(backends::Backend& backend, fs::path path, std::uint64_t bytes,
                   std::uint64_t chunk_bytes, bool write)
    : path_(std::move(path)),
      write_(write),
      plan_(whole_file_plan(write ? temporary_part(path_) : path_, bytes)),
      chunks_(split_plan(plan_, std::max<std::uint64_t>(chunk_bytes, 1))),
      executor_(backend, write, {.on_throw = OnThrow::record, .opening = Opening::kept_open}),
      problem_(prepare_part(path_, bytes, write)) {
  // The file opens before its first chunk comes (a part without bytes is still created).
  static const StagedPart kOpenOnly;
  if (problem_.empty()) executor_.call({.plan = &plan_, .part = &kOpenOnly});
}

std::uint64_t PartFile::next_bytes() const {
  return next_ < chunks_.size() ? chunks_[next_].bytes : 0;
}

bool PartFile::next(std::span<std::byte> memory) {
  if (!problem_.empty() || next_ >= chunks_.size()) return false;
  const bool ok = executor_.call(
      {.plan = &plan_, .memory = {memory.data(), memory.size()}, .part = &chunks_[next_]});
  ++next_;
  return ok;
}

Execution PartFile::finish() {
  const bool whole = problem_.empty() && next_ == chunks_.size();
  if (!whole) executor_.drop_files();  // a part not moved whole is never synced nor named
  Execution done = executor_.finish();
  if (!problem_.empty()) {
    done.error = problem_;
  } else if (done.error.empty() && !whole) {
    done.error =
        fmt::format("{}: {} of {} chunks moved", plan_.files[0].path, next_, chunks_.size());
  }
  if (!done.error.empty() || !write_) return done;
  std::error_code ec;
  fs::rename(plan_.files[0].path, path_, ec);
  if (ec) {
    done.error =
        fmt::format("rename {} -> {}: {}", plan_.files[0].path, path_.string(), ec.message());
  }
  return done;
}

Execution write_part(backends::Backend& backend, const fs::path& path, std::span<std::byte> bytes) {
  PartFile file(backend, path, bytes.size(), bytes.size(), true);
  if (!bytes.empty()) file.next(bytes);
  return file.finish();
}

Execution read_part(backends::Backend& backend, const fs::path& path, std::span<std::byte> into) {
  PartFile file(backend, path, into.size(), into.size(), false);
  if (!into.empty()) file.next(into);
  return file.finish();
}

}  // namespace ckpt::harness
