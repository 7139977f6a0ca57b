#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "backends/backend.hpp"

namespace ckpt::backends::skeleton {

// Declared beside skeleton::registration(): the options and what the backend can do.
OptionTable option_table();
Capabilities declared_capabilities(const OptionValues& options);

// The smallest complete backend, to copy: opens every file of the plan, moves each extent with
// pwrite/pread in blocks of at most `block_bytes`, applies the sync policy, closes. One thread;
// the registry has checked the settings against declared_capabilities() before construction.
class SkeletonBackend final : public Backend {
 public:
  SkeletonBackend(const IoSettings& settings, std::uint64_t block_bytes);

  std::string_view name() const override { return "skeleton"; }
  Capabilities capabilities() const override;

 protected:
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  void sync(OpenFiles& files, Direction direction) override;
  void close(OpenFiles& files) override;
  std::unique_ptr<MappedFile> map_file(const std::string& path) override;

 private:
  class Files;
  IoSettings settings_;
  std::uint64_t block_bytes_;
};

}  // namespace ckpt::backends::skeleton
