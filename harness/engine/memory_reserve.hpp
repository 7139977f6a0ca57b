#pragma once

// A reserve of address space for running out of memory cleanly. When an allocation fails, what
// runs next allocates too: the unwinding (nlohmann::json's destructors allocate a stack of the
// values they free, and a destructor that throws ends the process in std::terminate), the
// failure's message, the removal of the failed checkpoint, the results record. So the first
// allocation that fails frees the reserve and then fails as it would have (std::bad_alloc):
// everything after it has that room. A failure inside a destructor during unwinding is retried in
// that room instead (throwing there would end the process).

#include <cstddef>
#include <new>

namespace ckpt::harness {

// While alive: `bytes` held in reserve and a new-handler that frees them at the first failed
// allocation (of any thread), then throws std::bad_alloc. The handler is the process's: one
// MemoryReserve at a time. Without the memory for the reserve itself it holds none (no error).
class MemoryReserve {
 public:
  explicit MemoryReserve(std::size_t bytes);
  ~MemoryReserve();
  MemoryReserve(const MemoryReserve&) = delete;
  MemoryReserve& operator=(const MemoryReserve&) = delete;

  // The reserve was spent: an allocation failed meanwhile. Thread-safe.
  static bool spent();

 private:
  std::new_handler previous_ = nullptr;
};

}  // namespace ckpt::harness
