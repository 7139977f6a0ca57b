#pragma once

#include <cufile.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/gds/cufile_api.hpp"

namespace ckpt::backends::gds {

// Largest single cuFileRead/cuFileWrite: a power of two (cuts keep O_DIRECT alignment) well
// below the 2 GiB that one pread/pwrite moves in compatibility mode.
inline constexpr std::uint64_t kMaxRequest = std::uint64_t{1} << 30;

// One cuFile request: bytes [file_offset, +length) of a registered file <-> bytes
// [memory_offset, +length) of the buffer.
struct Request {
  CUfileHandle_t handle = nullptr;
  const std::string* path = nullptr;  // for messages
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  std::uint64_t length = 0;
  std::uint64_t data_end = 0;  // FilePlan::data_end: a read reaching this file offset is whole
};

// Appends `length` bytes at the given offsets as requests of at most kMaxRequest bytes.
void append_requests(std::vector<Request>& requests, const Request& run);

// Moves requests one at a time with cuFileWrite or cuFileRead, continuing after short
// transfers. `base` is the buffer every memory offset counts from (the registered address).
class RequestMover {
 public:
  RequestMover(const CufileApi& api, std::byte* base, bool writing)
      : api_(&api), base_(base), writing_(writing) {}

  // Moves the whole request. Throws IoError naming the path, offset and length: cuFile's or the
  // file system's error, or end of file before the request is complete (read).
  void move(const Request& request) const;

 private:
  const CufileApi* api_;
  std::byte* base_;
  bool writing_;
};

// A cuFile batch (cuFileBatchIOSetUp) that takes up to `depth` requests at a time, move-only;
// the destructor cancels what is still in flight and destroys it.
class BatchQueue {
 public:
  // Empty (check is_set_up()) when cuFile refuses; `error` then says why.
  static BatchQueue set_up(const CufileApi& api, unsigned depth, std::string& error);
  BatchQueue(BatchQueue&& other) noexcept;
  BatchQueue& operator=(BatchQueue&&) = delete;
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;
  ~BatchQueue();

  bool is_set_up() const noexcept { return batch_ != nullptr; }

  // Submits the requests `depth` at a time and waits for each group; a request cuFile
  // completes short is finished by `mover`. Returns early when `stop` is requested. Throws
  // IoError for a refused submission or a failed request (its path, offset and length).
  void run(std::span<const Request> requests, const RequestMover& mover, std::byte* base,
           bool writing, std::stop_token stop);

 private:
  BatchQueue(const CufileApi& api, CUfileBatchHandle_t batch, unsigned depth)
      : api_(&api), batch_(batch), depth_(depth) {}
  void run_group(std::span<const Request> group, const RequestMover& mover, std::byte* base,
                 bool writing);

  const CufileApi* api_ = nullptr;
  CUfileBatchHandle_t batch_ = nullptr;
  unsigned depth_ = 0;
  bool in_flight_ = false;
};

// A buffer registered with cuFileBufRegister for this object's lifetime, move-only.
class BufferRegistration {
 public:
  BufferRegistration() = default;
  // Registers [data, data + size); empty when cuFile refuses, with `error` saying why.
  static BufferRegistration make(const CufileApi& api, const std::byte* data, std::uint64_t size,
                                 std::string& error);
  BufferRegistration(BufferRegistration&& other) noexcept;
  BufferRegistration& operator=(BufferRegistration&&) = delete;
  BufferRegistration(const BufferRegistration&) = delete;
  BufferRegistration& operator=(const BufferRegistration&) = delete;
  ~BufferRegistration();

  bool is_registered() const noexcept { return data_ != nullptr; }

 private:
  const CufileApi* api_ = nullptr;
  const std::byte* data_ = nullptr;
};

}  // namespace ckpt::backends::gds
