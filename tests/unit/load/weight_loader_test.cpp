// The weight loaders: every method puts every byte of every file in place (the pipelined one
// through a pool far smaller than the files, with several reader threads: run under TSan by
// ci/sanitizers.sh, whose filter matches *Worker*), the pipelined one packs small ranges into
// shared chunks with the reads counted exactly, one reader opens each file once and issues exactly
// the packed reads, and bad settings are refused by name.
#include "harness/load/weight_loader.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/load/chunk_packing.hpp"
#include "harness/load/chunk_pipeline.hpp"
#include "harness/memory/host_space.hpp"
#include "tests/unit/memory_test_support.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

class LoadWorkers : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::pair<std::string, std::uint64_t>> sized;
    for (const std::uint64_t size : {std::uint64_t{1}, std::uint64_t{10000},
                                     std::uint64_t{(3u << 20) + 5}, std::uint64_t{0}}) {
      std::string bytes(size, '\0');
      for (std::uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + size) % 251);
      const std::string name = "f" + std::to_string(sized.size());
      sized.emplace_back(dir_.write(name, bytes).string(), size);
      contents_.push_back(std::move(bytes));
    }
    files_ = place_files(sized);
  }
  // Loads with `settings` and checks every file's bytes at its place and the reads issued.
  void expect_loaded(const LoadSettings& settings, std::uint64_t reads) {
    const std::unique_ptr<Buffer> buffer = host_.allocate(destination_bytes(files_));
    const LoadTiming t = load_files(files_, *buffer, settings, host_);
    const std::byte* memory = buffer->view().data;
    EXPECT_EQ(t.bytes, 1u + 10000u + (3u << 20) + 5u);
    EXPECT_EQ(t.reads, reads) << load_method_name(settings.method);
    for (std::size_t i = 0; i < files_.ranges.size(); ++i) {
      EXPECT_EQ(std::memcmp(memory + files_.ranges[i].memory_offset, contents_[i].data(),
                            contents_[i].size()),
                0)
          << load_method_name(settings.method) << " file " << i;
    }
  }
  bool direct_io_works() const {
    const int fd = ::open(files_.files[2].c_str(), O_RDONLY | O_DIRECT);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  }

  test_support::TempDir dir_;
  std::unique_ptr<MemorySpace> space_ = make_host_space();
  MemorySpace& host_ = *space_;
  std::vector<std::string> contents_;
  FileRanges files_;
};

TEST_F(LoadWorkers, FilesArePlacedOnPageBoundaries) {
  ASSERT_EQ(files_.ranges.size(), 4u);
  EXPECT_EQ(files_.ranges[0].memory_offset, 0u);
  EXPECT_EQ(files_.ranges[1].memory_offset, 4096u);
  EXPECT_EQ(files_.ranges[2].memory_offset, 16384u);
  EXPECT_EQ(files_.ranges[3].memory_offset, 16384u + (3u << 20) + 4096u);
  EXPECT_EQ(destination_bytes(files_), files_.ranges[3].memory_offset);
}

TEST_F(LoadWorkers, ReadAndMmapLoadEveryByte) {
  expect_loaded({.method = LoadMethod::read}, 3);  // one per file, none for the empty one
  expect_loaded({.method = LoadMethod::mmap}, 0);
}

TEST_F(LoadWorkers, PipelinedThreadsThroughASmallPoolLoadEveryByte) {
  // 64 KiB chunks, a pool of 4 of them, 3 readers: 50 chunks of the big file wait for slots.
  // Reads: 1 + 1 + 49 (3 MiB + 5 in 64 KiB chunks), then 1 + 3 + 769 in 4 KiB ones.
  expect_loaded({.method = LoadMethod::pipelined,
                 .threads = 3,
                 .chunk_bytes = 64 << 10,
                 .pool_bytes = 256 << 10},
                51);
  expect_loaded(
      {.method = LoadMethod::pipelined, .threads = 1, .chunk_bytes = 4096, .pool_bytes = 4096},
      773);
}

TEST_F(LoadWorkers, PipelinedDirectReadsLoadEveryByte) {
  if (!direct_io_works()) GTEST_SKIP() << "the temp directory's file system refuses O_DIRECT";
  expect_loaded({.method = LoadMethod::pipelined,
                 .threads = 4,
                 .direct = true,
                 .chunk_bytes = 1 << 20,
                 .pool_bytes = 2 << 20},
                1 + 1 + 4);
}

// Byte ranges of files (the load phase's planned slices): unaligned offsets and lengths, two
// files interleaved, placed out of file order; every method (pipelined also with O_DIRECT, whose
// reads start at the block below) puts exactly those bytes at their places.
TEST_F(LoadWorkers, RangesAtUnalignedOffsetsLoadExactlyByEachMethod) {
  const std::string& big = files_.files[2];
  const std::string& small = files_.files[1];
  // file (0: big, 1: small), file offset, destination offset, length
  const FileRanges ranges{.files = {big, small},
                          .ranges = {{0, 5, 300000, 70001},
                                     {0, 3u << 20, 7, 3},
                                     {1, 1, 100000, 9999},
                                     {0, 1000003, 500000, 200000}}};
  EXPECT_EQ(destination_bytes(ranges), 700416u);  // 700000 rounded up to 4096
  std::vector<LoadSettings> settings{
      {.method = LoadMethod::read},
      {.method = LoadMethod::mmap},
      {.method = LoadMethod::pipelined, .threads = 3, .chunk_bytes = 16384, .pool_bytes = 65536}};
  if (direct_io_works()) {
    settings.push_back({.method = LoadMethod::pipelined,
                        .threads = 2,
                        .direct = true,
                        .chunk_bytes = 8192,
                        .pool_bytes = 40960});
  }
  for (const LoadSettings& s : settings) {
    const std::unique_ptr<Buffer> buffer = host_.allocate(destination_bytes(ranges));
    const LoadTiming t = load_files(ranges, *buffer, s, host_);
    EXPECT_EQ(t.bytes, 70001u + 3u + 9999u + 200000u);
    const std::byte* memory = buffer->view().data;
    for (const ByteRange& r : ranges.ranges) {
      const std::string& whole = r.file == 0 ? contents_[2] : contents_[1];
      EXPECT_EQ(std::memcmp(memory + r.memory_offset, whole.data() + r.file_offset, r.length), 0)
          << load_method_name(s.method) << (s.direct ? " (O_DIRECT)" : "")
          << " range at file offset " << r.file_offset;
    }
  }
  // A range past the end of its file is an I/O error naming the file, by every method.
  const FileRanges beyond{.files = {small}, .ranges = {{0, 9995, 0, 10}}};
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

// A known packing, buffered: file-adjacent and overlapping ranges extend one read, a gap or a step
// back starts another in the same slot, another file starts a chunk, a range larger than what is
// left continues in the next chunk, empty ranges read nothing.
TEST_F(LoadWorkers, PackingSharesChunksAndReadsAdjacentRangesOnce) {
  // file (0: a, 1: b), file offset, destination (range k at 10000 k), length
  const FileRanges ranges{.files = {"a", "b"},
                          .ranges = {{0, 0, 0, 100},
                                     {0, 100, 10000, 50},
                                     {0, 120, 20000, 60},
                                     {0, 1000, 30000, 10},
                                     {0, 500, 40000, 10},
                                     {1, 0, 50000, 5000},
                                     {1, 5000, 60000, 10},
                                     {0, 0, 70000, 0},
                                     {0, 10, 80000, 1}}};
  const ChunkPlan plan = pack_chunks(ranges, 4096, false);
  ASSERT_EQ(plan.chunks.size(), 4u);
  const std::vector<std::pair<std::size_t, std::size_t>> reads_copies{
      {3, 5}, {1, 1}, {1, 2}, {1, 1}};
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    EXPECT_EQ(plan.chunks[c].read_count, reads_copies[c].first) << "chunk " << c;
    EXPECT_EQ(plan.chunks[c].copy_count, reads_copies[c].second) << "chunk " << c;
  }
  const std::vector<std::array<std::uint64_t, 4>> reads{// file offset, length, needed, slot offset
                                                        {0, 180, 180, 0},    {1000, 10, 10, 180},
                                                        {500, 10, 10, 190},  {0, 4096, 4096, 0},
                                                        {4096, 914, 914, 0}, {10, 1, 1, 0}};
  ASSERT_EQ(plan.reads.size(), reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const ChunkRead& r = plan.reads[i];
    EXPECT_EQ((std::array{r.file_offset, r.length, r.needed, r.slot_offset}), reads[i])
        << "read " << i;
  }
  const std::vector<std::array<std::uint64_t, 4>> copies{
      // range, offset in it, length, slot offset
      {0, 0, 100, 0},  {1, 0, 50, 100},   {2, 0, 60, 120}, {3, 0, 10, 180}, {4, 0, 10, 190},
      {5, 0, 4096, 0}, {5, 4096, 904, 0}, {6, 0, 10, 904}, {8, 0, 1, 0}};
  ASSERT_EQ(plan.copies.size(), copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const BufferCopy& c = plan.copies[i];
    const auto [range, offset, length, slot_offset] = copies[i];
    EXPECT_EQ((std::array{c.from, c.to, c.length}),
              (std::array{slot_offset, range * 10000 + offset, length}))
        << "copy " << i;
  }
}

// The same under O_DIRECT (slots of 8 KiB and a lead block): ranges sharing a block or in touching
// blocks are one aligned read; a read that would overfill the slot starts the next chunk; a large
// range is cut at block boundaries (no block read twice).
TEST_F(LoadWorkers, DirectPackingReadsWholeBlocksOnceAndCutsRangesAtBlocks) {
  // file, file offset, destination (range k at 10000 k), length
  const FileRanges ranges{.files = {"a"},
                          .ranges = {{0, 100, 0, 100},
                                     {0, 300, 10000, 100},
                                     {0, 4196, 20000, 4},
                                     {0, 20000, 30000, 10},
                                     {0, 20010, 40000, 10},
                                     {0, 30000, 50000, 1},
                                     {0, 40000, 60000, 20000}}};
  const ChunkPlan plan = pack_chunks(ranges, 8192, true);
  ASSERT_EQ(plan.chunks.size(), 4u);
  const std::vector<std::array<std::uint64_t, 4>> reads{
      {0, 8192, 4200, 0},        {16384, 4096, 3636, 8192}, {28672, 4096, 1329, 0},
      {36864, 8192, 8192, 4096}, {45056, 8192, 8192, 0},    {53248, 8192, 6752, 0}};
  ASSERT_EQ(plan.reads.size(), reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const ChunkRead& r = plan.reads[i];
    EXPECT_EQ((std::array{r.file_offset, r.length, r.needed, r.slot_offset}), reads[i])
        << "read " << i;
  }
  const std::vector<std::array<std::uint64_t, 4>> copies{
      {0, 0, 100, 100},   {1, 0, 100, 300},   {2, 0, 4, 4196},
      {3, 0, 10, 11808},  {4, 0, 10, 11818},  {5, 0, 1, 1328},
      {6, 0, 5056, 7232}, {6, 5056, 8192, 0}, {6, 13248, 6752, 0}};
  ASSERT_EQ(plan.copies.size(), copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const BufferCopy& c = plan.copies[i];
    const auto [range, offset, length, slot_offset] = copies[i];
    EXPECT_EQ((std::array{c.from, c.to, c.length}),
              (std::array{slot_offset, range * 10000 + offset, length}))
        << "copy " << i;
  }
  for (const PackedChunk& c : plan.chunks) {
    std::uint64_t used = 0;
    for (std::size_t r = c.first_read; r < c.first_read + c.read_count; ++r)
      used += plan.reads[r].length;
    EXPECT_LE(used, slot_stride(8192, true));
  }
}

// 1000 ranges of 100 bytes of the big file in 100 groups of 10 file-adjacent ones (at file offsets
// 7 + 1024 g, "dense": 24-byte gaps, or 7 + 8192 g, "sparse"), placed in reverse order at unaligned
// places, loaded by 3 readers through a pool of 2 slots: every byte in place, reads as packed.
TEST_F(LoadWorkers, ManySmallRangesShareChunksThroughASmallPool) {
  const auto ranges_at = [this](std::uint64_t group_stride) {
    FileRanges ranges{.files = {files_.files[2]}};
    for (std::uint64_t k = 0; k < 1000; ++k) {
      ranges.ranges.push_back(
          {0, 7 + k / 10 * group_stride + k % 10 * 100, (999 - k) * 128 + 3, 100});
    }
    return ranges;
  };
  struct Load {
    std::uint64_t group_stride;
    LoadSettings settings;
    std::uint64_t reads;  // 0: one per chunk (every block touches the next)
    int pool_chunks;
  };
  // Buffered, 16 KiB chunks: 7 of them (100,000 bytes), each cut inside a group: 100 + 6 reads.
  // O_DIRECT sparse: one block per group, 5 groups fill a slot of 16 + 4 KiB: 20 chunks, 100 reads.
  // One chunk of 1 MiB takes all (the slot is the run's 100,000 bytes rounded up): 100 reads.
  std::vector<Load> loads{
      {1024, {.threads = 3, .chunk_bytes = 16384, .pool_bytes = 32768}, 106, 2},
      {8192, {.threads = 3, .chunk_bytes = 16384, .pool_bytes = 32768}, 106, 2},
      {1024, {.threads = 2, .chunk_bytes = 1 << 20, .pool_bytes = 4 << 20}, 100, 1}};
  if (direct_io_works()) {
    loads.push_back(
        {8192, {.threads = 3, .direct = true, .chunk_bytes = 16384, .pool_bytes = 40960}, 100, 2});
    loads.push_back(
        {1024, {.threads = 3, .direct = true, .chunk_bytes = 16384, .pool_bytes = 40960}, 0, 2});
  }
  for (const Load& l : loads) {
    const FileRanges ranges = ranges_at(l.group_stride);
    const std::unique_ptr<Buffer> buffer = host_.allocate(destination_bytes(ranges));
    const LoadTiming t = load_files(ranges, *buffer, l.settings, host_);
    const std::string label =
        fmt::format("groups every {} bytes, {} chunks{}", l.group_stride, l.settings.chunk_bytes,
                    l.settings.direct ? ", O_DIRECT" : "");
    EXPECT_EQ(t.bytes, 100000u) << label;
    const ChunkPlan plan = pack_chunks(ranges, l.settings.chunk_bytes, l.settings.direct);
    EXPECT_EQ(t.reads, l.reads > 0 ? l.reads : plan.chunks.size()) << label;
    EXPECT_EQ(t.reads, plan.reads.size()) << label;
    EXPECT_EQ(t.pool_chunks, l.pool_chunks) << label;
    for (const ByteRange& r : ranges.ranges) {
      ASSERT_EQ(std::memcmp(buffer->view().data + r.memory_offset,
                            contents_[2].data() + r.file_offset, r.length),
                0)
          << label << ": range at file offset " << r.file_offset;
    }
  }
}

// A packed chunk whose last range runs past the end of its file: the error names the file, buffered
// and under O_DIRECT (whose last block reads short), and no reader is left waiting.
TEST_F(LoadWorkers, PackedRangePastTheEndOfItsFileIsNamed) {
  const std::string& small = files_.files[1];
  // file (0: the big one, 1: small), file offset, destination offset, length
  const FileRanges ranges{
      .files = {files_.files[2], small},
      .ranges = {{0, 3, 0, 50000}, {1, 9000, 53248, 100}, {1, 9990, 57344, 20}}};
  std::vector<LoadSettings> settings{{.threads = 2, .chunk_bytes = 8192, .pool_bytes = 16384}};
  if (direct_io_works())
    settings.push_back({.threads = 2, .direct = true, .chunk_bytes = 8192, .pool_bytes = 24576});
  for (const LoadSettings& s : settings) {
    const std::unique_ptr<Buffer> buffer = host_.allocate(destination_bytes(ranges));
    try {
      load_files(ranges, *buffer, s, host_);
      ADD_FAILURE() << "loaded a range past the end" << (s.direct ? " (O_DIRECT)" : "");
    } catch (const std::runtime_error& e) {
      // Under O_DIRECT the loader knows the file's size before its last block reads short;
      // buffered, the backend meets the end of the file.
      const std::string expected =
          s.direct ? "load: read (file shorter than planned) " + small + " at offset 8192"
                   : "load: posix: read " + small +
                         " at offset 9990, length 20: file "
                         "shorter than the plan";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
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
    EXPECT_NE(
        std::string(e.what()).find("load.chunk_bytes = 1000 must be a positive multiple of 4096"),
        std::string::npos);
  }
  try {
    load_files(files_, *memory, {.chunk_bytes = 8192, .pool_bytes = 4096}, host_);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("load.pool_bytes = 4096 must hold at least one chunk"),
              std::string::npos);
  }
  const FileRanges missing{.files = {(dir_.path() / "gone").string()}, .ranges = {{0, 0, 0, 10}}};
  for (LoadMethod m : {LoadMethod::pipelined, LoadMethod::mmap, LoadMethod::read}) {
    try {
      load_files(missing, *memory, {.method = m}, host_);
      FAIL() << load_method_name(m);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("load: posix: open for reading " + missing.files[0] +
                                           ": No such file"),
                std::string::npos)
          << e.what();
    }
  }
}

// The pipelined method's exact I/O through one reader: each file opened once however many chunks
// it takes, one read a packed read (ranges adjacent in the file share one), each at its offset and
// length, and every byte in place. File "a" takes three 8 KiB chunks; "b" one chunk of two reads;
// "c" one read of its two adjacent ranges.
TEST(PipelinedReads, OneOpenAFileAndOneReadAPackedReadExactly) {
  std::vector<std::string> log;
  auto memory = std::make_unique<memory_test::MemoryBackend>(log, false);
  memory_test::MemoryBackend& backend = *memory;
  std::vector<std::unique_ptr<backends::Backend>> readers;
  readers.push_back(std::move(memory));
  const std::map<std::string, int> sizes{{"a", 20000}, {"b", 1100}, {"c", 20}};
  for (const auto& [name, size] : sizes) {
    for (int i = 0; i < size; ++i)
      backend.files[name].push_back(static_cast<std::byte>((i * 7 + name[0]) % 251));
  }
  // file, file offset, destination offset, length
  const FileRanges ranges{.files = {"a", "b", "c"},
                          .ranges = {{0, 0, 0, 20000},
                                     {1, 0, 20480, 100},
                                     {1, 1000, 24576, 100},
                                     {2, 0, 28672, 10},
                                     {2, 10, 28682, 10}}};
  const LoadSettings settings{.threads = 1, .chunk_bytes = 8192, .pool_bytes = 16384};
  const std::unique_ptr<MemorySpace> host = make_host_space();
  const std::unique_ptr<Buffer> pool = make_chunk_pool(ranges, settings, *host);
  const std::unique_ptr<Buffer> destination = host->allocate(destination_bytes(ranges));
  LoadTiming timing;
  load_pipelined(ranges, *destination, settings, *pool, readers, timing);

  EXPECT_EQ(backend.opens, (std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}}));
  EXPECT_EQ(backend.moved, (std::map<std::string, std::vector<std::string>>{
                               {"a", {"0+8192", "8192+8192", "16384+3616"}},
                               {"b", {"0+100", "1000+100"}},
                               {"c", {"0+20"}}}));
  EXPECT_EQ(timing.reads, 6u);
  EXPECT_EQ(timing.pool_chunks, 2);
  for (const ByteRange& r : ranges.ranges) {
    EXPECT_EQ(std::memcmp(destination->view().data + r.memory_offset,
                          backend.files[ranges.files[r.file]].data() + r.file_offset, r.length),
              0)
        << ranges.files[r.file] << " at " << r.file_offset;
  }
}

}  // namespace
}  // namespace ckpt::harness
