#pragma once

// A fixed set of slots (chunks of a pool: the engines' host ring, the loader's reader chunks, the
// device staging buffers) passed between the side that fills them and the side that empties
// them. A producer takes a free slot (the one freed longest ago first, so slots freed in the order
// they were filled come back in ring order), fills it and hands it over with a payload saying what
// it holds; consumers take filled slots in the order they were handed over and give them back.
// close() or the first fail() wakes every waiter and ends both sides (acquire and take return
// nullopt, even with filled slots queued) until reset().
//
// Thread safety: every member may be called from any thread. The blocking calls (acquire, take)
// suit producer and consumer threads; the try_ calls never block, for a single thread that drives
// asynchronous work through the slots (it must not wait on itself).

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {

template <class Payload>
class BoundedSlots {
 public:
  struct Filled {
    int slot = 0;
    Payload payload{};
  };

  // Throws std::invalid_argument for fewer than one slot.
  explicit BoundedSlots(int slots) : held_(static_cast<std::size_t>(std::max(slots, 0)), 0) {
    if (slots < 1) throw std::invalid_argument("BoundedSlots: needs at least one slot");
    free_all();
  }
  BoundedSlots(const BoundedSlots&) = delete;
  BoundedSlots& operator=(const BoundedSlots&) = delete;

  int slots() const { return static_cast<int>(held_.size()); }

  // Producer: waits for a free slot and holds `held` units in it (bytes, or 1 a slot) until
  // release(); nullopt once closed. The time waited counts into acquire_wait_seconds().
  std::optional<int> acquire(std::uint64_t held = 1) {
    std::unique_lock lock(mutex_);
    const auto start = Clock::now();
    ++waiting_;
    free_ready_.wait(lock, [this] { return closed_ || !free_.empty(); });
    --waiting_;
    acquire_wait_seconds_ += seconds_since(start);
    return closed_ ? std::nullopt : std::optional<int>(pop_free(held));
  }
  // Producer, never blocking: a free slot, or nullopt when none is free or the slots are closed.
  std::optional<int> try_acquire(std::uint64_t held = 1) {
    const std::lock_guard lock(mutex_);
    if (closed_ || free_.empty()) return std::nullopt;
    return pop_free(held);
  }
  // Producer: hands a slot it acquired, with what it holds, to the consumers.
  void fill(int slot, Payload payload) {
    {
      const std::lock_guard lock(mutex_);
      filled_.push_back({slot, std::move(payload)});
    }
    filled_ready_.notify_one();
  }

  // Consumer: waits for the oldest filled slot; nullopt once closed.
  std::optional<Filled> take() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    filled_ready_.wait(lock, [this] { return closed_ || !filled_.empty(); });
    --waiting_;
    return closed_ ? std::nullopt : std::optional<Filled>(pop_filled());
  }
  // Consumer, never blocking: the oldest filled slot, or nullopt when none is filled or closed.
  std::optional<Filled> try_take() {
    const std::lock_guard lock(mutex_);
    if (closed_ || filled_.empty()) return std::nullopt;
    return pop_filled();
  }
  // Consumer: frees a slot it took (also after close()).
  void release(int slot) {
    {
      const std::lock_guard lock(mutex_);
      in_use_ -= held_.at(static_cast<std::size_t>(slot));
      held_[static_cast<std::size_t>(slot)] = 0;
      free_.push_back(slot);
    }
    free_ready_.notify_one();
  }

  // Ends both sides without an error: every waiter wakes.
  void close() { stop(nullptr); }
  // Ends both sides; the first error given is kept (later ones are dropped).
  void fail(const std::string& error) { stop(&error); }
  // The first fail()'s error, "" when none.
  std::string error() const {
    const std::lock_guard lock(mutex_);
    return error_;
  }
  // Every slot free (slot 0 first), open, no error, no wait counted; the high water stays.
  // Precondition: no thread is using the slots.
  void reset() {
    const std::lock_guard lock(mutex_);
    free_all();
    closed_ = false;
    error_.clear();
    acquire_wait_seconds_ = 0;
  }

  // The most units held at once since construction.
  std::uint64_t high_water() const {
    const std::lock_guard lock(mutex_);
    return high_water_;
  }
  // The seconds acquire() waited since construction or reset().
  double acquire_wait_seconds() const {
    const std::lock_guard lock(mutex_);
    return acquire_wait_seconds_;
  }
  // Threads blocked in acquire() or take() now: lets a test hand over deterministically.
  int waiting() const {
    const std::lock_guard lock(mutex_);
    return waiting_;
  }

 private:
  // Callers hold mutex_.
  void free_all() {
    free_.clear();
    filled_.clear();
    for (int s = 0; s < slots(); ++s) free_.push_back(s);
    std::fill(held_.begin(), held_.end(), 0);
    in_use_ = 0;
  }
  int pop_free(std::uint64_t held) {
    const int slot = free_.front();
    free_.pop_front();
    held_[static_cast<std::size_t>(slot)] = held;
    in_use_ += held;
    high_water_ = std::max(high_water_, in_use_);
    return slot;
  }
  Filled pop_filled() {
    Filled f = std::move(filled_.front());
    filled_.pop_front();
    return f;
  }
  void stop(const std::string* error) {
    {
      const std::lock_guard lock(mutex_);
      if (error && error_.empty()) error_ = *error;
      closed_ = true;
    }
    free_ready_.notify_all();
    filled_ready_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable free_ready_, filled_ready_;
  std::deque<int> free_;
  std::deque<Filled> filled_;
  std::vector<std::uint64_t> held_;  // units each slot holds
  std::uint64_t in_use_ = 0, high_water_ = 0;
  double acquire_wait_seconds_ = 0;
  int waiting_ = 0;
  std::string error_;
  bool closed_ = false;
};

}  // namespace ckpt::harness
