#include "backends/s3/s3_endpoints.hpp"

#include <stdexcept>

namespace ckpt::backends::s3 {

Endpoints::Endpoints(const S3Config& config, int rank)
    : home_(config.endpoint_index(rank)),
      least_loaded_(config.endpoint_choice == EndpointChoice::least_loaded),
      in_flight_(config.endpoints.size(), 0) {
  for (const std::string& endpoint : config.endpoints)
    addressing_.push_back(Addressing{endpoint, config.bucket, config.virtual_addressing});
}

Endpoints::Lease Endpoints::choose() {
  const std::lock_guard lock(mutex_);
  std::size_t best = home_;
  if (least_loaded_) {
    for (std::size_t k = 1; k < in_flight_.size(); ++k) {
      const std::size_t e = (home_ + k) % in_flight_.size();
      if (in_flight_[e] < in_flight_[best]) best = e;
    }
  }
  ++in_flight_[best];
  return Lease(*this, best);
}

void Endpoints::release(std::size_t index) {
  const std::lock_guard lock(mutex_);
  --in_flight_[index];
}

Request Endpoints::routed(const Request& request, std::size_t index) const {
  Request moved = request;
  moved.endpoint = index;
  if (index == home_) return moved;
  const std::string from = home().base();
  if (!request.url.starts_with(from)) {
    throw std::logic_error("s3: request URL " + request.url +
                           " is not on the endpoint it was built for");
  }
  moved.url = at(index).base() + request.url.substr(from.size());
  return moved;
}

}  // namespace ckpt::backends::s3
