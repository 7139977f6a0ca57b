// The gds backend. Without libcufile or a GPU (this machine kind) the checks of the registry
// entry, options, library loading, mode description and request cutting run, and the round trips
// skip with the reason; with the nvidia-cufile wheel's library (CKPT_CUFILE_LIBRARY) and a GPU
// (ci/device-check.sh) the round trips move real device memory through cuFile.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_test_support.hpp"
#include "backends/gds/cufile_driver.hpp"
#include "backends/gds/cufile_io.hpp"
#include "backends/gds/gds_backend.hpp"
#include "backends/gds/shared_library.hpp"
#include "backends/registry.hpp"

namespace ckpt::backends::gds {
namespace {

using test_support::Buffer;
using test_support::contains;
using test_support::kBlock;
using test_support::TempDir;

// Sets (or, with nullptr, clears) an environment variable for one scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

BackendInfo gds_info() {
  for (const BackendInfo& info : list_backends()) {
    if (info.name == "gds") return info;
  }
  throw std::runtime_error("gds is not in the registry");
}

std::string make_error(const BackendOptions& options, IoSettings settings = {}) {
  try {
    make_backend("gds", settings, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool default_library_loads() {
  std::string ignored;
  return SharedLibrary::open(kDefaultLibrary, ignored).is_open() ||
         SharedLibrary::open("libcufile.so", ignored).is_open();
}

TEST(GdsRegistry, ListsItsOptionsAndCmakeOption) {
  const BackendInfo info = gds_info();
  EXPECT_EQ(info.cmake_option, "CKPT_BACKEND_GDS");
  std::vector<std::string> keys;
  for (const OptionSpec& option : info.options) keys.push_back(option.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"library", "register_buffers", "batch"}));
  EXPECT_EQ(info.options.front().default_value, "libcufile.so.0");
}

TEST(GdsRegistry, WithoutTheLibraryItIsUnavailableAndSaysHowToGetIt) {
  const ScopedEnv unset(kLibraryVariable, nullptr);
  if (default_library_loads())
    GTEST_SKIP()
        << "libcufile is on the dynamic loader's path here, or already loaded by this process";
  const BackendInfo info = gds_info();
  EXPECT_FALSE(info.available);
  EXPECT_TRUE(
      info.reason.starts_with("libcufile.so.0 not found (install the nvidia-cufile wheel or set "
                              "backend.gds.library"))
      << info.reason;
  const std::string message = make_error({});
  EXPECT_TRUE(
      contains(message, "backend `gds` is not available on this machine: libcufile.so.0 not found"))
      << message;
  EXPECT_TRUE(contains(message, "CKPT_BACKEND_GDS")) << message;
}

TEST(GdsRegistry, TheEnvironmentVariableNamesTheLibrary) {
  const ScopedEnv set(kLibraryVariable, "/nonexistent/ckpt/libcufile.so.0");
  const BackendInfo info = gds_info();
  EXPECT_FALSE(info.available);
  EXPECT_TRUE(contains(info.reason,
                       "cannot load CKPT_CUFILE_LIBRARY = \"/nonexistent/ckpt/libcufile.so.0\""))
      << info.reason;
}

TEST(GdsRegistry, ABogusLibraryPathIsNamed) {
  const std::string message = make_error({{"library", "/no/such/dir/libcufile.so.0"}});
  EXPECT_TRUE(contains(message, "`gds` is not available on this machine")) << message;
  EXPECT_TRUE(contains(message, "backend.gds.library = \"/no/such/dir/libcufile.so.0\""))
      << message;
  EXPECT_TRUE(contains(message, "No such file")) << message;
}

TEST(GdsRegistry, ALibraryWithoutCufileIsRefused) {
  // A real library that is not cuFile: it loads, but has no cuFile functions.
  const std::string message = make_error({{"library", "libm.so.6"}});
  EXPECT_TRUE(contains(message, "is not a usable cuFile library: it lacks cuFileDriverOpen"))
      << message;
}

TEST(GdsRegistry, AMisspelledOptionSuggestsTheKey) {
  const std::string message = make_error({{"batchh", "true"}});
  EXPECT_TRUE(contains(message, "gds: unknown option `backend.gds.batchh` — did you mean `batch`?"))
      << message;
}

TEST(GdsOptions, ParsesTheThreeKeys) {
  const GdsOptions defaults = parse_options({});
  EXPECT_EQ(defaults.library, "libcufile.so.0");
  EXPECT_TRUE(defaults.register_buffers);
  EXPECT_FALSE(defaults.batch);
  const GdsOptions set = parse_options(
      {{"library", "/opt/x/libcufile.so.0"}, {"register_buffers", "false"}, {"batch", "true"}});
  EXPECT_EQ(set.library, "/opt/x/libcufile.so.0");
  EXPECT_FALSE(set.register_buffers);
  EXPECT_TRUE(set.batch);
}

TEST(GdsOptions, RejectsBadValuesNamingTheKey) {
  EXPECT_THROW(
      {
        try {
          parse_options({{"batch", "yes"}});
        } catch (const std::invalid_argument& e) {
          EXPECT_EQ(std::string(e.what()),
                    "gds: `backend.gds.batch` = \"yes\": expected true or false");
          throw;
        }
      },
      std::invalid_argument);
  EXPECT_THROW(parse_options({{"library", ""}}), std::invalid_argument);
  EXPECT_THROW(parse_options({{"queue", "4"}}), std::invalid_argument);
}

// Settings are checked (against the declared capabilities) before any library is loaded, so
// these hold on any machine.
std::string validation_error(const IoSettings& settings, const BackendOptions& options = {}) {
  try {
    validate_backend("gds", settings, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string construction_error(const IoSettings& settings, const GdsOptions& options) {
  try {
    GdsBackend backend(settings, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GdsSettings, RefusedBeforeAnyLibraryIsLoaded) {
  const ScopedEnv missing_library(kLibraryVariable, "/nonexistent/ckpt/libcufile.so.0");
  EXPECT_EQ(
      validation_error(IoSettings{.queue_depth = 4}),
      "gds: `backend.queue_depth` must be from 1 to 1 (got 4): without backend.gds.batch = true "
      "cuFileRead/cuFileWrite move one request at a time; use `threads`, or the batch API");
  EXPECT_EQ(validation_error(IoSettings{.threads = 0}),
            "gds: `backend.threads` must be at least 1 (got 0)");
  EXPECT_TRUE(contains(validation_error(IoSettings{.sqpoll = true}),
                       "gds: `backend.sqpoll` is not supported"));
  EXPECT_TRUE(contains(validation_error(IoSettings{.queue_depth = 129}, {{"batch", "true"}}),
                       "must be from 1 to 128 (got 129)"));
  EXPECT_TRUE(contains(
      construction_error(IoSettings{.direct = true, .direct_alignment = 3000}, parse_options({})),
      "`direct_alignment`"));
  // With batch, a deeper queue passes these checks and meets the library's (here: its absence).
  const ScopedEnv missing(kLibraryVariable, "/nonexistent/ckpt/libcufile.so.0");
  const std::string message =
      construction_error(IoSettings{.queue_depth = 4}, GdsOptions{.batch = true});
  EXPECT_TRUE(message.starts_with("gds: cannot load CKPT_CUFILE_LIBRARY")) << message;
}

TEST(GdsLibraryChoice, OptionThenVariableThenDefaults) {
  {
    const ScopedEnv unset(kLibraryVariable, nullptr);
    const LibraryChoice choice = choose_library("libcufile.so.0");
    EXPECT_EQ(choice.candidates, (std::vector<std::string>{"libcufile.so.0", "libcufile.so"}));
    EXPECT_EQ(choice.origin, "");
  }
  const ScopedEnv set(kLibraryVariable, "/wheel/nvidia/cu13/lib/libcufile.so.0");
  const LibraryChoice from_variable = choose_library("libcufile.so.0");
  EXPECT_EQ(from_variable.candidates,
            (std::vector<std::string>{"/wheel/nvidia/cu13/lib/libcufile.so.0"}));
  EXPECT_EQ(from_variable.origin, "CKPT_CUFILE_LIBRARY");
  const LibraryChoice from_option = choose_library("/opt/cufile/libcufile.so.0");
  EXPECT_EQ(from_option.candidates, (std::vector<std::string>{"/opt/cufile/libcufile.so.0"}));
  EXPECT_EQ(from_option.origin, "backend.gds.library");
}

// The nvidia-cufile wheel's real library (ci/setup.sh installs it into .deps/cufile): every
// function the backend binds is there, so only the driver or the GPU can be missing.
TEST(GdsWheelLibrary, ExportsEveryFunctionTheBackendUses) {
#ifdef CKPT_TEST_CUFILE_LIBRARY
  const std::string path = CKPT_TEST_CUFILE_LIBRARY;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing (run ci/setup.sh)";
  const CufileLibrary library = CufileLibrary::load(LibraryChoice{{path}, "test"});
  EXPECT_TRUE(library.api().has_batch());
  EXPECT_NE(library.api().get_version, nullptr);
  EXPECT_NE(library.api().get_parameter_bool, nullptr);
  EXPECT_EQ(std::filesystem::canonical(library.path()), std::filesystem::canonical(path));
  const std::string reason = unavailable_reason({{"library", path}});
  EXPECT_TRUE(reason.empty() || reason.starts_with("no NVIDIA driver") ||
              reason.starts_with("no CUDA device"))
      << reason;
#else
  GTEST_SKIP() << "no nvidia-cufile wheel library was found at configure time (run ci/setup.sh)";
#endif
}

TEST(GdsMode, CompatibilityWithoutNvidiaFs) {
  const DriverMode mode = describe_mode(std::nullopt, false, std::nullopt);
  EXPECT_TRUE(mode.compatibility);
  EXPECT_EQ(mode.description, "cuFile compatibility mode: nvidia-fs not loaded");
  EXPECT_EQ(mode.max_batch, 0u);
}

TEST(GdsMode, ForcedCompatibilityWinsOverNvidiaFs) {
  const DriverMode mode = describe_mode(std::nullopt, true, true);
  EXPECT_TRUE(mode.compatibility);
  EXPECT_EQ(mode.description,
            "cuFile compatibility mode: forced by configuration (force_compat_mode)");
}

TEST(GdsMode, GpuDirectThroughNvidiaFsWithItsVersion) {
  CUfileDrvProps_t props{};
  props.nvfs.major_version = 2;
  props.nvfs.minor_version = 17;
  props.nvfs.dcontrolflags = 1u << CU_FILE_ALLOW_COMPAT_MODE;
  props.max_batch_io_size = 256;
  const DriverMode mode = describe_mode(props, true, false);
  EXPECT_FALSE(mode.compatibility);
  EXPECT_EQ(mode.description,
            "cuFile GPUDirect Storage through nvidia-fs 2.17 (compatibility mode allowed for files "
            "it cannot serve)");
  EXPECT_EQ(mode.max_batch, 256u);
}

TEST(GdsRequests, LargeRunsAreCutAtOneGibibyte) {
  const std::string path = "f";
  std::vector<Request> requests;
  append_requests(requests, Request{nullptr, &path, 4096, 8192, 2 * kMaxRequest + 12288});
  append_requests(requests, Request{nullptr, &path, 0, 0, 0});
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].file_offset, 4096u);
  EXPECT_EQ(requests[0].length, kMaxRequest);
  EXPECT_EQ(requests[1].file_offset, 4096 + kMaxRequest);
  EXPECT_EQ(requests[1].memory_offset, 8192 + kMaxRequest);
  EXPECT_EQ(requests[2].file_offset, 4096 + 2 * kMaxRequest);
  EXPECT_EQ(requests[2].length, 12288u);
}

// ---- On a GPU with libcufile (ci/device-check.sh): real device memory through cuFile.

// cudaMalloc'd memory, freed by the destructor.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::uint64_t size) : size_(size) {
    if (cudaMalloc(&data_, size) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  MemoryView view() const { return {static_cast<std::byte*>(data_), size_, MemoryKind::device}; }
  void upload(const Buffer& from) const {
    ASSERT_EQ(cudaMemcpy(data_, from.data(), size_, cudaMemcpyHostToDevice), cudaSuccess);
  }
  void download(const Buffer& to) const {
    ASSERT_EQ(cudaMemcpy(to.data(), data_, size_, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  void clear() const { ASSERT_EQ(cudaMemset(data_, 0, size_), cudaSuccess); }

 private:
  void* data_ = nullptr;
  std::uint64_t size_;
};

class GdsDevice : public testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (const cudaError_t error = cudaGetDeviceCount(&devices);
        error != cudaSuccess || devices == 0) {
      GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount returned " << static_cast<int>(error)
                   << " (" << cudaGetErrorString(error) << ")";
    }
    if (const std::string reason = unavailable_reason({}); !reason.empty())
      GTEST_SKIP() << "gds unavailable: " << reason;
  }

  // Two files; unequal, block-aligned extents, one of them larger than a batch group's share.
  IoPlan plan() const {
    IoPlan p;
    p.files.push_back(test_support::file_plan(
        dir_.file("a.distcp"), {{0, 0, 3 * kBlock}, {3 * kBlock, 5 * kBlock, 64 * kBlock}}));
    p.files.push_back(test_support::file_plan(
        dir_.file("b.distcp"), {{0, 3 * kBlock, 2 * kBlock}, {2 * kBlock, 69 * kBlock, kBlock}}));
    return p;
  }

  // Writes from device memory, checks the files, reads back into cleared device memory.
  void round_trip(const IoSettings& settings, const BackendOptions& options) {
    const IoPlan p = plan();
    Buffer source(70 * kBlock);
    source.fill(42);
    DeviceBuffer device(source.size());
    device.upload(source);
    const auto backend = make_backend("gds", settings, options);
    const IoOutcome written = backend->write(p, device.view());
    ASSERT_NO_FATAL_FAILURE(test_support::expect_ok(written, p));
    ASSERT_NO_FATAL_FAILURE(test_support::expect_files_hold(p, source));
    device.clear();
    const IoOutcome read = backend->read(p, device.view());
    ASSERT_NO_FATAL_FAILURE(test_support::expect_ok(read, p));
    const Buffer back(source.size());
    device.download(back);
    const Buffer expected = test_support::expected_memory(p, source);
    test_support::expect_same_bytes(back.data(), expected.data(), source.size(),
                                    "read back into device memory");
    const bool mode_noted =
        std::any_of(read.notes.begin(), read.notes.end(), [](const std::string& n) {
          return n.starts_with("cuFile compatibility mode") ||
                 n.starts_with("cuFile GPUDirect Storage");
        });
    EXPECT_TRUE(mode_noted) << "the notes name the cuFile mode";
    for (const std::string& note : read.notes) std::cout << "[ note ] " << note << '\n';
  }

  TempDir dir_;
};

TEST_F(GdsDevice, RoundTripFromDeviceMemoryWithODirect) {
  round_trip(IoSettings{.direct = true, .sync = SyncPolicy::fsync}, {});
}

TEST_F(GdsDevice, RoundTripBufferedWithoutRegistration) {
  round_trip(IoSettings{.direct = false}, {{"register_buffers", "false"}});
}

TEST_F(GdsDevice, RoundTripBatchedOnTwoThreads) {
  round_trip(IoSettings{.direct = true, .threads = 2, .queue_depth = 8}, {{"batch", "true"}});
}

TEST_F(GdsDevice, HostMemoryGoesThroughCufileWithANote) {
  const IoPlan p = plan();
  Buffer source(70 * kBlock);
  source.fill(7);
  const auto backend = make_backend("gds", IoSettings{.direct = true});
  const IoOutcome written = backend->write(p, source.view());
  ASSERT_NO_FATAL_FAILURE(test_support::expect_ok(written, p));
  ASSERT_NO_FATAL_FAILURE(test_support::expect_files_hold(p, source));
  EXPECT_TRUE(std::any_of(written.notes.begin(), written.notes.end(), [](const std::string& n) {
    return n.starts_with("host memory handed to cuFile");
  }));
  ASSERT_NO_FATAL_FAILURE(test_support::expect_read_back(*backend, p, source));
}

TEST_F(GdsDevice, ADeviceViewOfHostMemoryIsRefused) {
  Buffer host(70 * kBlock);
  const auto backend = make_backend("gds", IoSettings{});
  EXPECT_THROW(
      {
        try {
          backend->write(plan(), host.view(MemoryKind::device));
        } catch (const std::invalid_argument& e) {
          EXPECT_TRUE(contains(e.what(), "is not CUDA device memory")) << e.what();
          throw;
        }
      },
      std::invalid_argument);
}

}  // namespace
}  // namespace ckpt::backends::gds
