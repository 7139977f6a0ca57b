#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/latency_histogram.hpp"
#include "backends/s3/s3_config.hpp"
#include "backends/s3/s3_counters.hpp"

namespace ckpt::backends::s3 {

// Bytes a request uploads: memory, or `length` zeros when `data` is null (the gaps between a
// file's extents, which a file would hold as a hole).
struct Segment {
  const std::byte* data = nullptr;
  std::uint64_t length = 0;
};

// Where a GET's body goes, piece after piece.
struct Piece {
  std::byte* data = nullptr;
  std::uint64_t length = 0;
};

struct Request {
  RequestKind kind = RequestKind::get;
  std::string method = "GET";        // GET, HEAD, PUT, POST or DELETE
  std::string url;                   // canonical (uri_encode, canonical_query)
  std::string name;                  // "s3://bucket/key", for messages
  std::vector<Segment> upload;       // PUT body
  std::vector<std::string> headers;  // more headers, "Name: value" (signed with the rest)
  std::string body;                  // POST body
  std::vector<Piece> download;       // GET: the body fills exactly these
  std::optional<std::pair<std::uint64_t, std::uint64_t>> range;  // bytes [first, last]
  std::size_t endpoint = 0;  // the index in backend.s3.endpoint of the one `url` names
};

struct Response {
  long status = 0;              // 0: no HTTP response (transport_error says why)
  std::string transport_error;  // libcurl's message
  bool retryable_transport = false;
  bool tls_refused = false;         // the endpoint's certificate was not verified (or not readable)
  std::string text;                 // the body, unless in Request::download (of errors: the start)
  std::string etag;                 // the ETag header
  std::uint64_t received = 0;       // bytes of Request::download filled
  bool overflow = false;            // the body was longer than Request::download
  std::uint64_t first_byte_us = 0;  // from sending until the answer's first byte (libcurl's)

  bool ok() const { return status >= 200 && status < 300 && !overflow; }
};

// One connection to the service: a libcurl easy handle that signs every request with SigV4,
// reused from request to request (keep-alive). Used by one thread at a time.
class Connection {
 public:
  Connection(const S3Config& config, const Credentials& credentials);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One attempt, no retries.
  Response perform(const Request& request);

 private:
  void prepare(const Request& request, struct Exchange& exchange);

  void* curl_;
  std::string sigv4_;
  const S3Config* config_;
  const Credentials* credentials_;
};

// Sends a request, retrying what may pass on a second try (transport failures, 429, 500, 502,
// 503, 504) up to config.retries times after exponential back-off with full jitter, and counts
// requests, retries, throttling responses and back-off time. Returns the last response; gives up
// early once `stop` is set (another request failed). With `latency`, each attempt's time from
// sending to the last byte of the answer goes into it.
Response send(Connection& connection, const Request& request, const S3Config& config,
              Counters& counters, const std::atomic<bool>* stop = nullptr,
              LatencyHistogram* latency = nullptr);

// "PUT s3://bucket/key: HTTP 403 AccessDenied: Access Denied", or the transport error with the
// URL, for an IoError.
std::string describe_failure(const Request& request, const Response& response);

}  // namespace ckpt::backends::s3
