// IOR's aggregate time: latest end − earliest start over the processes, not the
// slowest process's own duration.
#include <gtest/gtest.h>

#include <vector>

#include "harness/comm/single_comm.hpp"
#include "harness/exec/iteration.hpp"

namespace ckpt::harness {
namespace {

TEST(AggregateTime, IsLatestEndMinusEarliestStartWhenProcessesLeaveTheBarrierApart) {
  // Process 1 leaves the barrier 0.5 s late and ends at 1002.25: the checkpoint took 2.25 s,
  // though no process's own window is longer than 2 s.
  const std::vector<ProcessWindow> windows{{1000.0, 2.0}, {1000.5, 1.75}, {1000.25, 1.5}};
  EXPECT_EQ(aggregate_seconds(windows), 2.25);
}

TEST(AggregateTime, OneProcessGivesExactlyItsOwnDuration) {
  EXPECT_EQ(aggregate_seconds({{1'764'612'345.123, 1.234567}}), 1.234567);
  EXPECT_EQ(aggregate_seconds({{1'764'612'345.123, 0.75}, {1'764'612'345.123, 0.5}}), 0.75);
}

TEST(AggregateTime, WindowsWithoutAStartFallBackToTheSlowestDuration) {
  EXPECT_EQ(aggregate_seconds({{0, 2.0}, {1000.0, 3.0}}), 3.0);
  EXPECT_EQ(aggregate_seconds({}), 0.0);
}

TEST(AggregateTime, GatherTimingOfOneProcessKeepsItsSecondsAndPhases) {
  ProcessSample mine;
  mine.seconds = 1.5;
  mine.start_wall = 1'764'612'345.5;
  mine.phases = {0.25, 1.0, 0.125, 0.125};
  SingleComm comm;
  const IterationTiming timing = gather_timing(mine, comm);
  EXPECT_EQ(timing.seconds, 1.5);
  EXPECT_EQ(timing.phases.transfer, 1.0);
  EXPECT_EQ(timing.process_seconds.max, 1.5);
}

}  // namespace
}  // namespace ckpt::harness
