// ckpt_training_throw DIR ENGINE: the training loop (run_training) of two small ranks per process
// over the posix backend, run under mpirun, where process 1 throws std::bad_alloc right after the
// directory of the checkpoint of iteration 1 was claimed (EngineHooks::throw_after_claim).
// Checkpoint directories are DIR/step_N; a committed one holds the file `complete`. Process 0
// prints the loop's error and "committed N" for the newest committed iteration, and every process
// exits 0 when the loop returned (no process left waiting in a collective).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/registry.hpp"
#include "harness/comm/comm.hpp"
#include "harness/engine/training_loop.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/plan/training_state.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ckpt::harness;

// Two modeled ranks of this process, four shards each, one file per rank under `dir`.
std::vector<RankPlan> plans_of(int process, const fs::path& dir) {
  constexpr std::uint64_t kBytes = 1 << 16;
  std::vector<RankPlan> plans;
  for (std::int64_t r = 2 * process; r < 2 * process + 2; ++r) {
    RankPlan p;
    p.rank = r;
    p.buffer_bytes = p.payload_bytes = kBytes;
    for (std::uint64_t s = 0; s < 4; ++s) {
      PlacedShard ps;
      ps.shard.name = "t" + std::to_string(s);
      ps.rank = r;
      ps.file = "rank" + std::to_string(r);
      ps.file_offset = ps.memory_offset = s * kBytes / 4;
      ps.bytes = kBytes / 4;
      ps.data_key = 1000 * static_cast<std::uint64_t>(r) + s;
      p.shards.push_back(ps);
    }
    p.io.files.push_back(
        {.path = (dir / ("rank" + std::to_string(r))).string(), .extents = {{0, 0, kBytes}}});
    plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ckpt_training_throw DIR sync|async\n");
    return 2;
  }
  const fs::path root = argv[1];
  const std::unique_ptr<Comm> comm = make_comm(true, false);
  try {
    const std::unique_ptr<ckpt::backends::Backend> backend =
        ckpt::backends::make_backend("posix", {});
    const std::unique_ptr<MemorySpace> space = make_host_space();
    std::vector<RankPlan> plans = plans_of(comm->rank(), root / "planned");
    ProcessBuffer state(plans, *space);
    fill_plans(plans, state, DataPattern::random);
    TrainingIo io{.comm = *comm,
                  .backend = *backend,
                  .plans = plans,
                  .planned_dir = root / "planned",
                  .state = state,
                  .pattern = DataPattern::random,
                  .claim_dir =
                      [&](std::int64_t iteration, fs::path& dir) {
                        dir = root / ("step_" + std::to_string(iteration));
                        if (comm->rank() == 0) fs::create_directories(dir);
                        comm->barrier();
                        return std::string();
                      },
                  .commit =
                      [&](const fs::path& dir, std::int64_t, const Checksums&) {
                        if (comm->rank() == 0) std::ofstream(dir / "complete") << "complete\n";
                        return comm->broadcast("");
                      },
                  .discard =
                      [&](const fs::path& dir) {
                        comm->barrier();
                        if (comm->rank() == 0) fs::remove_all(dir);
                        return comm->broadcast("removed " + dir.string());
                      }};
    const EngineSpec engine{.kind = std::string(argv[2]) == "async" ? EngineKind::async
                                                                    : EngineKind::sync};
    TrainingSpec training;
    training.iterations = 3;
    training.iteration_seconds = 0.01;
    training.checkpoint_every = 1;
    const TrainingSummary summary =
        run_training(training, engine, io, {.throw_after_claim = 1, .throw_process = 1});
    if (comm->rank() == 0)
      std::printf("error: %s\ncommitted %lld\n", summary.error.c_str(),
                  static_cast<long long>(summary.committed_iteration));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "process %d: %s\n", comm->rank(), e.what());
    return 3;
  }
  return 0;
}
