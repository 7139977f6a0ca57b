#pragma once

#include <memory>
#include <string_view>

#include "backends/backend.hpp"

namespace ckpt::backends::null {

// Opens no file and moves no byte: write and read report the plan's bytes as moved, so a case
// run with it measures the harness's own overhead (planning, buffers, timing, reduction).
// It never reads or writes the memory view and accepts every setting another backend could
// honour (direct I/O, any queue depth, device memory), so any case can be rerun with it.
class NullBackend final : public Backend {
 public:
  // The registry has checked the settings against null::declared_capabilities.
  explicit NullBackend(const IoSettings& settings);

  std::string_view name() const override { return "null"; }
  Capabilities capabilities() const override;

 protected:
  // Returns an empty handle; touches no path.
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  // Nothing; never reads or writes the memory.
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  // Nothing.
  void sync(OpenFiles& files, Direction direction) override;
  // Nothing.
  void close(OpenFiles& files) override;
};

}  // namespace ckpt::backends::null
