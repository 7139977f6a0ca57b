#include "harness/engine/memory_reserve.hpp"

#include <atomic>
#include <cstdlib>
#include <exception>

namespace ckpt::harness {
namespace {

// A new-handler is a plain function, so the block it frees lives in static storage; taken with
// an exchange, so that two threads failing at once free it once.
std::atomic<void*>& reserve_block() {
  static std::atomic<void*> block{nullptr};
  return block;
}

std::atomic<bool>& reserve_spent() {
  static std::atomic<bool> spent{false};
  return spent;
}

void release_reserve() {
  void* block = reserve_block().exchange(nullptr);
  if (block != nullptr) {
    std::free(block);
    reserve_spent().store(true);
  }
  // Inside a destructor run by the unwinding of an exception already thrown (an allocation that
  // bypasses operator new, an mmap, failed first): throwing would end the process, so the
  // allocation is tried again in the room just freed. Otherwise the allocation that failed still
  // fails, and its caller reports it with room to do so.
  if (block != nullptr && std::uncaught_exceptions() > 0) return;
  throw std::bad_alloc();
}

}  // namespace

MemoryReserve::MemoryReserve(std::size_t bytes) {
  reserve_spent().store(false);
  // malloc, not new: the block is freed by the handler that operator new calls.
  reserve_block().store(std::malloc(bytes));
  previous_ = std::set_new_handler(release_reserve);
}

MemoryReserve::~MemoryReserve() {
  std::set_new_handler(previous_);
  std::free(reserve_block().exchange(nullptr));
}

bool MemoryReserve::spent() {
  return reserve_spent().load();
}

}  // namespace ckpt::harness
