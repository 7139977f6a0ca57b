#pragma once

// A node-local tier's part files, moved through the tier's backend (tiers.local_backend) by the one
// executor, as every other phase's bytes are: the backend's durability (each written file synced
// before it is named), its error handling (errors name the backend, the call and the path) and its
// byte counts. A part is written under a temporary name and renamed once whole and synced, so a
// part file exists under its name only complete.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/memory/staging.hpp"
#include "harness/spec/engine_spec.hpp"

namespace ckpt::harness {

// Why tiers.local_backend = `name` cannot serve a local tier (not one of kLocalTierBackends, or not
// compiled in: the registry's reason), in words naming the key and the fix; nullopt when it can.
// Constructs nothing: for the checks before any I/O.
std::optional<std::string> local_tier_backend_problem(std::string_view name);

// The local tier's backend `name`: one thread, one request in flight, every written file synced
// (fdatasync). Throws std::invalid_argument with local_tier_backend_problem's words.
std::unique_ptr<backends::Backend> make_local_tier_backend(
    std::string_view name = kDefaultLocalTierBackend);

// One part file of a local tier moved in chunks of `chunk_bytes`, in file order, through
// `backend`, the file opened once. Writing goes to the temporary name (its directory made, a stale
// one removed) and finish() renames it; reading requires the file to hold exactly `bytes`. Used by
// one thread; `backend` must outlive it and serve no other thread meanwhile.
class PartFile {
 public:
  PartFile(backends::Backend& backend, std::filesystem::path path, std::uint64_t bytes,
           std::uint64_t chunk_bytes, bool write);
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  // Bytes of the next chunk (0 once every chunk moved).
  std::uint64_t next_bytes() const;
  // Moves the next chunk between the file and `memory` (next_bytes() long); false once a transfer
  // (or the open) failed, after which nothing moves.
  bool next(std::span<std::byte> memory);
  // Closes the file (written: synced by the backend, then renamed to its name) and hands over what
  // the transfers gave; `error` names the path. A part not moved whole is an error and is never
  // renamed. Call once.
  Execution finish();

 private:
  std::filesystem::path path_;
  bool write_;
  backends::IoPlan plan_;
  std::vector<StagedPart> chunks_;
  std::size_t next_ = 0;
  PlanExecutor executor_;
  std::string problem_;  // before any transfer: the size of the file read, its directory
};

// `bytes` written as `path` through `backend` in one transfer: temporary name, synced, renamed.
Execution write_part(backends::Backend& backend, const std::filesystem::path& path,
                     std::span<std::byte> bytes);

// The whole part file `path` read into `into` through `backend`: exactly into.size() bytes, else
// an error naming the file's size.
Execution read_part(backends::Backend& backend, const std::filesystem::path& path,
                    std::span<std::byte> into);

}  // namespace ckpt::harness
