// The loader reads through the storage backends: every backend of this build that streams and
// stores data (posix, uring, skeleton, ...) serves every load method it can (mmap where it declares
// Capabilities::mmap, O_DIRECT where it has direct_io) with the same bytes in place and the same
// reads counted; null reads nothing; and a backend that cannot serve a method is refused by name
// before any I/O.
#include "harness/load/load_storage.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "harness/load/chunk_packing.hpp"
#include "harness/load/weight_loader.hpp"
#include "harness/memory/host_space.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

// Two files of odd sizes, each byte a function of its offset and file.
class LoadStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::uint64_t size : {std::uint64_t{10000}, std::uint64_t{300001}}) {
      std::string bytes(size, '\0');
      for (std::uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 37 + size) % 253);
      paths_.push_back(dir_.write("f" + std::to_string(paths_.size()), bytes).string());
      contents_.push_back(std::move(bytes));
    }
    // Unaligned ranges out of file order, two running to their file's unaligned end (under
    // O_DIRECT their last block reads short: FilePlan::data_end).
    // file (0: paths_[1], 1: paths_[0]), file offset, destination offset, length
    ranges_ = {.files = {paths_[1], paths_[0]},
               .ranges = {{0, 5, 200000, 70001},
                          {0, 300000, 7, 1},
                          {1, 1, 100000, 9999},
                          {0, 100003, 300000, 100000}}};
  }
  // Loads ranges_ through `storage` with `settings`: every range's bytes at its place, `reads`
  // reads.
  void expect_loaded(const LoadStorage& storage, const LoadSettings& settings,
                     std::uint64_t reads) {
    const std::unique_ptr<Buffer> buffer = host_->allocate(destination_bytes(ranges_));
    const LoadTiming t = load_files(ranges_, *buffer, settings, *host_, storage);
    const std::string label = storage.backend + " " +
                              std::string(load_method_name(settings.method)) +
                              (settings.direct ? " (O_DIRECT)" : "");
    EXPECT_EQ(t.bytes, 70001u + 1u + 9999u + 100000u) << label;
    EXPECT_EQ(t.reads, reads) << label;
    for (const ByteRange& r : ranges_.ranges) {
      const std::string& whole = r.file == 1 ? contents_[0] : contents_[1];
      EXPECT_EQ(std::memcmp(buffer->view().data + r.memory_offset, whole.data() + r.file_offset,
                            r.length),
                0)
          << label << ": range at file offset " << r.file_offset;
    }
  }
  bool direct_io_works() const {
    const int fd = ::open(paths_[0].c_str(), O_RDONLY | O_DIRECT);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  }

  test_support::TempDir dir_;
  std::unique_ptr<MemorySpace> host_ = make_host_space();
  std::vector<std::string> paths_, contents_;
  FileRanges ranges_;
};

TEST_F(LoadStorageTest, EveryStreamingBackendServesEachMethodItCan) {
  const LoadSettings pipelined{.threads = 3, .chunk_bytes = 16384, .pool_bytes = 65536};
  const LoadSettings direct{.threads = 2, .direct = true, .chunk_bytes = 8192, .pool_bytes = 40960};
  std::set<std::string> served;
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (!b.available || b.capabilities.collective || !b.capabilities.stores_data) continue;
    if (b.capabilities.object_store) continue;  // keeps no files here; it needs its server
    served.insert(b.name);
    const LoadStorage storage{.backend = b.name};
    expect_loaded(storage, {.method = LoadMethod::read}, 4);  // one a range
    expect_loaded(storage, pipelined, pack_chunks(ranges_, 16384, false).reads.size());
    if (b.capabilities.mmap) expect_loaded(storage, {.method = LoadMethod::mmap}, 0);
    if (b.capabilities.direct_io && direct_io_works()) {
      expect_loaded(storage, direct, pack_chunks(ranges_, 8192, true).reads.size());
    }
  }
  // The template for new backends loads a checkpoint by implementing the one contract.
  EXPECT_TRUE(served.contains("posix") && served.contains("skeleton"))
      << served.size() << " backends served";
}

TEST_F(LoadStorageTest, NullBackendReadsNothingAndCountsTheSameReads) {
  const LoadStorage null{.backend = "null"};
  for (const LoadSettings& s :
       {LoadSettings{.method = LoadMethod::read},
        LoadSettings{.threads = 2, .chunk_bytes = 16384, .pool_bytes = 32768}}) {
    const std::unique_ptr<Buffer> buffer = host_->allocate(destination_bytes(ranges_));
    buffer->zero();
    const LoadTiming t = load_files(ranges_, *buffer, s, *host_, null);
    EXPECT_EQ(t.reads,
              s.method == LoadMethod::read ? 4u : pack_chunks(ranges_, 16384, false).reads.size());
    const std::vector<std::byte> zeros(buffer->size());
    EXPECT_EQ(std::memcmp(buffer->view().data, zeros.data(), zeros.size()), 0)
        << load_method_name(s.method);
  }
}

TEST_F(LoadStorageTest, BackendsThatCannotServeAMethodAreRefusedByName) {
  const backends::Capabilities file{.direct_io = true, .threads = true, .mmap = true};
  EXPECT_FALSE(load_backend_problem("posix", file, {.method = LoadMethod::mmap}).has_value());
  EXPECT_FALSE(load_backend_problem("posix", file, {.direct = true}).has_value());
  // Without mmap, direct I/O or streaming, the campaign's keys and the command's options are named.
  const auto problem = [](std::string_view backend, const backends::Capabilities& caps,
                          const LoadSettings& s, const LoadSettingNames& names = {}) {
    const std::optional<std::string> p = load_backend_problem(backend, caps, s, names);
    return p.value_or("accepted");
  };
  const std::string mmap = problem("null", {.direct_io = true}, {.method = LoadMethod::mmap});
  EXPECT_TRUE(mmap.starts_with(
      "backend.name = \"null\" cannot serve load.method = \"mmap\": it maps no files "
      "(capabilities: mmap = false); choose load.method = \"pipelined\" or load.method = "
      "\"read\", or a backend that maps files: posix"))
      << mmap;
  EXPECT_EQ(mmap.find("null", 20), std::string::npos) << mmap;  // null is not among those that map
  const std::string direct = problem("skeleton", {}, {.direct = true}, kLoadCommandNames);
  EXPECT_TRUE(direct.starts_with(
      "--backend skeleton cannot serve --method pipelined with --direct: it has no "
      "O_DIRECT (capabilities: direct_io = false); leave O_DIRECT off, or choose a backend "
      "that has it: posix"))
      << direct;
  // A collective backend serves the read method (one call with the process's ranges) only.
  EXPECT_EQ(problem("mpiio", {.collective = true}, {.method = LoadMethod::read}), "accepted");
  const std::string collective = problem("mpiio", {.collective = true}, {});
  EXPECT_TRUE(collective.starts_with(
      "backend.name = \"mpiio\" cannot serve load.method = \"pipelined\": a collective "
      "backend reads each process's whole plan in one call that every process makes together, "
      "and pipelined streams byte ranges file by file; choose load.method = \"read\" (one "
      "collective read of each process's ranges), or a backend that streams: posix"))
      << collective;
  // A backend of its own file format (hdf5) reads the dataset pieces the planner makes of its
  // checkpoints, as a collective backend: by the read method only.
  EXPECT_EQ(load_backend_problem("hdf5", {.collective = true, .raw_layout = false},
                                 {.method = LoadMethod::read}, kLoadCommandNames),
            std::nullopt);
  const std::string format = problem("hdf5", {.collective = true, .raw_layout = false},
                                     {.method = LoadMethod::pipelined}, kLoadCommandNames);
  EXPECT_TRUE(
      format.starts_with("--backend hdf5 cannot serve --method pipelined: a collective "
                         "backend reads each process's whole plan in one call"))
      << format;
}

}  // namespace
}  // namespace ckpt::harness
