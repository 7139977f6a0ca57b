#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "backends/s3/s3_config.hpp"
#include "backends/s3/s3_http.hpp"
#include "backends/s3/s3_url.hpp"

namespace ckpt::backends::s3 {

// The endpoints of backend.s3.endpoint as one process uses them, and which one each request goes
// to (backend.s3.endpoint_choice). Requests are built against home(); route() moves one to the
// endpoint chosen for it. Thread-safe: the workers of a call choose at once.
class Endpoints {
 public:
  Endpoints(const S3Config& config, int rank);
  Endpoints(const Endpoints&) = delete;
  Endpoints& operator=(const Endpoints&) = delete;

  // The process's own endpoint (rank modulo their count): where every request goes under
  // EndpointChoice::rank, and where ties start under least_loaded.
  const Addressing& home() const { return addressing_[home_]; }
  std::size_t home_index() const { return home_; }
  const Addressing& at(std::size_t index) const { return addressing_.at(index); }
  std::size_t count() const { return addressing_.size(); }

  // A request in flight to the endpoint chosen for it, until the Lease ends.
  class Lease {
   public:
    Lease(Endpoints& endpoints, std::size_t index) : endpoints_(&endpoints), index_(index) {}
    ~Lease() { endpoints_->release(index_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    std::size_t index() const { return index_; }

   private:
    Endpoints* endpoints_;
    std::size_t index_;
  };

  // Under least_loaded: the endpoint with the fewest requests of this process in flight, the
  // first of those from home() on in the list's order (wrapping round); else home().
  Lease choose();
  // `request` (built against home()) for endpoint `index`: its URL's base replaced, its
  // endpoint index set.
  Request routed(const Request& request, std::size_t index) const;

 private:
  void release(std::size_t index);

  std::vector<Addressing> addressing_;
  std::size_t home_ = 0;
  bool least_loaded_ = false;
  std::mutex mutex_;
  std::vector<int> in_flight_;
};

}  // namespace ckpt::backends::s3
