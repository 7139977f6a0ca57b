#include "backends/uring/transfer_queue.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>

namespace ckpt::backends::uring {
namespace {

std::uint64_t address_of(const std::byte* p) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

}  // namespace

BufferRegistration register_buffers(Ring& ring, std::byte* begin, std::byte* end) {
  BufferRegistration registration;
  if (begin >= end) return registration;
  registration.first_chunk = address_of(begin) / kChunk;
  const std::uint64_t last_chunk = (address_of(end) - 1) / kChunk;
  std::vector<iovec> iovecs;
  iovecs.reserve(last_chunk - registration.first_chunk + 1);
  for (std::uint64_t chunk = registration.first_chunk; chunk <= last_chunk; ++chunk) {
    const std::uint64_t low = std::max(address_of(begin), chunk * kChunk);
    const std::uint64_t high = std::min(address_of(end), (chunk + 1) * kChunk);
    iovecs.push_back(iovec{begin + (low - address_of(begin)), high - low});
  }
  const int result =
      io_uring_register_buffers(ring.get(), iovecs.data(), static_cast<unsigned>(iovecs.size()));
  registration.registered = result == 0;
  registration.error = result < 0 ? -result : 0;
  return registration;
}

int register_files(Ring& ring, const std::vector<int>& fds) {
  if (fds.empty()) return 0;
  const int result =
      io_uring_register_files(ring.get(), fds.data(), static_cast<unsigned>(fds.size()));
  return result < 0 ? -result : 0;
}

TransferQueue::TransferQueue(Ring& ring, const TransferJob& job)
    : ring_(ring), job_(job), slots_(job.depth) {
  free_.reserve(job.depth);
  for (unsigned s = job.depth; s-- > 0;) free_.push_back(s);
  resubmit_.reserve(job.depth);
}

bool TransferQueue::take_next(Slot& slot) {
  const std::vector<file_common::Piece>& pieces = *job_.pieces;
  while (next_piece_ < pieces.size() && next_offset_ == pieces[next_piece_].length) {
    ++next_piece_;
    next_offset_ = 0;
  }
  if (next_piece_ == pieces.size()) return false;
  const file_common::Piece& piece = pieces[next_piece_];
  const std::uint64_t address = address_of(job_.memory + piece.memory_offset + next_offset_);
  const std::uint64_t to_boundary = kChunk - address % kChunk;
  slot = Slot{next_piece_, next_offset_, std::min(piece.length - next_offset_, to_boundary), 0};
  next_offset_ += slot.length;
  return true;
}

void TransferQueue::prepare(unsigned s) {
  const Slot& slot = slots_[s];
  const file_common::Piece& piece = (*job_.pieces)[slot.piece];
  const FileTarget& file = (*job_.files)[piece.file];
  std::byte* memory = job_.memory + piece.memory_offset + slot.start + slot.done;
  const std::uint64_t offset = piece.file_offset + slot.start + slot.done;
  const auto length = static_cast<unsigned>(slot.length - slot.done);
  const int fd = file.fixed >= 0 ? file.fixed : file.fd;

  io_uring_sqe* sqe = ring_.next_sqe();
  if (job_.buffers.registered) {
    const auto index = static_cast<int>(address_of(memory) / kChunk - job_.buffers.first_chunk);
    if (job_.write) {
      io_uring_prep_write_fixed(sqe, fd, memory, length, offset, index);
    } else {
      io_uring_prep_read_fixed(sqe, fd, memory, length, offset, index);
    }
  } else if (job_.write) {
    io_uring_prep_write(sqe, fd, memory, length, offset);
  } else {
    io_uring_prep_read(sqe, fd, memory, length, offset);
  }
  if (file.fixed >= 0) io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
  io_uring_sqe_set_data64(sqe, s);
}

void TransferQueue::fail(const Slot& slot, int error) {
  if (error_) return;
  const file_common::Piece& piece = (*job_.pieces)[slot.piece];
  error_.emplace("uring", job_.write ? "write" : "read", *(*job_.files)[piece.file].path, error,
                 piece.file_offset + slot.start, slot.length);
}

void TransferQueue::fail_end_of_file(const Slot& slot) {
  if (error_) return;
  const file_common::Piece& piece = (*job_.pieces)[slot.piece];
  const std::uint64_t offset = piece.file_offset + slot.start;
  error_.emplace("uring: read " + *(*job_.files)[piece.file].path + " at offset " +
                 std::to_string(offset) + ", length " + std::to_string(slot.length) +
                 ": file shorter than the plan (end of file at byte " +
                 std::to_string(offset + slot.done) + ")");
}

bool TransferQueue::reached_data_end(const Slot& slot) const {
  const file_common::Piece& piece = (*job_.pieces)[slot.piece];
  const std::uint64_t data_end = (*job_.files)[piece.file].data_end;
  return data_end != 0 && piece.file_offset + slot.start + slot.done >= data_end;
}

void TransferQueue::complete(unsigned s, int result) {
  Slot& slot = slots_[s];
  if (result == -EINTR || result == -EAGAIN) {
    resubmit_.push_back(s);
    return;
  }
  if (result < 0) {
    fail(slot, -result);
  } else if (result == 0) {
    // A write of a non-empty request never completes with 0 on a regular file; resubmitting
    // would spin, so it counts as a short transfer. A read of 0 bytes is the end of the file.
    if (job_.write) {
      fail(slot, 0);
    } else if (!reached_data_end(slot)) {
      fail_end_of_file(slot);
    }
  } else {
    slot.done += static_cast<std::uint64_t>(result);
    if (slot.done < slot.length && (job_.write || !reached_data_end(slot))) {
      // An O_DIRECT read that stops at an unaligned count has met the end of the file (the
      // remainder would start unaligned and fail with EINVAL).
      const std::uint64_t reached = (*job_.pieces)[slot.piece].file_offset + slot.start + slot.done;
      if (!job_.write && job_.direct_alignment != 0 && reached % job_.direct_alignment != 0) {
        fail_end_of_file(slot);
      } else {
        resubmit_.push_back(s);
        return;
      }
    }
  }
  free_.push_back(s);
}

void TransferQueue::run(std::stop_token stop) {
  std::size_t in_flight = 0;
  std::array<io_uring_cqe*, 64> cqes{};
  std::vector<unsigned> submitting;  // slots of this round's SQEs, to stamp at submission
  if (job_.latency != nullptr) submitting.reserve(slots_.size());
  while (true) {
    unsigned prepared = 0;
    if (!error_ && !stop.stop_requested()) {
      for (const unsigned s : resubmit_) {
        prepare(s);
        if (job_.latency != nullptr) submitting.push_back(s);
        ++prepared;
      }
      resubmit_.clear();
      while (!free_.empty() && take_next(slots_[free_.back()])) {
        prepare(free_.back());
        if (job_.latency != nullptr) submitting.push_back(free_.back());
        free_.pop_back();
        ++prepared;
      }
    }
    if (job_.latency != nullptr) {
      const auto now = std::chrono::steady_clock::now();
      for (const unsigned s : submitting) slots_[s].submitted = now;
      submitting.clear();
    }
    if (prepared > 0) ring_.submit();
    in_flight += prepared;
    if (in_flight == 0) break;
    ring_.wait();
    const unsigned ready =
        io_uring_peek_batch_cqe(ring_.get(), cqes.data(), static_cast<unsigned>(cqes.size()));
    if (job_.latency != nullptr) {
      const auto now = std::chrono::steady_clock::now();
      for (unsigned c = 0; c < ready; ++c) {
        const auto waited = now - slots_[static_cast<unsigned>(cqes[c]->user_data)].submitted;
        job_.latency->record(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count()));
      }
    }
    for (unsigned c = 0; c < ready; ++c) {
      complete(static_cast<unsigned>(cqes[c]->user_data), cqes[c]->res);
    }
    io_uring_cq_advance(ring_.get(), ready);
    in_flight -= ready;
  }
  if (error_) throw *error_;
}

}  // namespace ckpt::backends::uring
