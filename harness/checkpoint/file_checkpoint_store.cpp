// FileCheckpointStore: the case directory's files, locks and renames, as CaseLock,
// create_step_directory, commit_manifest and commit_checkpoint keep them.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/target_check.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

class FileLock final : public StoreLock {
 public:
  explicit FileLock(CaseLock lock) : lock_(std::move(lock)) {}

 private:
  CaseLock lock_;
};

}  // namespace

std::optional<std::string> FileCheckpointStore::prepare_target(const Case& c) {
  return prepare_target_for_checkpoint(c);
}

std::unique_ptr<StoreLock> FileCheckpointStore::lock(const Case& c, bool shared,
                                                     std::string& problem, std::string& note) {
  const fs::path dir = case_directory(c);
  if (!shared) return std::make_unique<FileLock>(CaseLock::acquire(dir, problem, note));
  std::error_code ec;
  // Without the case directory there is nothing to restore, which the restore's search says.
  if (!fs::is_directory(dir, ec)) return nullptr;
  return std::make_unique<FileLock>(CaseLock::acquire_shared(dir, problem, note));
}

std::int64_t FileCheckpointStore::next_step_number(const Case& c) {
  return harness::next_step_number(c);
}

std::int64_t FileCheckpointStore::claim_step(std::int64_t step,
                                             const std::function<fs::path(std::int64_t)>& name_of) {
  return create_step_directory(step, name_of);
}

std::optional<std::string> FileCheckpointStore::find_latest(const Case& c, fs::path& dir) {
  return find_latest_checkpoint(c, dir);
}

Manifest FileCheckpointStore::read_manifest(const fs::path& dir) {
  return harness::read_manifest(dir);
}

bool FileCheckpointStore::has_manifest(const fs::path& dir) {
  return fs::exists(dir / kManifestName);
}

std::vector<std::string> FileCheckpointStore::complete_checkpoints(const Case& c) {
  std::vector<std::string> complete;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(case_directory(c), ec)) {
    if (fs::is_regular_file(entry.path() / kManifestName, ec))
      complete.push_back(entry.path().filename().string());
  }
  return complete;
}

std::optional<std::string> FileCheckpointStore::read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void FileCheckpointStore::write_text(const fs::path& path, const std::string& text) {
  write_file_atomically(path, text);
}

std::map<std::string, std::uint64_t> FileCheckpointStore::file_sizes(const fs::path& dir) {
  std::map<std::string, std::uint64_t> sizes;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    std::error_code file_error;
    if (!it->is_regular_file(file_error)) continue;
    const std::uint64_t size = it->file_size(file_error);
    if (!file_error) sizes[it->path().lexically_relative(dir).string()] = size;
  }
  return sizes;
}

std::string FileCheckpointStore::read_bytes(const fs::path& path, std::uint64_t offset,
                                            std::uint64_t length) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(
        fmt::format("{}: cannot be opened: {}", path.string(), std::strerror(errno)));
  }
  std::string bytes(static_cast<std::size_t>(length), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(bytes.data(), static_cast<std::streamsize>(length));
  bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return bytes;
}

void FileCheckpointStore::remove_text(const fs::path& path) noexcept {
  std::error_code ec;
  fs::remove(path, ec);
}

std::string FileCheckpointStore::remove_checkpoint(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  return "";  // as before: a directory left behind is only space, never a complete checkpoint
}

std::string FileCheckpointStore::remove_failed(const fs::path& dir) {
  std::error_code ec;
  fs::remove(dir / kManifestName, ec);
  if (!ec) fs::remove_all(dir, ec);
  return ec ? fmt::format(
                  "this run could not remove its incomplete directory {}: {} (it has no "
                  "manifest, so "
                  "restore refuses it)",
                  dir.string(), ec.message())
            : fmt::format("this run removed its incomplete directory {}", dir.string());
}

}  // namespace ckpt::harness
