#include "backends/s3/s3_backend.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "backends/s3/s3_declaration.hpp"
#include "backends/s3/s3_extents.hpp"
#include "backends/s3/s3_objects.hpp"

namespace ckpt::backends::s3 {
namespace {

Credentials required_credentials(const BackendOptions& options) {
  if (const std::string problem = config_problem(options); !problem.empty())
    throw std::invalid_argument(problem);
  return *credentials_from_environment();
}

[[noreturn]] void throw_refused(const std::string& path, const std::string& why) {
  throw IoError("s3: write " + path + ": " + why);
}

// HTTP 416: the range starts at or past the object's end.
constexpr int kRangePastEnd = 416;

}  // namespace

S3Backend::S3Backend(const IoSettings& settings, const BackendOptions& options,
                     const ProcessGroup& group)
    : settings_(settings),
      config_(parse_config(options)),
      credentials_(required_credentials(options)),
      endpoints_(config_, group.rank),
      counters_(config_.endpoints.size()),
      store_counters_(config_.endpoints.size()) {
  addressing_ = endpoints_.home();
  const auto processes = static_cast<std::size_t>(std::max(1, group.size));
  for (std::size_t e = static_cast<std::size_t>(std::max(0, group.rank)); e < endpoints_.count();
       e += processes)
    check_bucket(e);
}

S3Backend::~S3Backend() = default;

Capabilities S3Backend::capabilities() const {
  return declared_capabilities(OptionValues("s3", option_table(), {}));
}

Connection& S3Backend::connection(std::size_t k) {
  while (connections_.size() <= k)
    connections_.push_back(std::make_unique<Connection>(config_, credentials_));
  return *connections_[k];
}

Response S3Backend::route(Connection& connection, const Request& request, Counters& counters,
                          const std::atomic<bool>* stop, LatencyHistogram* latency) {
  const Endpoints::Lease lease = endpoints_.choose();
  return send(connection, endpoints_.routed(request, lease.index()), config_, counters, stop,
              latency);
}

// HEAD of the bucket: reachable, its certificate verified, credentials accepted, bucket there.
void S3Backend::check_bucket(std::size_t index) {
  const Addressing& at = endpoints_.at(index);
  const Request head{.kind = RequestKind::head,
                     .method = "HEAD",
                     .url = at.bucket_url(),
                     .name = "s3://" + config_.bucket,
                     .endpoint = index};
  const Response r = send(connection(0), head, config_, counters_);
  const std::string where = "backend.s3.endpoint \"" + at.endpoint + "\"";
  if (r.tls_refused) {
    const std::string authorities =
        config_.ca_file.empty()
            ? "the system's certificate authorities (backend.s3.ca_file is not set)"
            : "backend.s3.ca_file = \"" + config_.ca_file + "\"";
    throw std::invalid_argument("s3: the certificate of " + where + " does not verify against " +
                                authorities + ": " + r.transport_error +
                                "; set backend.s3.ca_file to the PEM file of the certificate "
                                "authority that signed it");
  }
  if (r.status == 0) {
    throw std::invalid_argument("s3: cannot reach " + where + ": " + r.transport_error + " (HEAD " +
                                head.url + "); check the URL and that the service is running");
  }
  if (r.status == 403 || r.status == 401) {
    throw std::invalid_argument(
        "s3: " + where + " refused the credentials for bucket `" + config_.bucket + "` (HTTP " +
        std::to_string(r.status) +
        " on HEAD): check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN in the "
        "environment, and backend.s3.region");
  }
  if (r.status == 404) {
    throw std::invalid_argument("s3: bucket `" + config_.bucket + "` does not exist at " + where +
                                " (HTTP 404 on HEAD): create it, or fix backend.s3.bucket");
  }
  if (!r.ok()) {
    throw std::invalid_argument("s3: HEAD " + head.url + " at " + where + " answered HTTP " +
                                std::to_string(r.status) +
                                ": check backend.s3.region and backend.s3.addressing");
  }
}

std::unique_ptr<Backend::OpenFiles> S3Backend::open(const IoPlan& plan, Direction direction) {
  counters_.reset();
  auto objects = std::make_unique<Objects>(*this, direction);
  for (const FilePlan& file : plan.files) {
    ObjectState state;
    state.key = key_of(file.path);
    state.size = object_size(file);
    for (const Extent& e : file.extents) state.data_bytes += e.length;
    if (direction == Direction::write && file.shared) {
      throw_refused(
          file.path,
          declared_capabilities(OptionValues("s3", option_table(), {})).advice.at("shared_file"));
    }
    const std::uint64_t parts = (state.size + config_.part_size - 1) / config_.part_size;
    if (direction == Direction::write && parts > kMaxParts) {
      throw_refused(file.path,
                    std::to_string(state.size) + " bytes need " + std::to_string(parts) +
                        " parts of backend.s3.part_size = " + std::to_string(config_.part_size) +
                        ", more than the 10000 a multipart upload may have; raise "
                        "part_size to at least " +
                        std::to_string((state.size + kMaxParts - 1) / kMaxParts));
    }
    objects->objects.push_back(std::move(state));
  }
  return objects;
}

void S3Backend::transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                         Direction direction) {
  auto& objects = static_cast<Objects&>(files);
  if (direction == Direction::write) {
    upload(objects, plan, memory);
  } else {
    download(objects, plan, memory);
  }
}

void S3Backend::sync(OpenFiles& files, Direction direction) {
  if (direction == Direction::write) complete_uploads(static_cast<Objects&>(files));
}

void S3Backend::close(OpenFiles&) {}

void S3Backend::download(Objects& objects, const IoPlan& plan, MemoryView memory) {
  std::vector<Request> requests;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    const std::string& key = objects.objects[i].key;
    for (RangeRead& read : range_reads(plan.files[i], memory, config_.part_size)) {
      requests.push_back(Request{.kind = RequestKind::ranged_get,
                                 .url = addressing_.object_url(key),
                                 .name = addressing_.name(key),
                                 .download = std::move(read.pieces),
                                 .range = {{read.first, read.first + read.length - 1}}});
    }
  }
  const std::vector<Response> responses = send_all(requests);
  for (std::size_t k = 0; k < requests.size(); ++k) {
    const Request& r = requests[k];
    const std::uint64_t wanted = r.range->second - r.range->first + 1;
    const std::string what = "s3: GET " + r.name + " bytes " + std::to_string(r.range->first) +
                             "-" + std::to_string(r.range->second) + ": ";
    const bool past_end = responses[k].status == kRangePastEnd;
    // A whole object (200) in place of the range would have put its first bytes at the range's
    // memory: never accepted as the range.
    if (responses[k].status != 206 && !past_end) {
      throw IoError(what + "HTTP " + std::to_string(responses[k].status) +
                    " instead of 206: the server ignored the Range header");
    }
    const std::uint64_t received = past_end ? 0 : responses[k].received;
    if (received != wanted) {
      throw IoError(what + "object shorter than the plan (" + std::to_string(received) + " of " +
                    std::to_string(wanted) + " bytes)");
    }
  }
}

std::vector<Response> S3Backend::send_all(const std::vector<Request>& requests) {
  std::vector<Response> responses(requests.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::string failure;
  std::mutex failure_mutex;
  const std::size_t workers =
      std::min(requests.size(), static_cast<std::size_t>(config_.concurrency));
  // One histogram per worker, merged after the join: no sharing between requests.
  std::vector<LatencyHistogram> latencies(settings_.request_latency ? workers : 0);
  const auto work = [&](std::size_t w) {
    LatencyHistogram* latency = latencies.empty() ? nullptr : &latencies[w];
    for (std::size_t k; !stop && (k = next++) < requests.size();) {
      responses[k] = route(*connections_[w], requests[k], counters_, &stop, latency);
      const bool error_in_ok = requests[k].kind == RequestKind::multipart &&
                               responses[k].text.find("<Error>") != std::string::npos;
      // A range from past the object's end: download names the object as shorter than planned.
      const bool past_end =
          requests[k].kind == RequestKind::ranged_get && responses[k].status == kRangePastEnd;
      if ((!responses[k].ok() && !past_end) || error_in_ok) {
        const std::lock_guard lock(failure_mutex);
        if (failure.empty()) failure = describe_failure(requests[k], responses[k]);
        stop = true;
      }
    }
  };
  for (std::size_t w = 0; w < workers; ++w) connection(w);  // made here, not in the threads
  if (workers == 1) {
    work(0);
  } else if (workers > 1) {
    std::vector<std::jthread> threads;
    for (std::size_t w = 0; w < workers; ++w) threads.emplace_back([&work, w] { work(w); });
  }
  for (const LatencyHistogram& latency : latencies) add_request_latency(latency);
  if (!failure.empty()) throw IoError("s3: " + failure);
  return responses;
}

}  // namespace ckpt::backends::s3
