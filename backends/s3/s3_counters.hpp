#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ckpt::backends::s3 {

// The requests the backend issues, by kind. multipart: the control requests of multipart uploads
// (create, complete, abort); part: the part uploads themselves.
enum class RequestKind { put, part, get, ranged_get, list, del, head, multipart };
inline constexpr std::size_t kRequestKinds = 8;

// What one write or read counted; updated by every worker at once.
class Counters {
 public:
  // `endpoints`: how many endpoints requests go to (backend.s3.endpoint); with more than one,
  // each one's requests are counted too.
  explicit Counters(std::size_t endpoints = 1) : per_endpoint_(endpoints > 1 ? endpoints : 0) {}

  void reset();
  // One request (each attempt of it) to endpoint `endpoint`, an index into backend.s3.endpoint.
  void request(RequestKind kind, std::size_t endpoint) {
    requests_[static_cast<std::size_t>(kind)]++;
    if (endpoint < per_endpoint_.size()) per_endpoint_[endpoint]++;
  }
  void retry() { retries_++; }
  void throttled() { throttled_++; }
  void backoff(std::uint64_t microseconds) { backoff_us_ += microseconds; }
  // A GET's time from sending the request until the first byte of the answer arrived.
  void first_byte(std::uint64_t microseconds) { first_byte_us_ += microseconds; }
  std::uint64_t requests(RequestKind kind) const {
    return requests_[static_cast<std::size_t>(kind)].load();
  }
  // {"requests.put": n, ..., "retries": n, "throttled": n, "backoff_us": n, "first_byte_us": n}
  // (first_byte_us: summed over every GET and ranged GET attempt), and with several endpoints
  // "endpoint.<index>.requests" for each (their sum is the sum of the requests by kind): every
  // counter, zeros included, so totals over processes have the same keys.
  std::map<std::string, std::uint64_t> snapshot() const;

 private:
  std::array<std::atomic<std::uint64_t>, kRequestKinds> requests_{};
  std::atomic<std::uint64_t> retries_{0};
  std::atomic<std::uint64_t> throttled_{0};
  std::atomic<std::uint64_t> backoff_us_{0};
  std::atomic<std::uint64_t> first_byte_us_{0};
  std::vector<std::atomic<std::uint64_t>> per_endpoint_;
};

}  // namespace ckpt::backends::s3
