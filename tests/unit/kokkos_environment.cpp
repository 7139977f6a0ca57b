// Kokkos starts once per process and cannot start again after finalize: one MemorySpaces with
// Kokkos running lives as long as the test program, so the suites and the campaign runs inside
// tests (each with its own MemorySpaces) find it running and leave it alone. Linked into each unit
// program whose tests use Kokkos memory (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <memory>

#include "harness/memory/memory_spaces.hpp"

namespace ckpt::harness {
namespace {

class KokkosForTheProgram : public ::testing::Environment {
 public:
  void SetUp() override {
    spaces_ = std::make_unique<MemorySpaces>();
    if (!spaces_->unavailable(MemorySpaceKind::kokkos)) spaces_->get(MemorySpaceKind::kokkos);
  }
  void TearDown() override { spaces_.reset(); }

 private:
  std::unique_ptr<MemorySpaces> spaces_;
};

[[maybe_unused]] ::testing::Environment* const kKokkos =
    ::testing::AddGlobalTestEnvironment(new KokkosForTheProgram);

}  // namespace
}  // namespace ckpt::harness
