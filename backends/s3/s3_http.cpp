#include "backends/s3/s3_http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "backends/s3/s3_xml.hpp"

namespace ckpt::backends::s3 {

// A position in a list of byte runs (Segment, Piece): run `index`, byte `offset` of it.
struct Cursor {
  std::size_t index = 0;
  std::uint64_t offset = 0;

  // The bytes that fit in `room` from here, inside a run of `length` bytes.
  std::size_t take(std::size_t room, std::uint64_t length) const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(room, length - offset));
  }
  // Moves `n` bytes on inside a run of `length` bytes, to the next run at its end.
  void advance(std::size_t n, std::uint64_t length) {
    offset += n;
    if (offset == length) {
      ++index;
      offset = 0;
    }
  }
};

// The state of one attempt, which libcurl's callbacks advance.
struct Exchange {
  const Request* request = nullptr;
  Response* response = nullptr;
  CURL* curl = nullptr;
  Cursor upload;
  Cursor download;
  curl_slist* headers = nullptr;
  ~Exchange() { curl_slist_free_all(headers); }
};

namespace {

// Error bodies are kept up to this many bytes: the message needs their start.
constexpr std::size_t kMaxText = 1 << 20;
constexpr long kMaxBackoffMs = 20000;

void initialise_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::size_t read_body(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const std::vector<Segment>& segments = x.request->upload;
  std::size_t filled = 0;
  const std::size_t room = size * count;
  while (filled < room && x.upload.index < segments.size()) {
    const Segment& s = segments[x.upload.index];
    const std::size_t n = x.upload.take(room - filled, s.length);
    if (s.data == nullptr) {
      std::memset(buffer + filled, 0, n);
    } else {
      std::memcpy(buffer + filled, s.data + x.upload.offset, n);
    }
    filled += n;
    x.upload.advance(n, s.length);
  }
  return filled;
}

// 2xx bodies of requests with download pieces fill the pieces; anything else is kept as text.
std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const std::size_t total = size * count;
  long status = 0;
  curl_easy_getinfo(x.curl, CURLINFO_RESPONSE_CODE, &status);
  const std::vector<Piece>& pieces = x.request->download;
  if (status < 200 || status >= 300) {
    const std::size_t keep =
        std::min(total, kMaxText - std::min(kMaxText, x.response->text.size()));
    x.response->text.append(data, keep);
    return total;
  }
  if (pieces.empty()) {
    x.response->text.append(data, total);
    return total;
  }
  std::size_t used = 0;
  while (used < total) {
    if (x.download.index == pieces.size()) {
      x.response->overflow = true;
      return 0;  // longer than asked for: libcurl stops with CURLE_WRITE_ERROR
    }
    const Piece& p = pieces[x.download.index];
    const std::size_t n = x.download.take(total - used, p.length);
    std::memcpy(p.data + x.download.offset, data + used, n);
    used += n;
    x.response->received += n;
    x.download.advance(n, p.length);
  }
  return total;
}

std::size_t read_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const std::string line(data, size * count);
  if (line.size() > 5 && strncasecmp(line.c_str(), "etag:", 5) == 0) {
    const auto begin = line.find_first_not_of(" \t", 5);
    const auto end = line.find_last_not_of(" \t\r\n");
    if (begin != std::string::npos && end >= begin)
      x.response->etag = line.substr(begin, end - begin + 1);
  }
  return size * count;
}

bool retryable(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

bool retryable(const Response& response) {
  if (response.status == 0) return response.retryable_transport;
  const long s = response.status;
  // CompleteMultipartUpload may answer 200 with an <Error> body: S3 says to retry it.
  const bool error_in_ok = s == 200 && response.text.find("<Error>") != std::string::npos;
  return s == 429 || s == 500 || s == 502 || s == 503 || s == 504 || error_in_ok;
}

// Full jitter: a random wait up to backoff_ms * 2^attempt, at most kMaxBackoffMs.
std::chrono::microseconds backoff(const S3Config& config, int attempt) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const long ceiling =
      std::min<long>(kMaxBackoffMs, static_cast<long>(config.backoff_ms) << std::min(attempt, 20));
  std::uniform_int_distribution<long> wait(0, ceiling * 1000);
  return std::chrono::microseconds(wait(random));
}

}  // namespace

Connection::Connection(const S3Config& config, const Credentials& credentials)
    : curl_(nullptr),
      sigv4_("aws:amz:" + config.region + ":s3"),
      config_(&config),
      credentials_(&credentials) {
  initialise_curl_once();
  curl_ = curl_easy_init();
  if (curl_ == nullptr) throw std::runtime_error("s3: curl_easy_init failed");
}

Connection::~Connection() {
  curl_easy_cleanup(static_cast<CURL*>(curl_));
}

void Connection::prepare(const Request& request, Exchange& x) {
  CURL* curl = x.curl;
  curl_easy_reset(curl);  // keeps the open connection and the DNS cache
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  // A connection that moves nothing for a minute is dead (no overall limit: parts are large).
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4_.c_str());
  curl_easy_setopt(curl, CURLOPT_USERNAME, credentials_->key_id.c_str());
  curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials_->secret.c_str());
  if (!config_->ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, config_->ca_file.c_str());
  // The payload is not hashed (it would cost a pass over every byte); TLS protects it in transit.
  x.headers = curl_slist_append(x.headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  if (!credentials_->session_token.empty()) {
    x.headers = curl_slist_append(x.headers,
                                  ("x-amz-security-token: " + credentials_->session_token).c_str());
  }
  for (const std::string& header : request.headers)
    x.headers = curl_slist_append(x.headers, header.c_str());
  if (request.range) {
    const std::string range = "Range: bytes=" + std::to_string(request.range->first) + "-" +
                              std::to_string(request.range->second);
    x.headers = curl_slist_append(x.headers, range.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &read_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &x);
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    std::uint64_t length = 0;
    for (const Segment& s : request.upload) length += s.length;
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &read_body);
    curl_easy_setopt(curl, CURLOPT_READDATA, &x);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(length));
  } else if (request.method == "POST") {
    x.headers = curl_slist_append(x.headers, "Content-Type: application/xml");
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "DELETE") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, x.headers);
}

Response Connection::perform(const Request& request) {
  Response response;
  Exchange x;
  x.request = &request;
  x.response = &response;
  x.curl = static_cast<CURL*>(curl_);
  char error[CURL_ERROR_SIZE] = "";
  prepare(request, x);
  curl_easy_setopt(x.curl, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(x.curl);
  curl_easy_setopt(x.curl, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK && !response.overflow) {
    response.status = 0;
    response.transport_error = error[0] != '\0' ? error : curl_easy_strerror(code);
    response.retryable_transport = retryable(code);
    response.tls_refused = code == CURLE_PEER_FAILED_VERIFICATION ||
                           code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CERTPROBLEM;
    return response;
  }
  curl_easy_getinfo(x.curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_off_t first_byte = 0;
  if (curl_easy_getinfo(x.curl, CURLINFO_STARTTRANSFER_TIME_T, &first_byte) == CURLE_OK &&
      first_byte > 0)
    response.first_byte_us = static_cast<std::uint64_t>(first_byte);
  return response;
}

Response send(Connection& connection, const Request& request, const S3Config& config,
              Counters& counters, const std::atomic<bool>* stop, LatencyHistogram* latency) {
  using Clock = std::chrono::steady_clock;
  for (int attempt = 0;; ++attempt) {
    counters.request(request.kind, request.endpoint);
    const auto start = Clock::now();
    Response response = connection.perform(request);
    if (latency != nullptr) {
      latency->record(static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()));
    }
    if (request.kind == RequestKind::get || request.kind == RequestKind::ranged_get)
      counters.first_byte(response.first_byte_us);
    if (response.status == 503 || response.status == 429) counters.throttled();
    if (!retryable(response) || attempt >= config.retries) return response;
    if (stop != nullptr && stop->load()) return response;
    const auto wait = backoff(config, attempt);
    std::this_thread::sleep_for(wait);
    counters.backoff(static_cast<std::uint64_t>(wait.count()));
    counters.retry();
  }
}

std::string describe_failure(const Request& request, const Response& response) {
  std::string what = request.method + " " + request.name;
  if (response.status == 0) return what + " (" + request.url + "): " + response.transport_error;
  if (response.overflow) return what + ": the server sent more bytes than the range asked for";
  what += ": HTTP " + std::to_string(response.status);
  if (const std::string code = xml_value(response.text, "Code"); !code.empty()) what += " " + code;
  if (const std::string message = xml_value(response.text, "Message"); !message.empty())
    what += ": " + message;
  return what;
}

}  // namespace ckpt::backends::s3
