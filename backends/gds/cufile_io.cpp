#include "backends/gds/cufile_io.hpp"

#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "backends/backend.hpp"

namespace ckpt::backends::gds {
namespace {

std::string where(const char* operation, const Request& request, std::uint64_t done = 0) {
  return std::string("gds: ") + operation + " " + *request.path + " at offset " +
         std::to_string(request.file_offset + done) + ", length " +
         std::to_string(request.length - done);
}

// One batch entry per request; the cookie is the request's index in `group`.
std::vector<CUfileIOParams_t> batch_params(std::span<const Request> group, std::byte* base,
                                           bool writing) {
  std::vector<CUfileIOParams_t> params(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    CUfileIOParams_t& p = params[i];
    p.mode = CUFILE_BATCH;
    p.u.batch.devPtr_base = base;
    p.u.batch.file_offset = static_cast<off_t>(group[i].file_offset);
    p.u.batch.devPtr_offset = static_cast<off_t>(group[i].memory_offset);
    p.u.batch.size = static_cast<std::size_t>(group[i].length);
    p.fh = group[i].handle;
    p.opcode = writing ? CUFILE_WRITE : CUFILE_READ;
    p.cookie = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i));
  }
  return params;
}

}  // namespace

void append_requests(std::vector<Request>& requests, const Request& run) {
  for (std::uint64_t done = 0; done < run.length; done += kMaxRequest) {
    Request part = run;
    part.file_offset += done;
    part.memory_offset += done;
    part.length = std::min(kMaxRequest, run.length - done);
    requests.push_back(part);
  }
}

void RequestMover::move(const Request& request) const {
  const char* operation = writing_ ? "cuFileWrite" : "cuFileRead";
  std::uint64_t done = 0;
  while (done < request.length) {
    if (!writing_ && request.data_end != 0 && request.file_offset + done >= request.data_end)
      return;
    const auto size = static_cast<std::size_t>(request.length - done);
    const auto file_offset = static_cast<off_t>(request.file_offset + done);
    const auto memory_offset = static_cast<off_t>(request.memory_offset + done);
    errno = 0;
    const ssize_t moved = writing_
                              ? api_->write(request.handle, base_, size, file_offset, memory_offset)
                              : api_->read(request.handle, base_, size, file_offset, memory_offset);
    if (moved == -1 && errno == EINTR) continue;
    if (moved < 0)
      throw IoError(where(operation, request, done) + ": " + cufile_io_error_text(moved, errno));
    if (moved == 0) {
      throw IoError(where(operation, request, done) +
                    (writing_ ? ": cuFile wrote nothing" : ": file shorter than the plan"));
    }
    done += static_cast<std::uint64_t>(moved);
  }
}

BatchQueue BatchQueue::set_up(const CufileApi& api, unsigned depth, std::string& error) {
  CUfileBatchHandle_t batch = nullptr;
  const CUfileError_t status = api.batch_set_up(&batch, depth);
  if (status.err != CU_FILE_SUCCESS) {
    error = "cuFileBatchIOSetUp(" + std::to_string(depth) + "): " + cufile_error_text(status);
    batch = nullptr;
  }
  return BatchQueue(api, batch, depth);
}

BatchQueue::BatchQueue(BatchQueue&& other) noexcept
    : api_(other.api_),
      batch_(std::exchange(other.batch_, nullptr)),
      depth_(other.depth_),
      in_flight_(std::exchange(other.in_flight_, false)) {}

BatchQueue::~BatchQueue() {
  if (batch_ == nullptr) return;
  if (in_flight_) api_->batch_cancel(batch_);  // after an error: nothing to report from here
  api_->batch_destroy(batch_);
}

void BatchQueue::run(std::span<const Request> requests, const RequestMover& mover, std::byte* base,
                     bool writing, std::stop_token stop) {
  for (std::size_t begin = 0; begin < requests.size(); begin += depth_) {
    if (stop.stop_requested()) return;
    const std::size_t count = std::min<std::size_t>(depth_, requests.size() - begin);
    run_group(requests.subspan(begin, count), mover, base, writing);
  }
}

void BatchQueue::run_group(std::span<const Request> group, const RequestMover& mover,
                           std::byte* base, bool writing) {
  std::vector<CUfileIOParams_t> params = batch_params(group, base, writing);
  const auto count = static_cast<unsigned>(group.size());
  const CUfileError_t submitted = api_->batch_submit(batch_, count, params.data(), 0);
  if (submitted.err != CU_FILE_SUCCESS) {
    throw IoError(where("cuFileBatchIOSubmit", group.front()) + " (first of " +
                  std::to_string(count) + "): " + cufile_error_text(submitted));
  }
  in_flight_ = true;
  std::vector<CUfileIOEvents_t> events(group.size());
  std::vector<std::uint64_t> moved(group.size(), 0);
  std::optional<std::string> failure;
  for (unsigned done = 0; done < count;) {
    unsigned got = count - done;
    const CUfileError_t status =
        api_->batch_get_status(batch_, count - done, &got, events.data(), nullptr);
    if (status.err != CU_FILE_SUCCESS) {
      throw IoError(where("cuFileBatchIOGetStatus", group.front()) + ": " +
                    cufile_error_text(status));
    }
    for (unsigned k = 0; k < got; ++k) {
      const auto i = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(events[k].cookie));
      const auto result = static_cast<ssize_t>(events[k].ret);
      if (events[k].status != CUFILE_COMPLETE || result < 0) {
        if (!failure) {
          failure =
              where(writing ? "batched cuFileWrite" : "batched cuFileRead", group[i]) +
              ": status " + std::to_string(static_cast<int>(events[k].status)) +
              (result < 0 ? ", " + cufile_io_error_text(result, static_cast<int>(-result)) : "");
        }
      } else {
        moved[i] = static_cast<std::uint64_t>(result);
      }
    }
    done += got;
  }
  in_flight_ = false;
  if (failure) throw IoError(*failure);
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (moved[i] >= group[i].length) continue;
    Request rest = group[i];
    rest.file_offset += moved[i];
    rest.memory_offset += moved[i];
    rest.length -= moved[i];
    mover.move(rest);
  }
}

BufferRegistration BufferRegistration::make(const CufileApi& api, const std::byte* data,
                                            std::uint64_t size, std::string& error) {
  BufferRegistration registration;
  const CUfileError_t status = api.buf_register(data, static_cast<std::size_t>(size), 0);
  if (status.err != CU_FILE_SUCCESS) {
    error = "cuFileBufRegister of " + std::to_string(size) + " bytes: " + cufile_error_text(status);
    return registration;
  }
  registration.api_ = &api;
  registration.data_ = data;
  return registration;
}

BufferRegistration::BufferRegistration(BufferRegistration&& other) noexcept
    : api_(other.api_), data_(std::exchange(other.data_, nullptr)) {}

BufferRegistration::~BufferRegistration() {
  if (data_ != nullptr) api_->buf_deregister(data_);
}

}  // namespace ckpt::backends::gds
