#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/object_store.hpp"
#include "backends/options.hpp"
#include "backends/s3/s3_config.hpp"
#include "backends/s3/s3_counters.hpp"
#include "backends/s3/s3_endpoints.hpp"
#include "backends/s3/s3_http.hpp"
#include "backends/s3/s3_url.hpp"

namespace ckpt::backends::s3 {

// An S3 object store through libcurl, requests signed with SigV4 (credentials from the
// environment only). Each file of a plan is one object, keyed object_key(prefix, path).
//
// Write: an object up to part_size bytes is one PUT in `transfer`; a larger one a multipart
// upload, created and its parts (part_size bytes, the last shorter) sent in `transfer`, and
// completed in `sync`, where it becomes visible: so `sync` is the commit of the large objects.
// An upload that fails, or is not completed, is aborted. Bytes between extents are zeros. A file
// that several processes write (FilePlan::shared) is refused: an object is written whole, once.
// Read: ranged GETs of the extents, adjacent extents coalesced, cut at part_size bytes.
// Requests of one call run `concurrency` at a time, each on its own kept-alive connection, each to
// the endpoint backend.s3.endpoint_choice picks for it (Endpoints).
class S3Backend final : public Backend, public ObjectStore {
 public:
  // Checks the options and the credentials (std::invalid_argument naming the key or variable),
  // then that the bucket answers a HEAD at each endpoint, endpoint e checked by process e modulo
  // the group's size: an unreachable endpoint, an https endpoint whose certificate does not verify
  // (backend.s3.ca_file), refused credentials or a missing bucket is a std::invalid_argument
  // saying which, before any data moves.
  S3Backend(const IoSettings& settings, const BackendOptions& options, const ProcessGroup& group);
  ~S3Backend() override;

  std::string_view name() const override { return "s3"; }
  Capabilities capabilities() const override;
  // Requests by kind, retries, throttling responses (503, 429) and back-off time of the last
  // write or read (s3::Counters).
  std::map<std::string, std::uint64_t> counters() const override { return counters_.snapshot(); }
  const Counters& request_counters() const { return counters_; }
  // The process's own endpoint (Endpoints::home).
  const std::string& endpoint() const { return addressing_.endpoint; }

  // ObjectStore, on the first connection, outside the plans' counters: GET, ranged GET, PUT, LIST
  // (1000 keys a page), DeleteObjects (1000 keys a request), and ListMultipartUploads with an abort
  // per upload.
  std::optional<std::string> get(const std::string& path) override;
  std::optional<std::string> get_range(const std::string& path, std::uint64_t offset,
                                       std::uint64_t length) override;
  void put(const std::string& path, std::string_view bytes) override;
  bool create(const std::string& path, std::string_view bytes) override;
  std::vector<StoredObject> list(const std::string& prefix) override;
  void remove(const std::vector<std::string>& paths) override;
  std::size_t abort_uploads(const std::string& prefix) override;
  std::map<std::string, std::uint64_t> take_counters() override;

 protected:
  // Write: refuses shared files and objects that would need more than 10,000 parts. No request.
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  // Write: completes the multipart uploads. Read: nothing.
  void sync(OpenFiles& files, Direction direction) override;
  void close(OpenFiles& files) override;

 private:
  class Objects;
  struct Target;

  // HEAD of the bucket at endpoint `index`.
  void check_bucket(std::size_t index);
  // send() of `request` (built against addressing_) to the endpoint chosen for it.
  Response route(Connection& connection, const Request& request, Counters& counters,
                 const std::atomic<bool>* stop = nullptr, LatencyHistogram* latency = nullptr);
  void upload(Objects& objects, const IoPlan& plan, MemoryView memory);
  void download(Objects& objects, const IoPlan& plan, MemoryView memory);
  std::string create_upload(const std::string& key);
  void complete_uploads(Objects& objects);
  void abort_open_uploads(Objects& objects) noexcept;
  // object_key of a plan's path; IoError for a path that names no object.
  std::string key_of(const std::string& path) const;
  // One request of the ObjectStore calls; throws IoError unless it succeeded (or, with
  // `missing_ok`, found nothing: 404).
  Response store_request(const Request& request, bool missing_ok = false);
  using Query = std::vector<std::pair<std::string, std::string>>;
  // One page of a listing (ListObjectsV2, ListMultipartUploads): the answer's XML.
  std::string list_page(const Query& query, const std::string& what);
  // Sends every request, `concurrency` at a time; throws IoError for the first that failed.
  std::vector<Response> send_all(const std::vector<Request>& requests);
  Connection& connection(std::size_t k);

  IoSettings settings_;
  S3Config config_;
  Credentials credentials_;
  Addressing addressing_;  // of the home endpoint, which requests are built against
  Endpoints endpoints_;
  Counters counters_;        // of the last write or read
  Counters store_counters_;  // of the ObjectStore calls since take_counters()
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace ckpt::backends::s3
