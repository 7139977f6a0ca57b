#pragma once

// Helpers for backend tests: a scratch directory, aligned patterned memory, and checks of
// files and buffers against a plan.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::test_support {

namespace fs = std::filesystem;

constexpr std::uint64_t kBlock = 4096;  // O_DIRECT alignment used throughout
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::uint64_t round_up(std::uint64_t n, std::uint64_t to) {
  return (n + to - 1) / to * to;
}

// A fresh directory from mkdtemp under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/ckpt-backend-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Block-aligned memory (ready for O_DIRECT), zeroed, or filled with a splitmix64 pattern.
class Buffer {
 public:
  explicit Buffer(std::uint64_t size)
      : size_(size),
        data_(static_cast<std::byte*>(std::aligned_alloc(kBlock, round_up(size + 1, kBlock)))) {
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, round_up(size + 1, kBlock));
  }
  void fill(std::uint64_t seed) {
    for (std::uint64_t i = 0; i < size_; ++i) {
      std::uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      data_.get()[i] = static_cast<std::byte>(z ^ (z >> 31));
    }
  }
  std::byte* data() const { return data_.get(); }
  std::uint64_t size() const { return size_; }
  MemoryView view(MemoryKind kind = MemoryKind::host) const { return {data_.get(), size_, kind}; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::uint64_t size_;
  std::unique_ptr<std::byte, Free> data_;
};

inline std::uint64_t extents_end(const FilePlan& file) {
  std::uint64_t end = 0;
  for (const Extent& e : file.extents) {
    if (e.length > 0) end = std::max(end, e.file_offset + e.length);
  }
  return end;
}

inline std::uint64_t memory_end(const IoPlan& plan) {
  std::uint64_t end = 0;
  for (const FilePlan& f : plan.files) {
    for (const Extent& e : f.extents) end = std::max(end, e.memory_offset + e.length);
  }
  return end;
}

inline FilePlan file_plan(std::string path, std::vector<Extent> extents) {
  FilePlan file{std::move(path), std::move(extents), 0, false};
  file.file_size = extents_end(file);
  return file;
}

// Zeros except where the plan maps memory: there, the source's bytes.
inline Buffer expected_memory(const IoPlan& plan, const Buffer& source) {
  Buffer expected(source.size());
  for (const FilePlan& f : plan.files) {
    for (const Extent& e : f.extents) {
      std::memcpy(expected.data() + e.memory_offset, source.data() + e.memory_offset, e.length);
    }
  }
  return expected;
}

inline void expect_same_bytes(const std::byte* actual, const std::byte* expected,
                              std::uint64_t size, const std::string& what) {
  const auto [a, b] = std::mismatch(actual, actual + size, expected);
  EXPECT_EQ(a, actual + size) << what << ": first difference at byte " << (a - actual) << " of "
                              << size;
}

// Checks the files without the backend: size, and each extent's bytes equal the source's.
inline void expect_files_hold(const IoPlan& plan, const Buffer& source) {
  for (const FilePlan& f : plan.files) {
    ASSERT_TRUE(fs::exists(f.path)) << f.path;
    if (!f.shared) {
      EXPECT_EQ(fs::file_size(f.path), extents_end(f)) << f.path;
    }
    std::ifstream in(f.path, std::ios::binary);
    for (const Extent& e : f.extents) {
      std::vector<char> bytes(e.length);
      in.seekg(static_cast<std::streamoff>(e.file_offset));
      in.read(bytes.data(), static_cast<std::streamsize>(e.length));
      ASSERT_TRUE(in.good()) << f.path << " at " << e.file_offset;
      expect_same_bytes(reinterpret_cast<const std::byte*>(bytes.data()),
                        source.data() + e.memory_offset, e.length,
                        f.path + " at offset " + std::to_string(e.file_offset));
    }
  }
}

// Reads the plan back into a zeroed buffer and compares it with what was written.
inline void expect_read_back(Backend& backend, const IoPlan& plan, const Buffer& source) {
  const Buffer back(source.size());
  const IoOutcome outcome = backend.read(plan, back.view());
  ASSERT_TRUE(outcome.ok()) << *outcome.error;
  EXPECT_EQ(outcome.bytes, plan.bytes());
  const Buffer expected = expected_memory(plan, source);
  expect_same_bytes(back.data(), expected.data(), source.size(), "read back");
}

inline void expect_ok(const IoOutcome& outcome, const IoPlan& plan) {
  ASSERT_TRUE(outcome.ok()) << *outcome.error;
  EXPECT_EQ(outcome.bytes, plan.bytes());
  EXPECT_GE(outcome.phases.open, 0.0);
  EXPECT_GE(outcome.phases.transfer, 0.0);
  EXPECT_GE(outcome.phases.sync, 0.0);
  EXPECT_GE(outcome.phases.close, 0.0);
}

}  // namespace ckpt::backends::test_support
