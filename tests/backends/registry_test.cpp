#include "backends/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

using test_support::contains;

BackendInfo find(const std::string& name) {
  const std::vector<BackendInfo> all = list_backends();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const BackendInfo& b) { return b.name == name; });
  if (it == all.end()) throw std::runtime_error("no backend " + name + " in the list");
  return *it;
}

// The message of the std::invalid_argument make_backend throws, or "" when it does not throw.
std::string make_error(const std::string& name, IoSettings settings = {}) {
  try {
    make_backend(name, settings);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Registry, ListsEveryBackendInAFixedOrder) {
  std::vector<std::string> names;
  for (const BackendInfo& b : list_backends()) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"posix", "uring", "mpiio", "hdf5", "gds", "s3", "null",
                                             "skeleton"}));
}

TEST(Registry, EveryEntryNamesItsOptionAndDescription) {
  for (const BackendInfo& b : list_backends()) {
    std::string option = "CKPT_BACKEND_";
    for (const char c : b.name)
      option += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(b.cmake_option, option) << b.name;
    EXPECT_FALSE(b.description.empty()) << b.name;
    EXPECT_EQ(b.reason.empty(), b.available) << b.name << ": a reason exactly when unavailable";
  }
}

TEST(Registry, PosixAndNullFollowTheirOptions) {
  EXPECT_EQ(find("posix").available, bool{CKPT_EXPECT_BACKEND_POSIX});
  EXPECT_EQ(find("null").available, bool{CKPT_EXPECT_BACKEND_NULL});
  if (!CKPT_EXPECT_BACKEND_POSIX) {
    EXPECT_EQ(find("posix").reason, "disabled at configure time (CKPT_BACKEND_POSIX=OFF)");
  }
}

TEST(Registry, Hdf5FollowsItsOptionAndListsItsOptions) {
  const BackendInfo hdf5 = find("hdf5");
  EXPECT_EQ(hdf5.available, bool{CKPT_EXPECT_BACKEND_HDF5});
  if (!hdf5.available) {
    EXPECT_TRUE(contains(hdf5.reason, "CKPT_BACKEND_HDF5=OFF") ||
                contains(hdf5.reason, "libhdf5-openmpi-dev") || contains(hdf5.reason, "MPI"))
        << hdf5.reason;
  }
  EXPECT_TRUE(hdf5.needs_mpi);
  std::vector<std::string> keys;
  for (const OptionSpec& option : hdf5.options) keys.push_back(option.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"collective", "collective_opt", "layout", "shapes",
                                            "alignment", "alignment_threshold",
                                            "collective_metadata", "hints"}));
  EXPECT_EQ(hdf5.options[0].default_value, "true");
  EXPECT_EQ(hdf5.options[1].default_value, "collective_io");
  EXPECT_EQ(hdf5.options[2].default_value, "contiguous");
  EXPECT_EQ(find("uring").cmake_option, "CKPT_BACKEND_URING");
}

TEST(Registry, UringFollowsItsOption) {
  const BackendInfo uring = find("uring");
  EXPECT_EQ(uring.available, bool{CKPT_EXPECT_BACKEND_URING});
  if (!uring.available) {
    EXPECT_TRUE(contains(uring.reason, "CKPT_BACKEND_URING=OFF") ||
                contains(uring.reason, "liburing"))
        << uring.reason;
  }
}

TEST(Registry, MpiioFollowsItsOptionAndListsItsOptions) {
  const BackendInfo mpiio = find("mpiio");
  EXPECT_EQ(mpiio.available, bool{CKPT_EXPECT_BACKEND_MPIIO});
  if (!mpiio.available) {
    EXPECT_TRUE(contains(mpiio.reason, "CKPT_BACKEND_MPIIO=OFF") || contains(mpiio.reason, "MPI"))
        << mpiio.reason;
  }
  EXPECT_TRUE(mpiio.needs_mpi);
  std::vector<std::string> keys;
  for (const OptionSpec& option : mpiio.options) keys.push_back(option.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"collective", "hints"}));
  EXPECT_EQ(mpiio.options[0].default_value, "false");
}

TEST(Registry, MakesTheAvailableBackends) {
  for (const BackendInfo& b : list_backends()) {
    // An object store needs its endpoint and a server: its own suite makes it against one.
    if (!b.available || b.capabilities.object_store) continue;
    const auto backend = make_backend(b.name, {});
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->name(), b.name);
  }
}

TEST(Registry, MisspelledNameSuggestsTheClosest) {
  const std::string message = make_error("posx");
  EXPECT_TRUE(contains(message, "unknown backend `posx`")) << message;
  EXPECT_TRUE(contains(message, "did you mean `posix`?")) << message;
  EXPECT_TRUE(contains(make_error("nul"), "did you mean `null`?")) << make_error("nul");
  EXPECT_TRUE(contains(make_error("hfd5"), "did you mean `hdf5`?")) << make_error("hfd5");
}

TEST(Registry, UnrelatedNameSuggestsNothingButListsTheBackends) {
  const std::string message = make_error("lustre-magic");
  EXPECT_TRUE(contains(message, "unknown backend `lustre-magic`")) << message;
  EXPECT_FALSE(contains(message, "did you mean")) << message;
  EXPECT_TRUE(contains(message, "posix uring mpiio hdf5 gds s3 null skeleton")) << message;
}

TEST(Registry, UnbuiltBackendExplainsWhyAndHow) {
  for (const BackendInfo& b : list_backends()) {
    if (b.available) continue;
    const std::string message = make_error(b.name);
    EXPECT_TRUE(contains(message, "`" + b.name + "` is not available")) << message;
    EXPECT_TRUE(contains(message, b.reason)) << message;
    EXPECT_TRUE(contains(message, b.cmake_option)) << message;
  }
}

TEST(Registry, BadSettingsAreRejectedByTheBackend) {
  if (!CKPT_EXPECT_BACKEND_POSIX) GTEST_SKIP() << "posix is not compiled in";
  EXPECT_EQ(make_error("posix", IoSettings{.threads = 0}),
            "posix: `backend.threads` must be at least 1 (got 0)");
  EXPECT_EQ(make_error("posix", IoSettings{.queue_depth = 8}),
            "posix: `backend.queue_depth` must be from 1 to 1 (got 8): posix issues one request at "
            "a time per "
            "thread; use `threads`, or the uring backend for deeper queues");
  EXPECT_TRUE(contains(make_error("posix", IoSettings{.direct = true, .direct_alignment = 3000}),
                       "`direct_alignment`"));
  EXPECT_EQ(make_error("posix", IoSettings{.direct = true, .direct_alignment = 512}), "");
}

}  // namespace
}  // namespace ckpt::backends
