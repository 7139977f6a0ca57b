// campaign.mpi_io: the names, and how a choice becomes Open MPI's io selection (OMPI_MCA_io)
// before MPI starts — set when the environment has none, kept when it agrees, refused when not.
// (That the selection takes effect is checked end to end by
// CollectiveRun.MpiIoChoiceSelectsTheModule.)
#include "harness/comm/mpi_io_choice.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace ckpt::harness {
namespace {

// Sets or clears OMPI_MCA_io for one test and puts the old value back.
class SelectionVariable {
 public:
  explicit SelectionVariable(const char* value) {
    if (const char* old = std::getenv("OMPI_MCA_io")) old_ = old;
    set(value);
  }
  ~SelectionVariable() { set(old_ ? old_->c_str() : nullptr); }
  static std::optional<std::string> now() {
    const char* value = std::getenv("OMPI_MCA_io");
    return value ? std::optional<std::string>(value) : std::nullopt;
  }

 private:
  static void set(const char* value) {
    if (value) {
      ::setenv("OMPI_MCA_io", value, 1);
    } else {
      ::unsetenv("OMPI_MCA_io");
    }
  }
  std::optional<std::string> old_;
};

bool open_mpi_build() {
  const SelectionVariable clear(nullptr);
  const auto problem = request_mpi_io(MpiIoChoice::ompio);
  return !problem || problem->find("needs Open MPI") == std::string::npos;
}

TEST(MpiIoChoice, NamesRoundTrip) {
  for (const char* name : {"default", "romio", "ompio"}) {
    const auto choice = mpi_io_choice_named(name);
    ASSERT_TRUE(choice) << name;
    EXPECT_EQ(mpi_io_choice_name(*choice), name);
  }
  EXPECT_FALSE(mpi_io_choice_named("romio321"));
}

TEST(MpiIoChoice, DefaultLeavesTheEnvironmentAlone) {
  const SelectionVariable clear(nullptr);
  EXPECT_FALSE(request_mpi_io(MpiIoChoice::library_default));
  EXPECT_FALSE(SelectionVariable::now());
}

TEST(MpiIoChoice, OpenMpiGetsTheSelection) {
  if (!open_mpi_build()) GTEST_SKIP() << "this build's MPI is not Open MPI (or there is none)";
  {
    const SelectionVariable clear(nullptr);
    EXPECT_FALSE(request_mpi_io(MpiIoChoice::romio));
    EXPECT_EQ(SelectionVariable::now(), "^ompio");  // whichever ROMIO this Open MPI has
  }
  {
    const SelectionVariable clear(nullptr);
    EXPECT_FALSE(request_mpi_io(MpiIoChoice::ompio));
    EXPECT_EQ(SelectionVariable::now(), "ompio");
  }
}

TEST(MpiIoChoice, TheUsersSelectionIsKeptWhenItAgreesAndRefusedWhenNot) {
  if (!open_mpi_build()) GTEST_SKIP() << "this build's MPI is not Open MPI (or there is none)";
  for (const char* agreeing : {"romio321", "^ompio"}) {
    const SelectionVariable user(agreeing);
    EXPECT_FALSE(request_mpi_io(MpiIoChoice::romio)) << agreeing;
    EXPECT_EQ(SelectionVariable::now(), agreeing);
  }
  {
    const SelectionVariable user("^romio321");
    EXPECT_FALSE(request_mpi_io(MpiIoChoice::ompio));
  }
  const SelectionVariable user("ompio");
  const auto problem = request_mpi_io(MpiIoChoice::romio);
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem,
            "campaign.mpi_io = \"romio\" but the environment selects OMPI_MCA_io=ompio (mpirun "
            "--mca io ompio); drop "
            "one of them, or make them agree");
  EXPECT_EQ(SelectionVariable::now(), "ompio");
  const SelectionVariable romio_user("^ompio");
  EXPECT_TRUE(request_mpi_io(MpiIoChoice::ompio));
}

}  // namespace
}  // namespace ckpt::harness
