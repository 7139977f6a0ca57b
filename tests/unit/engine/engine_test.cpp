// The training loop and its engines (harness/engine) against test doubles of known speed.
// Test names start with Engine: the TSan CI job runs them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "harness/comm/single_comm.hpp"
#include "harness/engine/chunk_ring.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/engine/memory_reserve.hpp"
#include "harness/engine/training_loop.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/plan/training_state.hpp"
#include "tests/unit/memory_test_support.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using backends::FilePlan;
using backends::IoPlan;

// Keeps files in memory; every write sleeps `delay` first (a storage device of known speed);
// the write numbered fail_at fails.
class SlowBackend final : public backends::Backend {
 public:
  explicit SlowBackend(double delay) : delay_(delay) {}
  std::string_view name() const override { return "slow"; }
  backends::Capabilities capabilities() const override { return {}; }

  std::map<std::string, std::vector<std::byte>> files;
  int fail_at = -1;
  int throw_at = -1;  // this write throws what a full memory throws, not an I/O error
  std::atomic<int> writes{0};

 protected:
  std::unique_ptr<OpenFiles> open(const IoPlan& /*plan*/, Direction d) override {
    if (d != Direction::write) return std::make_unique<OpenFiles>();
    const int write = writes++;
    if (write == fail_at) throw backends::IoError("slow", "open", "/x", EIO);
    if (write == throw_at) throw std::bad_alloc();
    return std::make_unique<OpenFiles>();
  }
  void transfer(OpenFiles& /*f*/, const IoPlan& plan, backends::MemoryView memory,
                Direction d) override {
    if (d == Direction::write) std::this_thread::sleep_for(std::chrono::duration<double>(delay_));
    const std::lock_guard lock(mutex_);
    memory_test::move_extents(files, plan, memory, d == Direction::write);
  }
  void sync(OpenFiles& /*f*/, Direction /*d*/) override {}
  void close(OpenFiles& /*f*/) override {}

 private:
  double delay_;
  std::mutex mutex_;
};

// Two ranks of four shards each, one file per rank under `dir`.
std::vector<RankPlan> small_plans(const fs::path& dir, std::uint64_t bytes_per_rank) {
  std::vector<RankPlan> plans;
  for (std::int64_t r = 0; r < 2; ++r) {
    RankPlan p;
    p.rank = r;
    p.buffer_bytes = p.payload_bytes = bytes_per_rank;
    const std::uint64_t each = bytes_per_rank / 4;
    for (std::uint64_t s = 0; s < 4; ++s) {
      PlacedShard ps;
      ps.shard.name = "t" + std::to_string(s);
      ps.rank = r;
      ps.file = "rank" + std::to_string(r);
      ps.file_offset = ps.memory_offset = s * each;
      ps.bytes = each;
      ps.data_key = 1000 * static_cast<std::uint64_t>(r) + s;
      p.shards.push_back(ps);
    }
    p.io.files.push_back(FilePlan{.path = (dir / ("rank" + std::to_string(r))).string(),
                                  .extents = {{0, 0, bytes_per_rank}}});
    plans.push_back(std::move(p));
  }
  return plans;
}

struct Rig {
  explicit Rig(double delay, std::uint64_t bytes_per_rank = 1 << 20)
      : backend(delay),
        plans(small_plans("/ckpt/step", bytes_per_rank)),
        space(make_host_space()),
        state(plans, *space) {
    fill_plans(plans, state, DataPattern::random);
  }

  TrainingSummary run(TrainingSpec t, EngineSpec e, EngineHooks hooks = {},
                      DpGather* gather = nullptr) {
    TrainingIo io{.comm = comm,
                  .backend = backend,
                  .plans = plans,
                  .planned_dir = "/ckpt/step",
                  .state = state,
                  .pattern = DataPattern::random,
                  .claim_dir =
                      [](std::int64_t i, fs::path& dir) {
                        dir = fs::path("/ckpt") / ("iter" + std::to_string(i));
                        return std::string();
                      },
                  .commit =
                      [this](const fs::path& dir, std::int64_t i, const Checksums& /*sums*/) {
                        if (i == throw_at_commit) throw 42;  // not even a std::exception
                        committed.emplace_back(dir, i);
                        return std::string();
                      },
                  .discard =
                      [this](const fs::path& dir) {
                        discarded.push_back(dir);
                        return "removed " + dir.string();
                      },
                  .interrupted = nullptr,
                  .gather = gather};
    return run_training(t, e, io, hooks);
  }

  // Reads checkpoint `dir` back from the backend into a fresh buffer and verifies it against
  // training iteration `iteration`.
  std::string verify(const fs::path& dir, std::int64_t iteration) {
    std::vector<RankPlan> read =
        plans_at_iteration(small_plans(dir, plans[0].buffer_bytes), iteration);
    ProcessBuffer into(read, *space);
    for (std::size_t r = 0; r < read.size(); ++r) {
      const backends::IoOutcome io = backend.read(read[r].io, into.rank_view(r));
      if (!io.ok()) return *io.error;
    }
    return verify_plans(read, into, DataPattern::random);
  }

  SingleComm comm;
  SlowBackend backend;
  std::vector<RankPlan> plans;
  std::unique_ptr<MemorySpace> space;
  ProcessBuffer state;
  std::vector<std::pair<fs::path, std::int64_t>> committed;
  std::vector<fs::path> discarded;
  std::int64_t throw_at_commit = -1;  // the commit of this iteration throws
};

TrainingSpec training(int iterations, double seconds, int every) {
  return {.iterations = iterations,
          .iteration_seconds = seconds,
          .update_fraction = 0.2,
          .checkpoint_every = every};
}

TEST(EngineStall, SyncStallIsTheWholeSlowWrite) {
  Rig rig(0.15);  // two ranks: 0.3 s per checkpoint
  const TrainingSummary s = rig.run(training(4, 0.05, 2), {.kind = EngineKind::sync});
  ASSERT_EQ(s.error, "");
  ASSERT_EQ(s.checkpoints.size(), 2u);
  for (const CheckpointRecord& r : s.checkpoints) {
    EXPECT_TRUE(r.committed);
    EXPECT_GE(r.stall_seconds, 0.3);
    // The loop goes on only after the write and the commit (orderings, not durations: the
    // sanitizer builds run slowly and unevenly).
    EXPECT_GE(r.times.flush.start, r.times.due);
    EXPECT_LE(r.times.commit.end, r.times.resumed);
    EXPECT_LE(r.time_to_durable_seconds, r.stall_seconds);
  }
  EXPECT_EQ(s.pool_high_water_bytes, 0u);
  EXPECT_EQ(rig.committed.size(), 2u);
  EXPECT_EQ(rig.committed.back().second, 3);
}

// async: the stall is the snapshot copy (2 MiB memcpy, no write); lazy: not even that (the
// copy runs during 0.4 s of compute). Either way durable waits for the 0.3 s flush. Held by
// the order of the recorded times, not by bounds on the stall, which a loaded machine or a
// sanitizer build stretches.
TEST(EngineStall, BackgroundEnginesStallLittleAndDurableWaitsForTheFlush) {
  for (const EngineKind kind : {EngineKind::async, EngineKind::lazy}) {
    SCOPED_TRACE(std::string(engine_name(kind)));
    Rig rig(0.15);
    const TrainingSummary s = rig.run(training(6, 0.5, 3), {.kind = kind});
    ASSERT_EQ(s.error, "");
    ASSERT_EQ(s.checkpoints.size(), 2u);
    for (const CheckpointRecord& r : s.checkpoints) {
      EXPECT_TRUE(r.committed);
      EXPECT_LT(r.times.resumed, r.times.flush.end) << "the loop went on before the writes ended";
      EXPECT_LE(r.times.snapshot.end, r.times.flush.start) << "the writes read the snapshot";
      EXPECT_GT(r.snapshot_seconds, 0);
      if (kind == EngineKind::async) {
        EXPECT_LE(r.snapshot_seconds, r.stall_seconds);
        EXPECT_LE(r.times.due, r.times.snapshot.start);
        EXPECT_LE(r.times.snapshot.end, r.times.resumed);
      }
      EXPECT_EQ(r.backpressure_seconds, 0) << "every flush ends within the next 3 iterations";
      EXPECT_GE(r.time_to_durable_seconds, 0.3);
      EXPECT_GE(r.flush_seconds, 0.3);
    }
    EXPECT_EQ(rig.verify(s.committed_dir, s.committed_iteration), "");
  }
}

TEST(EngineBackpressure, CheckpointsFasterThanFlushesBlockAndCountAsStall) {
  Rig rig(0.25);  // 0.5 s flush, a checkpoint due every 0.1 s
  const TrainingSummary s = rig.run(training(4, 0.1, 1), {.kind = EngineKind::async});
  ASSERT_EQ(s.error, "");
  ASSERT_EQ(s.checkpoints.size(), 4u);
  EXPECT_EQ(s.checkpoints[0].backpressure_seconds, 0);
  for (std::size_t i = 1; i < s.checkpoints.size(); ++i) {
    const CheckpointRecord& r = s.checkpoints[i];
    EXPECT_GE(r.backpressure_seconds, 0.3) << "checkpoint " << i;
    EXPECT_GE(r.stall_seconds, r.backpressure_seconds + r.snapshot_seconds - 1e-9);
    EXPECT_TRUE(r.committed);
  }
  EXPECT_EQ(rig.backend.writes.load(), 8) << "no checkpoint skipped";
  EXPECT_EQ(rig.committed.size(), 4u);
}

TEST(EnginePool, HighWaterNeverExceedsTheBound) {
  Rig rig(0.05);
  const std::uint64_t state = rig.state.memory().size();
  for (EngineKind kind : {EngineKind::async, EngineKind::lazy}) {
    const TrainingSummary s =
        rig.run(training(4, 0.05, 1), {.kind = kind, .host_pool_bytes = state + 4096});
    ASSERT_EQ(s.error, "");
    EXPECT_EQ(s.host_pool_bytes, state + 4096);
    EXPECT_EQ(s.pool_high_water_bytes, state) << "one snapshot at a time";
    EXPECT_LE(s.pool_high_water_bytes, s.host_pool_bytes);
  }
  EXPECT_THROW(rig.run(training(2, 0.05, 1), {.kind = EngineKind::async, .host_pool_bytes = 8191}),
               std::invalid_argument)
      << "below two 4 KiB chunks";
}

// A pool of a quarter of the checkpoint is a ring of two 256 KiB chunks; each chunk's write takes
// 20 ms, so the 8 chunks of a checkpoint cannot all be copied before 6 were written. async: the
// loop waits for ring space (stall); lazy: the copy waits during the next iteration's compute.
TEST(EnginePool, ARingOfAQuarterCheckpointKeepsTheBoundAndRestores) {
  for (const auto& [kind, every] :
       {std::pair{EngineKind::async, 1}, std::pair{EngineKind::lazy, 2}}) {
    SCOPED_TRACE(std::string(engine_name(kind)));
    Rig rig(0.02);
    const std::uint64_t state = rig.state.memory().size();
    ASSERT_EQ(state, 2u << 20);
    const TrainingSummary s =
        rig.run(training(4, 0.3, every), {.kind = kind, .host_pool_bytes = state / 4});
    ASSERT_EQ(s.error, "");
    EXPECT_EQ(s.pool_chunks, 2);
    EXPECT_EQ(s.pool_chunk_bytes, 256u << 10);
    EXPECT_EQ(s.pool_high_water_bytes, state / 4) << "the ring fills up, never past its bound";
    for (const CheckpointRecord& r : s.checkpoints) {
      EXPECT_TRUE(r.committed);
      EXPECT_GE(r.ring_wait_seconds, 0.09)
          << "6 chunk writes of 20 ms freed the space for the last 6 copies";
      EXPECT_GE(r.flush_seconds, 0.16);
      if (kind == EngineKind::async) {
        EXPECT_GE(r.stall_seconds, r.ring_wait_seconds);
        EXPECT_GE(r.snapshot_seconds, r.ring_wait_seconds);
      } else {
        // The copy started as the loop resumed and overlapped the next compute, so the loop
        // blocked for less than the copy took (an order, not a bound: it holds on a loaded
        // machine).
        EXPECT_LT(r.stall_seconds, r.snapshot_seconds) << "the copy ran during compute";
      }
    }
    EXPECT_EQ(rig.backend.writes.load(), 2 * static_cast<int>(s.checkpoints.size()))
        << "one stream per rank";
    EXPECT_EQ(rig.verify(s.committed_dir, s.committed_iteration), "");
  }
}

// The ring alone: chunks reach the flush side in the order they were pushed, each with its state
// bytes; a copy waits for a free chunk; close() ends the flush side and the copy side until
// reset(). No step depends on which thread runs first.
TEST(EngineRing, ChunksReachTheFlushSideInPushOrderAndCloseEndsBothSides) {
  const std::unique_ptr<MemorySpace> space = make_host_space();
  const std::unique_ptr<Buffer> state = space->allocate(3 * 4096);
  for (std::uint64_t i = 0; i < state->size(); ++i)
    state->view().data[i] = static_cast<std::byte>(i % 251);
  ChunkRing ring(*state, 2 * 4096);
  ASSERT_EQ(ring.geometry().slots, 2);
  ASSERT_EQ(ring.geometry().chunk_bytes, 4096u);
  ASSERT_TRUE(ring.push(0, 4096));
  ASSERT_TRUE(ring.push(4096, 100));
  bool third = false;
  std::thread copy([&] { third = ring.push(8192, 4096); });  // waits until the first chunk is freed
  const auto expect_chunk = [&](std::uint64_t offset, std::uint64_t bytes) {
    const std::optional<backends::MemoryView> chunk = ring.front();
    ASSERT_TRUE(chunk.has_value());
    ASSERT_EQ(chunk->size, bytes);
    EXPECT_EQ(std::memcmp(chunk->data, state->view().data + offset, bytes), 0) << offset;
    ring.pop();
  };
  expect_chunk(0, 4096);
  copy.join();
  EXPECT_TRUE(third);
  expect_chunk(4096, 100);
  expect_chunk(8192, 4096);
  EXPECT_EQ(ring.high_water(), 4196u) << "two chunks held at most: 4096 + 100 bytes";
  EXPECT_THROW(ring.pop(), std::logic_error) << "no chunk taken";
  std::optional<backends::MemoryView> after_close = backends::MemoryView{};
  std::thread flush([&] { after_close = ring.front(); });  // nothing pushed: waits for close()
  ring.close();
  flush.join();
  EXPECT_FALSE(after_close.has_value());
  EXPECT_FALSE(ring.push(0, 10));
  ring.reset();
  ASSERT_TRUE(ring.push(0, 10));
  expect_chunk(0, 10);
  EXPECT_EQ(ring.high_water(), 4196u) << "the most over every snapshot";
}

TEST(EngineErrors, AFailedRingFlushReleasesTheCopyAndIsNeverCommitted) {
  for (EngineKind kind : {EngineKind::async, EngineKind::lazy}) {
    SCOPED_TRACE(std::string(engine_name(kind)));
    Rig rig(0.005);
    rig.backend.fail_at =
        2;  // the second checkpoint's first rank: the copy is waiting for ring space
    const TrainingSummary s =
        rig.run(training(4, 0.05, 1), {.kind = kind, .host_pool_bytes = 64 << 10});
    EXPECT_NE(s.error.find("checkpoint of iteration 1 (/ckpt/iter1): rank 0:"), std::string::npos)
        << s.error;
    EXPECT_EQ(rig.committed.size(), 1u);
    EXPECT_EQ(s.committed_iteration, 0);
    EXPECT_LE(s.pool_high_water_bytes, 64u << 10);
  }
}

TEST(EngineVerify, TheCheckpointHoldsExactlyItsIteration) {
  Rig rig(0);
  const TrainingSummary s = rig.run(training(4, 0.02, 2), {.kind = EngineKind::async});
  ASSERT_EQ(s.error, "");
  ASSERT_EQ(s.committed_iteration, 3);
  EXPECT_EQ(rig.verify(s.committed_dir, 3), "");
  EXPECT_NE(rig.verify(s.committed_dir, 2), "") << "the state changes every iteration";
  EXPECT_NE(rig.verify(s.committed_dir, -1), "") << "the state before training differs too";
}

TEST(EngineVerify, ATornSnapshotFailsVerification) {
  Rig rig(0);
  const TrainingSummary s =
      rig.run(training(2, 0.02, 2), {.kind = EngineKind::async}, {.tear_snapshot = true});
  ASSERT_EQ(s.error, "") << "the engine itself does not notice";
  ASSERT_EQ(s.committed_iteration, 1);
  const std::string problem = rig.verify(s.committed_dir, 1);
  EXPECT_NE(problem.find("verification failed: tensor t0 (weight, rank 1)"), std::string::npos)
      << problem;
}

TEST(EngineVerify, ATornRingSnapshotFailsVerification) {
  Rig rig(0);
  const std::uint64_t pool = rig.state.memory().size() / 4;
  const TrainingSummary s =
      rig.run(training(2, 0.02, 2), {.kind = EngineKind::async, .host_pool_bytes = pool},
              {.tear_snapshot = true});
  ASSERT_EQ(s.error, "") << "the engine itself does not notice";
  ASSERT_EQ(s.committed_iteration, 1);
  const std::string problem = rig.verify(s.committed_dir, 1);
  EXPECT_NE(problem.find("verification failed: tensor t0 (weight, rank 1)"), std::string::npos)
      << problem;
}

TEST(EngineErrors, AFlushErrorComesBackWithItsCheckpoint) {
  Rig rig(0);
  rig.backend.fail_at = 3;  // the second checkpoint's second rank
  const TrainingSummary s = rig.run(training(4, 0.02, 1), {.kind = EngineKind::async});
  EXPECT_NE(s.error.find("checkpoint of iteration 1 (/ckpt/iter1): rank 1:"), std::string::npos)
      << s.error;
  EXPECT_EQ(rig.committed.size(), 1u) << "the failed checkpoint is never committed";
  EXPECT_EQ(s.committed_iteration, 0);
  EXPECT_EQ(rig.backend.writes.load(), 4) << "nothing written after the failure";
  for (std::size_t i = 1; i < s.checkpoints.size(); ++i) EXPECT_FALSE(s.checkpoints[i].committed);
}

// Memory runs out in the flush (std::bad_alloc from the backend) on each engine, whole pool and
// ring: the checkpoint fails with its context, nothing escapes the flush thread, its directory is
// discarded, and the one committed before stays the committed one.
TEST(EngineErrors, BadAllocInAFlushFailsThatCheckpointAndDiscardsItsDirectory) {
  struct Engine {
    EngineKind kind;
    std::uint64_t pool;
  };
  for (const Engine e :
       {Engine{EngineKind::sync, 0}, Engine{EngineKind::async, 0}, Engine{EngineKind::lazy, 0},
        Engine{EngineKind::async, 64 << 10}, Engine{EngineKind::lazy, 64 << 10}}) {
    SCOPED_TRACE(std::string(engine_name(e.kind)) + (e.pool > 0 ? " ring" : ""));
    Rig rig(0.002);
    rig.backend.throw_at = 2;  // the second checkpoint's first rank
    const TrainingSummary s =
        rig.run(training(4, 0.03, 1), {.kind = e.kind, .host_pool_bytes = e.pool});
    // sync writes on the loop's thread (the exception reaches the loop), the others on the flush
    // thread.
    EXPECT_TRUE(s.error.starts_with(
        e.kind == EngineKind::sync
            ? "checkpoint /ckpt/iter1 failed: out of memory (std::bad_alloc)"
            : "checkpoint of iteration 1 (/ckpt/iter1): rank 0: std::bad_alloc"))
        << s.error;
    EXPECT_NE(s.error.find(" — removed /ckpt/iter1; earlier complete checkpoints are untouched"),
              std::string::npos)
        << s.error;
    EXPECT_EQ(rig.discarded, std::vector<fs::path>{"/ckpt/iter1"});
    ASSERT_EQ(rig.committed.size(), 1u);
    EXPECT_EQ(s.committed_iteration, 0);
    EXPECT_EQ(s.committed_dir, "/ckpt/iter0");
    EXPECT_EQ(rig.verify(s.committed_dir, 0), "");
  }
}

// An exception between collectives (std::bad_alloc right after the second checkpoint claimed its
// directory) fails that checkpoint on each engine: its directory is discarded, the one committed
// before stays, and the loop stops there. (Under mpirun, with one process throwing: EngineMpi.)
TEST(EngineErrors, AnExceptionAfterTheClaimDiscardsThatCheckpoint) {
  for (const EngineKind kind : {EngineKind::sync, EngineKind::async, EngineKind::lazy}) {
    SCOPED_TRACE(std::string(engine_name(kind)));
    Rig rig(0.002);
    const TrainingSummary s =
        rig.run(training(4, 0.03, 1), {.kind = kind}, {.throw_after_claim = 1});
    EXPECT_EQ(s.error,
              "checkpoint /ckpt/iter1 failed: out of memory (std::bad_alloc) — removed "
              "/ckpt/iter1; earlier "
              "complete checkpoints are untouched");
    EXPECT_EQ(rig.discarded, std::vector<fs::path>{"/ckpt/iter1"});
    ASSERT_EQ(rig.committed.size(), 1u);
    EXPECT_EQ(s.committed_dir, "/ckpt/iter0");
    EXPECT_EQ(s.checkpoints.size(), 2u) << "the loop stopped at the failed checkpoint";
    EXPECT_EQ(rig.verify(s.committed_dir, 0), "");
  }
}

// A commit that throws (here something that is not even a std::exception) on the flush thread
// (async and lazy commit there when there is one process): the checkpoint fails, is discarded,
// and the process goes on to report it instead of ending in std::terminate.
TEST(EngineErrors, ACommitThatThrowsOnTheFlushThreadFailsThatCheckpoint) {
  for (const EngineKind kind : {EngineKind::sync, EngineKind::async, EngineKind::lazy}) {
    SCOPED_TRACE(std::string(engine_name(kind)));
    Rig rig(0);
    rig.throw_at_commit = 1;
    const TrainingSummary s = rig.run(training(3, 0.02, 1), {.kind = kind});
    // sync commits on the loop's thread, async and lazy on the flush thread.
    EXPECT_EQ(
        s.error,
        std::string(kind == EngineKind::sync
                        ? "checkpoint /ckpt/iter1 failed"
                        : "checkpoint of iteration 1 (/ckpt/iter1): commit failed") +
            ": an exception that is not a std::exception — removed /ckpt/iter1; earlier complete "
            "checkpoints are untouched");
    EXPECT_EQ(rig.discarded, std::vector<fs::path>{"/ckpt/iter1"});
    EXPECT_EQ(s.committed_iteration, 0);
    ASSERT_EQ(s.checkpoints.size(), 2u) << "the loop stops at the failed checkpoint";
    EXPECT_TRUE(s.checkpoints[0].committed);
    EXPECT_FALSE(s.checkpoints[1].committed);
  }
}

// The reserve goes at the first allocation that fails, which still fails (its caller reports
// it); later failures fail as without a reserve (never a loop in operator new).
TEST(EngineMemoryReserve, TheFirstFailedAllocationFreesTheReserveAndStillFails) {
  // The handler is called as operator new calls it on a failed allocation; a real allocation
  // larger than the address space would be reported as an error by the sanitizers.
  const std::new_handler before = std::get_new_handler();
  {
    const MemoryReserve reserve(1 << 20);
    EXPECT_FALSE(MemoryReserve::spent());
    const std::new_handler handler = std::get_new_handler();
    ASSERT_NE(handler, nullptr);
    EXPECT_THROW(handler(), std::bad_alloc);
    EXPECT_TRUE(MemoryReserve::spent());
    EXPECT_THROW(handler(), std::bad_alloc);
    EXPECT_NE(std::make_unique<char[]>(1 << 20), nullptr) << "ordinary allocations go on";
  }
  EXPECT_EQ(std::get_new_handler(), before) << "the handler before it is back";
}

TEST(EngineInflation, IterationsWithAndWithoutAFlushAreSeparated) {
  Rig rig(0.2);
  const TrainingSummary s = rig.run(training(6, 0.1, 3), {.kind = EngineKind::async});
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.plain_iteration_seconds.size() + s.flushing_iteration_seconds.size(), 6u);
  EXPECT_GE(s.flushing_iteration_seconds.size(), 2u);
  EXPECT_GE(s.plain_iteration_seconds.size(), 2u);
  ASSERT_TRUE(s.iteration_inflation().has_value());
  EXPECT_LT(*s.iteration_inflation(), 0.5);
}

// The timestamps the report's timeline draws come in the order the steps ran: iterations one
// after another (compute, lazy's wait, update), each checkpoint due at its iteration's end and the
// loop resumed after its stall; sync's flush and commit inside the stall, async's copy inside it
// and lazy's on the flush thread; a background commit ending exactly at the time to durable.
TEST(EngineTimeline, StepsAreRecordedInTheOrderTheyRan) {
  for (const EngineKind kind : {EngineKind::sync, EngineKind::async, EngineKind::lazy}) {
    SCOPED_TRACE(std::string(engine_name(kind)));
    Rig rig(0.01);
    const TrainingSummary s = rig.run(training(4, 0.05, 2), {.kind = kind});
    ASSERT_EQ(s.error, "");
    ASSERT_EQ(s.iteration_times.size(), 4u);
    double previous_end = 0;
    for (const IterationTimes& t : s.iteration_times) {
      EXPECT_GE(t.start, previous_end);
      EXPECT_LE(t.start, t.compute_end);
      EXPECT_LE(t.compute_end, t.update_start);
      EXPECT_LE(t.update_start, t.end);
      previous_end = t.end;
    }
    EXPECT_LE(previous_end, s.loop_seconds);
    ASSERT_EQ(s.checkpoints.size(), 2u);
    for (const CheckpointRecord& r : s.checkpoints) {
      const CheckpointTimes& t = r.times;
      const std::size_t i = static_cast<std::size_t>(r.iteration);
      EXPECT_GE(t.due, s.iteration_times[i].end);
      if (i + 1 < s.iteration_times.size()) {
        EXPECT_LE(t.resumed, s.iteration_times[i + 1].start);
      }
      ASSERT_TRUE(t.flush.ran() && t.commit.ran());
      EXPECT_GE(t.flush.start, t.due);
      EXPECT_LE(t.flush.end, t.commit.start);
      EXPECT_LE(t.commit.start, t.commit.end);
      if (kind == EngineKind::sync) {
        EXPECT_FALSE(t.snapshot.ran());
        EXPECT_GE(t.resumed - t.due, r.stall_seconds - 1e-9);
        EXPECT_LE(t.commit.end, t.resumed);
        EXPECT_GE(t.commit.end, t.due + r.time_to_durable_seconds - 1e-9);
        continue;
      }
      ASSERT_TRUE(t.snapshot.ran());
      EXPECT_LE(t.snapshot.end, t.flush.start) << "a whole pool is copied before its flush";
      EXPECT_GE(t.snapshot.start, t.due);
      if (kind == EngineKind::async) {
        EXPECT_LE(t.snapshot.end, t.resumed) << "async copies inside the stall";
      }
      EXPECT_NEAR(t.commit.end, t.due + r.time_to_durable_seconds, 1e-9);
    }
  }
}

// The report's timeline draws a sync checkpoint's stall as resumed - due and its durable mark at
// due + time to durable: both are the record's figures, also where the harness checksums the
// state after a DP gather (bookkeeping that neither figure counts).
TEST(EngineTimeline, SyncTimesGiveTheRecordsStallAndDurable) {
  for (const bool gathers : {false, true}) {
    SCOPED_TRACE(gathers ? "after a DP gather" : "without a gather");
    Rig rig(0.01, 4 << 20);
    DpGather nothing_to_move;  // every shard is held already: only the checksums after it
    const TrainingSummary s = rig.run(training(4, 0.05, 2), {.kind = EngineKind::sync}, {},
                                      gathers ? &nothing_to_move : nullptr);
    ASSERT_EQ(s.error, "");
    ASSERT_EQ(s.checkpoints.size(), 2u);
    for (const CheckpointRecord& r : s.checkpoints) {
      const CheckpointTimes& t = r.times;
      ASSERT_TRUE(r.committed && t.commit.ran());
      EXPECT_NEAR(t.resumed - t.due, r.stall_seconds, 1e-9);
      EXPECT_NEAR(t.due + r.time_to_durable_seconds, t.commit.end, 1e-9);
      EXPECT_GE(t.due, s.iteration_times[static_cast<std::size_t>(r.iteration)].end);
      EXPECT_LE(t.due, t.flush.start);
    }
  }
}

Case training_case(EngineKind kind, const std::string& backend) {
  Case c;
  c.backend = backend;
  c.training = training(2, 0.1, 1);
  c.engine.kind = kind;
  return c;
}

TEST(EngineChecks, CollectiveBackendsNeedMpiThreadMultipleFromTheFlushThread) {
  const backends::Capabilities mpiio{.shared_file = true, .collective = true};
  const Case c = training_case(EngineKind::async, "mpiio");
  EXPECT_TRUE(needs_mpi_thread_multiple(c, mpiio));
  EXPECT_FALSE(needs_mpi_thread_multiple(training_case(EngineKind::sync, "mpiio"), mpiio));
  EXPECT_FALSE(needs_mpi_thread_multiple(c, backends::Capabilities{}));
  EXPECT_EQ(engine_problem(c, mpiio, 1 << 20, std::string("MPI_THREAD_MULTIPLE")), std::nullopt);
  EXPECT_EQ(engine_problem(c, mpiio, 1 << 20, std::nullopt), std::nullopt)
      << "a dry run: MPI not started";
  EXPECT_EQ(engine_problem(c, mpiio, 1 << 20, std::string("MPI_THREAD_FUNNELED")).value_or(""),
            "engine.name = \"async\" with backend.name = \"mpiio\": the collective backend makes "
            "MPI calls from the "
            "engine's flush thread while the loop makes its own, which needs MPI_THREAD_MULTIPLE; "
            "this MPI granted "
            "MPI_THREAD_FUNNELED; use engine.name = \"sync\", a backend that is not collective "
            "(posix, uring), or an MPI "
            "built with thread support");
  backends::Capabilities hdf5 = mpiio;
  hdf5.background_thread = false;
  hdf5.advice["background_thread"] = "its library is not thread-safe";
  EXPECT_EQ(engine_problem(training_case(EngineKind::lazy, "hdf5"), hdf5, 1 << 20,
                           std::string("MPI_THREAD_MULTIPLE"))
                .value_or(""),
            "engine.name = \"lazy\" with backend.name = \"hdf5\": the engine's flush thread would "
            "call the backend, and "
            "its library is not thread-safe; use engine.name = \"sync\" or another backend (posix, "
            "uring, mpiio)");
}

TEST(EngineChecks, ARingPoolNeedsTwoPagesAndAStreamingBackend) {
  Case c = training_case(EngineKind::async, "posix");
  c.engine.host_pool_bytes = 4096;
  EXPECT_EQ(engine_problem(c, {}, 1 << 20, std::nullopt).value_or(""),
            "engine.host_pool_bytes = 4096 with engine.name = \"async\": a pool smaller than one "
            "process's checkpoint "
            "(1048576 bytes) is a ring of chunks and needs at least 8192 bytes; raise "
            "engine.host_pool_bytes (0: one "
            "checkpoint)");
  c.engine.host_pool_bytes = 1 << 18;
  EXPECT_EQ(engine_problem(c, {}, 1 << 20, std::nullopt), std::nullopt);
  c.compression.codec = Compression::zstd;  // the codec compresses whole snapshots only
  EXPECT_NE(engine_problem(c, {}, 1 << 20, std::nullopt)
                .value_or("")
                .find("engine.host_pool_bytes = 262144 with strategy.compression = \"zstd\": a "
                      "pool smaller than one process's checkpoint (1048576 bytes)"),
            std::string::npos);
  c.compression.codec = Compression::none;
  c.selective.delta_every = 4;  // a delta writes part of the state, the ring all of it
  EXPECT_NE(engine_problem(c, {}, 1 << 20, std::nullopt)
                .value_or("")
                .find("engine.host_pool_bytes = 262144 with strategy.delta_every = 4: a pool "
                      "smaller than one process's checkpoint (1048576 bytes) is a ring"),
            std::string::npos);
  c.selective.delta_every = 1;
  EXPECT_EQ(host_pool_allocation(c, 1 << 20), std::uint64_t{1} << 18) << "two chunks of 128 KiB";
  c.engine.host_pool_bytes = (1 << 18) + 5000;
  EXPECT_EQ(host_pool_allocation(c, 1 << 20), std::uint64_t{1} << 18)
      << "two chunks of whole pages, within the bound";
  c.backend = "mpiio";
  EXPECT_NE(engine_problem(c, {.collective = true}, 1 << 20, std::string("MPI_THREAD_MULTIPLE"))
                .value_or("")
                .find("flushes chunk by chunk, and a collective backend takes a process's whole "
                      "plan in one call"),
            std::string::npos);
}

// Without a device the refusal names why; with one, the load keeps the GPU busy for the time asked.
TEST(EngineGpu, ComputeGpuNeedsACudaDeviceAndRunsForItsTime) {
  Case c = training_case(EngineKind::lazy, "posix");
  c.training.compute = ComputeKind::gpu;
  if (const auto why = gpu_load_unavailable()) {
    EXPECT_EQ(engine_problem(c, {}, 1 << 20, std::nullopt).value_or(""),
              "training.compute = \"gpu\" needs a CUDA device; none found: " + *why +
                  "; use training.compute = \"sleep\" or \"spin\"");
    try {
      make_gpu_load();
      ADD_FAILURE() << "make_gpu_load without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()),
                "training.compute = \"gpu\" needs a CUDA device; none found: " + *why);
    }
    GTEST_SKIP() << "the GPU load itself needs a CUDA device: " << *why;
  }
  EXPECT_EQ(engine_problem(c, {}, 1 << 20, std::nullopt), std::nullopt);
  const std::unique_ptr<GpuLoad> load = make_gpu_load();
  EXPECT_GT(load->kernel_seconds(), 0);
  EXPECT_LT(load->kernel_seconds(), 0.05);
  const auto start = std::chrono::steady_clock::now();
  load->run_for(0.2);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(took, 0.2);
  EXPECT_LT(took, 0.2 + 0.05 + 2 * load->kernel_seconds());
}

}  // namespace
}  // namespace ckpt::harness
