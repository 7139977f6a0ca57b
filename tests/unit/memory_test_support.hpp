#pragma once

// Device memory without a device, for tests of staging: a buffer of kind device backed by
// host memory, whose copier copies at once and logs what it did.

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/memory/host_buffer.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/memory/memory_space.hpp"

namespace ckpt::harness::memory_test {

// Copies between `device` and host slots synchronously; logs "start <slot> <offset>" and
// "wait <slot>"; wait() reports 0.25 s per copy; the start() numbered fail_at throws.
class HostCopier final : public DeviceCopier {
 public:
  HostCopier(std::byte* device, std::uint64_t size, std::uint64_t slot_bytes, int slots,
             std::vector<std::string>& log)
      : device_(device), size_(size), log_(log) {
    for (int i = 0; i < slots; ++i) slots_.emplace_back(slot_bytes);
    pending_.assign(static_cast<std::size_t>(slots), false);
  }
  int slots() const override { return static_cast<int>(slots_.size()); }
  std::uint64_t slot_bytes() const override { return slots_[0].size(); }
  backends::MemoryView slot(int i) const override {
    const HostBuffer& b = slots_[static_cast<std::size_t>(i)];
    return {b.data(), b.size(), backends::MemoryKind::pinned};
  }
  void start(int i, std::uint64_t offset, std::uint64_t bytes, bool to_host) override {
    if (pending_[static_cast<std::size_t>(i)]) throw std::logic_error("slot reused before wait");
    if (fail_at == static_cast<int>(starts_++)) throw std::runtime_error("simulated copy failure");
    std::byte* s = slots_[static_cast<std::size_t>(i)].data();
    EXPECT_LE(bytes, slot_bytes());
    EXPECT_LE(offset + bytes, size_);
    if (to_host) {
      std::memcpy(s, device_ + offset, bytes);
    } else {
      std::memcpy(device_ + offset, s, bytes);
    }
    pending_[static_cast<std::size_t>(i)] = true;
    log_.push_back("start " + std::to_string(i) + " " + std::to_string(offset));
  }
  double wait(int i) override {
    if (!pending_[static_cast<std::size_t>(i)]) return 0;
    pending_[static_cast<std::size_t>(i)] = false;
    log_.push_back("wait " + std::to_string(i));
    return 0.25;
  }
  int fail_at = -1;

 private:
  std::byte* device_;
  std::uint64_t size_;
  std::vector<std::string>& log_;
  std::vector<HostBuffer> slots_;
  std::vector<bool> pending_;
  std::uint64_t starts_ = 0;
};

struct EmulatedDeviceStorage {
  explicit EmulatedDeviceStorage(std::uint64_t bytes) : storage(bytes) {}
  HostBuffer storage;
};

// Host memory that says it is device memory: backends without device_memory refuse it, so the
// harness must stage it; fills and verifies on the host. (The storage base comes first so that
// it exists when the view is made.)
class EmulatedDeviceBuffer final : private EmulatedDeviceStorage, public HostAddressableBuffer {
 public:
  EmulatedDeviceBuffer(std::uint64_t bytes, std::vector<std::string>& log)
      : EmulatedDeviceStorage(bytes),
        HostAddressableBuffer({storage.data(), bytes, backends::MemoryKind::device}),
        log_(log) {}
  std::unique_ptr<DeviceCopier> copier(std::uint64_t slot_bytes, int slots) const override {
    return std::make_unique<HostCopier>(storage.data(), storage.size(), slot_bytes, slots, log_);
  }

 private:
  std::vector<std::string>& log_;
};

class EmulatedDeviceSpace final : public MemorySpace {
 public:
  MemorySpaceKind kind() const override { return MemorySpaceKind::cuda; }
  std::unique_ptr<Buffer> allocate(std::uint64_t bytes) override {
    return std::make_unique<EmulatedDeviceBuffer>(bytes, log);
  }
  std::vector<std::string> log;
};

// A test backend's files kept in memory: moves every extent of `plan` between `memory` and
// `files` (write: into the files, growing them; read: out of them).
inline void move_extents(std::map<std::string, std::vector<std::byte>>& files,
                         const backends::IoPlan& plan, backends::MemoryView memory, bool write) {
  for (const backends::FilePlan& f : plan.files) {
    std::vector<std::byte>& file = files[f.path];
    for (const backends::Extent& e : f.extents) {
      if (file.size() < e.file_offset + e.length) file.resize(e.file_offset + e.length);
      if (write) {
        std::memcpy(file.data() + e.file_offset, memory.data + e.memory_offset, e.length);
      } else {
        std::memcpy(memory.data + e.memory_offset, file.data() + e.file_offset, e.length);
      }
    }
  }
}

// Stores files in memory (move_extents) and logs each call ("open", "transfer", "sync",
// "close"); counts each file's opens and records each extent it moves ("<file offset>+<length>"),
// by path, so that tests can hold a transfer to exactly the I/O it issues. Optionally collective.
class MemoryBackend final : public backends::Backend {
 public:
  MemoryBackend(std::vector<std::string>& log, bool collective)
      : log_(log), collective_(collective) {}
  std::string_view name() const override { return "memory"; }
  backends::Capabilities capabilities() const override {
    backends::Capabilities c;
    c.collective = collective_;
    return c;
  }
  std::map<std::string, std::vector<std::byte>> files;
  std::map<std::string, int> opens;
  std::map<std::string, std::vector<std::string>> moved;

 protected:
  std::unique_ptr<OpenFiles> open(const backends::IoPlan& plan, Direction /*d*/) override {
    log_.push_back("open");
    for (const backends::FilePlan& f : plan.files) ++opens[f.path];
    return std::make_unique<OpenFiles>();
  }
  void transfer(OpenFiles& /*f*/, const backends::IoPlan& plan, backends::MemoryView memory,
                Direction d) override {
    log_.push_back("transfer");
    for (const backends::FilePlan& f : plan.files) {
      for (const backends::Extent& e : f.extents)
        moved[f.path].push_back(std::to_string(e.file_offset) + "+" + std::to_string(e.length));
    }
    move_extents(files, plan, memory, d == Direction::write);
  }
  void sync(OpenFiles& /*f*/, Direction /*d*/) override { log_.push_back("sync"); }
  void close(OpenFiles& /*f*/) override { log_.push_back("close"); }

 private:
  std::vector<std::string>& log_;
  bool collective_;
};

}  // namespace ckpt::harness::memory_test
