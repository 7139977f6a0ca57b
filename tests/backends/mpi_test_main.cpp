// main() for test programs that use MPI backends: MPI_Init_thread before the tests and
// MPI_Finalize after them. Under mpirun only rank 0 prints GoogleTest's report; the other ranks
// print their failures (prefixed with the rank) to stderr, and the exit status is the worst of
// all ranks, so a failure on any rank fails the run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <iostream>
#include <memory>
#include <string>

namespace {

// Reports failed assertions of a rank whose default printer is removed.
class RankFailurePrinter final : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  // Remembered here: asking UnitTest for the current test while it reports a result deadlocks.
  void OnTestStart(const testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cerr << "[rank " << rank_ << "] " << test_ << " failed at "
              << (result.file_name() ? result.file_name() : "?") << ":" << result.line_number()
              << ":\n"
              << result.message() << "\n";
  }

 private:
  int rank_;
  std::string test_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  // The backends call MPI from the thread that calls write/read only.
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::cerr << "MPI_Init_thread failed\n";
    return 2;
  }
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int result = RUN_ALL_TESTS();
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
