// The bounded-slots primitive under the engines' ring, the loader's chunk pool and the device
// stager. Threads meet through waiting(): a test hands over only once the other thread is
// blocked inside the slots, so no result depends on how fast a thread runs (the TSan build runs
// these 5-20x slower).
#include "harness/common/bounded_slots.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ckpt::harness {
namespace {

using Slots = BoundedSlots<std::string>;

// Returns once `n` threads are blocked in acquire() or take().
void await_waiting(const Slots& slots, int n) {
  while (slots.waiting() != n) std::this_thread::yield();
}

TEST(BoundedSlots, FreeSlotsComeInRingOrderAndFilledOnesInTheOrderTheyWereHandedOver) {
  Slots slots(3);
  EXPECT_EQ(slots.slots(), 3);
  EXPECT_EQ(slots.acquire(), 0);
  EXPECT_EQ(slots.acquire(), 1);
  EXPECT_EQ(slots.try_acquire(), 2);
  EXPECT_FALSE(slots.try_acquire().has_value());
  EXPECT_FALSE(slots.try_take().has_value());
  slots.fill(1, "b");
  slots.fill(0, "a");
  slots.fill(2, "c");
  std::optional<Slots::Filled> f = slots.take();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->slot, 1);
  EXPECT_EQ(f->payload, "b");
  f = slots.try_take();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->slot, 0);
  EXPECT_EQ(f->payload, "a");
  slots.release(1);
  slots.release(0);
  // The one freed longest ago comes back first.
  EXPECT_EQ(slots.acquire(), 1);
  EXPECT_EQ(slots.acquire(), 0);
  f = slots.take();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->slot, 2);
  EXPECT_EQ(f->payload, "c");
}

TEST(BoundedSlots, FewerThanOneSlotIsRefused) {
  EXPECT_THROW(Slots(0), std::invalid_argument);
  EXPECT_THROW(Slots(-1), std::invalid_argument);
}

TEST(BoundedSlots, HighWaterIsTheMostUnitsHeldAtOnceAndOutlivesReset) {
  Slots slots(3);
  EXPECT_EQ(slots.high_water(), 0u);
  ASSERT_EQ(slots.acquire(100), 0);
  ASSERT_EQ(slots.acquire(30), 1);
  EXPECT_EQ(slots.high_water(), 130u);
  slots.fill(0, "x");
  slots.release(slots.take()->slot);  // frees the 100
  ASSERT_EQ(slots.try_acquire(50), 2);
  EXPECT_EQ(slots.high_water(), 130u);  // 30 + 50 held now
  ASSERT_EQ(slots.acquire(60), 0);
  EXPECT_EQ(slots.high_water(), 140u);
  slots.reset();
  EXPECT_EQ(slots.high_water(), 140u);
  // Every slot free again, slot 0 first, nothing filled.
  EXPECT_FALSE(slots.try_take().has_value());
  EXPECT_EQ(slots.acquire(1), 0);
  EXPECT_EQ(slots.acquire(1), 1);
  EXPECT_EQ(slots.acquire(1), 2);
  EXPECT_EQ(slots.high_water(), 140u);
}

TEST(BoundedSlots, AcquireWaitsForTheSlotAConsumerReleases) {
  Slots slots(1);
  ASSERT_EQ(slots.acquire(), 0);
  slots.fill(0, "first");
  std::optional<int> got;
  std::thread producer([&] { got = slots.acquire(); });
  await_waiting(slots, 1);
  EXPECT_FALSE(slots.try_acquire().has_value());  // still none free while it waits
  const std::optional<Slots::Filled> f = slots.take();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->payload, "first");
  slots.release(f->slot);
  producer.join();
  EXPECT_EQ(got, 0);
  EXPECT_EQ(slots.waiting(), 0);
  EXPECT_GT(slots.acquire_wait_seconds(), 0.0);  // it did wait
  slots.reset();
  EXPECT_EQ(slots.acquire_wait_seconds(), 0.0);
}

TEST(BoundedSlots, TakeWaitsForTheSlotAProducerFills) {
  Slots slots(2);
  std::optional<Slots::Filled> got;
  std::thread consumer([&] { got = slots.take(); });
  await_waiting(slots, 1);
  const std::optional<int> slot = slots.acquire();
  ASSERT_EQ(slot, 0);
  slots.fill(*slot, "payload");
  consumer.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->slot, 0);
  EXPECT_EQ(got->payload, "payload");
}

TEST(BoundedSlots, CloseWakesEveryWaiterWithoutAnError) {
  Slots slots(1);
  ASSERT_EQ(slots.acquire(), 0);
  std::optional<int> acquired = 7;
  std::optional<Slots::Filled> taken = Slots::Filled{7, "unset"};
  std::thread producer([&] { acquired = slots.acquire(); });
  std::thread consumer([&] { taken = slots.take(); });
  await_waiting(slots, 2);
  slots.close();
  producer.join();
  consumer.join();
  EXPECT_FALSE(acquired.has_value());
  EXPECT_FALSE(taken.has_value());
  EXPECT_EQ(slots.error(), "");
  // Closed: even a filled slot is not handed out, and nothing is acquired, until reset().
  slots.fill(0, "late");
  EXPECT_FALSE(slots.take().has_value());
  EXPECT_FALSE(slots.try_take().has_value());
  EXPECT_FALSE(slots.acquire().has_value());
  slots.release(0);  // a slot may still be given back
  EXPECT_FALSE(slots.try_acquire().has_value());
  slots.reset();
  EXPECT_EQ(slots.try_acquire(), 0);
}

TEST(BoundedSlots, TheFirstErrorIsKeptAndWakesEveryWaiter) {
  Slots slots(1);
  ASSERT_EQ(slots.acquire(), 0);
  std::optional<int> acquired = 7;
  std::optional<Slots::Filled> taken = Slots::Filled{7, "unset"};
  std::thread producer([&] { acquired = slots.acquire(); });
  std::thread consumer([&] { taken = slots.take(); });
  await_waiting(slots, 2);
  slots.fail("read /x at offset 4096: Input/output error");
  producer.join();
  consumer.join();
  EXPECT_FALSE(acquired.has_value());
  EXPECT_FALSE(taken.has_value());
  slots.fail("a later failure");
  slots.close();
  EXPECT_EQ(slots.error(), "read /x at offset 4096: Input/output error");
  slots.reset();
  EXPECT_EQ(slots.error(), "");
  EXPECT_EQ(slots.try_acquire(), 0);
}

TEST(BoundedSlots, AnErrorAfterCloseIsStillKept) {
  Slots slots(2);
  slots.close();
  slots.fail("the last reader failed after the copier finished");
  EXPECT_EQ(slots.error(), "the last reader failed after the copier finished");
}

TEST(BoundedSlots, ProducersAndConsumersPassEveryItemExactlyOnceThroughFewSlots) {
  constexpr int kProducers = 3, kConsumers = 2, kItems = 400;
  BoundedSlots<int> slots(2);
  std::vector<int> seen(kProducers * kItems, 0);
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&slots, p] {
      for (int i = 0; i < kItems; ++i) {
        const std::optional<int> slot = slots.acquire(10);
        if (!slot) return;
        slots.fill(*slot, p * kItems + i);
      }
    });
  }
  // Both slots filled and every producer blocked: the most ever held, whatever the timing.
  while (slots.waiting() != kProducers) std::this_thread::yield();
  EXPECT_EQ(slots.high_water(), 20u);
  std::vector<std::vector<int>> taken(kConsumers);
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&slots, &taken, c] {
      while (const std::optional<BoundedSlots<int>::Filled> f = slots.take()) {
        taken[static_cast<std::size_t>(c)].push_back(f->payload);
        slots.release(f->slot);
      }
    });
  }
  for (int p = 0; p < kProducers; ++p) threads[static_cast<std::size_t>(p)].join();
  // Every item was handed over; the consumers end once the last one was given back.
  while (true) {
    std::optional<int> a = slots.try_acquire(0), b = slots.try_acquire(0);
    if (a && b) break;
    if (a) slots.release(*a);
    if (b) slots.release(*b);
    std::this_thread::yield();
  }
  slots.close();
  for (int c = 0; c < kConsumers; ++c) threads[static_cast<std::size_t>(kProducers + c)].join();
  for (const std::vector<int>& items : taken) {
    for (const int item : items) ++seen[static_cast<std::size_t>(item)];
  }
  for (std::size_t item = 0; item < seen.size(); ++item) ASSERT_EQ(seen[item], 1) << item;
  EXPECT_EQ(slots.high_water(), 20u);  // never more than two slots of 10 units
}

}  // namespace
}  // namespace ckpt::harness
