// The weight loaders: every method puts every byte of every file in place (the pipelined one
// through a pool far smaller than the files, with several reader threads: run under TSan by
// ci/sanitizers.sh, whose filter matches *Worker*), and bad settings are refused by name.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "harness/load/weight_loader.hpp"
#include "harness/memory/host_space.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

class LoadWorkers : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::pair<std::string, std::uint64_t>> sized;
    for (const std::uint64_t size : {std::uint64_t{1}, std::uint64_t{10000}, std::uint64_t{(3u << 20) + 5}, std::uint64_t{0}}) {
      std::string bytes(size, '\0');
      for (std::uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + size) % 251);
      const std::string name = "f" + std::to_string(sized.size());
      sized.emplace_back(dir_.write(name, bytes).string(), size);
      contents_.push_back(std::move(bytes));
    }
    files_ = place_files(sized);
  }
  // Loads with `settings` and checks every file's bytes at its place.
  void expect_loaded(const LoadSettings& settings) {
    const std::unique_ptr<Buffer> buffer = host_.allocate(destination_bytes(files_));
    const LoadTiming t = load_files(files_, *buffer, settings, host_);
    const std::byte* memory = buffer->view().data;
    EXPECT_EQ(t.bytes, 1u + 10000u + (3u << 20) + 5u);
    for (std::size_t i = 0; i < files_.size(); ++i) {
      EXPECT_EQ(std::memcmp(memory + files_[i].destination_offset, contents_[i].data(), contents_[i].size()), 0)
          << load_method_name(settings.method) << " file " << i;
    }
  }
  bool direct_io_works() const {
    const int fd = ::open(files_[2].path.c_str(), O_RDONLY | O_DIRECT);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  }

  test_support::TempDir dir_;
  std::unique_ptr<MemorySpace> space_ = make_host_space();
  MemorySpace& host_ = *space_;
  std::vector<std::string> contents_;
  std::vector<LoadFile> files_;
};

TEST_F(LoadWorkers, FilesArePlacedOnPageBoundaries) {
  ASSERT_EQ(files_.size(), 4u);
  EXPECT_EQ(files_[0].destination_offset, 0u);
  EXPECT_EQ(files_[1].destination_offset, 4096u);
  EXPECT_EQ(files_[2].destination_offset, 16384u);
  EXPECT_EQ(files_[3].destination_offset, 16384u + (3u << 20) + 4096u);
  EXPECT_EQ(destination_bytes(files_), files_[3].destination_offset);
}

TEST_F(LoadWorkers, ReadAndMmapLoadEveryByte) {
  expect_loaded({.method = LoadMethod::read});
  expect_loaded({.method = LoadMethod::mmap});
}

TEST_F(LoadWorkers, PipelinedThreadsThroughASmallPoolLoadEveryByte) {
  // 64 KiB chunks, a pool of 4 of them, 3 readers: 50 chunks of the big file wait for slots.
  expect_loaded({.method = LoadMethod::pipelined, .threads = 3, .chunk_bytes = 64 << 10, .pool_bytes = 256 << 10});
  expect_loaded({.method = LoadMethod::pipelined, .threads = 1, .chunk_bytes = 4096, .pool_bytes = 4096});
}

TEST_F(LoadWorkers, PipelinedDirectReadsLoadEveryByte) {
  if (!direct_io_works()) GTEST_SKIP() << "the temp directory's file system refuses O_DIRECT";
  expect_loaded({.method = LoadMethod::pipelined, .threads = 4, .direct = true, .chunk_bytes = 1 << 20, .pool_bytes = 2 << 20});
}

// Byte ranges of files (the load phase's planned slices): unaligned offsets and lengths, two
// files interleaved, placed out of file order; every method (pipelined also with O_DIRECT, whose
// reads start at the block below) puts exactly those bytes at their places.
TEST_F(LoadWorkers, RangesAtUnalignedOffsetsLoadExactlyByEachMethod) {
  const std::string& big = files_[2].path;
  const std::string& small = files_[1].path;
  const std::vector<LoadFile> ranges{{.path = big, .size = 70001, .destination_offset = 300000, .file_offset = 5},
                                     {.path = big, .size = 3, .destination_offset = 7, .file_offset = 3u << 20},
                                     {.path = small, .size = 9999, .destination_offset = 100000, .file_offset = 1},
                                     {.path = big, .size = 200000, .destination_offset = 500000, .file_offset = 1000003}};
  EXPECT_EQ(destination_bytes(ranges), 700416u);  // 700000 rounded up to 4096
  std::vector<LoadSettings> settings{{.method = LoadMethod::read},
                                     {.method = LoadMethod::mmap},
                                     {.method = LoadMethod::pipelined, .threads = 3, .chunk_bytes = 16384, .pool_bytes = 65536}};
  if (direct_io_works()) {
    settings.push_back({.method = LoadMethod::pipelined, .threads = 2, .direct = true, .chunk_bytes = 8192, .pool_bytes = 40960});
  }
  for (const LoadSettings& s : settings) {
    const std::unique_ptr<Buffer> buffer = host_.allocate(destination_bytes(ranges));
    const LoadTiming t = load_files(ranges, *buffer, s, host_);
    EXPECT_EQ(t.bytes, 70001u + 3u + 9999u + 200000u);
    const std::byte* memory = buffer->view().data;
    for (const LoadFile& r : ranges) {
      const std::string& whole = r.path == big ? contents_[2] : contents_[1];
      EXPECT_EQ(std::memcmp(memory + r.destination_offset, whole.data() + r.file_offset, r.size), 0)
          << load_method_name(s.method) << (s.direct ? " (O_DIRECT)" : "") << " range at file offset " << r.file_offset;
    }
  }
  // A range past the end of its file is an I/O error naming the file, by every method.
  const std::vector<LoadFile> beyond{{.path = small, .size = 10, .destination_offset = 0, .file_offset = 9995}};
  for (const LoadSettings& s : settings) {
    const std::unique_ptr<Buffer> buffer = host_.allocate(4096);
    try {
      load_files(beyond, *buffer, s, host_);
      ADD_FAILURE() << load_method_name(s.method) << " loaded a range past the end";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(small), std::string::npos) << e.what();
    }
  }
}

TEST_F(LoadWorkers, RefusesBadSettingsAndNamesAMissingFile) {
  const std::unique_ptr<Buffer> memory = host_.allocate(destination_bytes(files_));
  EXPECT_THROW(load_files(files_, *memory, {.threads = 0}, host_), std::invalid_argument);
  try {
    load_files(files_, *memory, {.chunk_bytes = 1000}, host_);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("load.chunk_bytes = 1000 must be a positive multiple of 4096"), std::string::npos);
  }
  try {
    load_files(files_, *memory, {.chunk_bytes = 8192, .pool_bytes = 4096}, host_);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("load.pool_bytes = 4096 must hold at least one chunk"), std::string::npos);
  }
  std::vector<LoadFile> missing{{(dir_.path() / "gone").string(), 10, 0}};
  for (LoadMethod m : {LoadMethod::pipelined, LoadMethod::mmap, LoadMethod::read}) {
    try {
      load_files(missing, *memory, {.method = m}, host_);
      FAIL() << load_method_name(m);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("load: open " + missing[0].path + " at offset 0: No such file"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ckpt::harness
