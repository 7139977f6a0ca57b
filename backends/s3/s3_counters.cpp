#include "backends/s3/s3_counters.hpp"

namespace ckpt::backends::s3 {
namespace {

constexpr std::array<const char*, kRequestKinds> kNames = {"put",  "part",   "get",  "ranged_get",
                                                           "list", "delete", "head", "multipart"};

}  // namespace

void Counters::reset() {
  for (auto& count : requests_) count = 0;
  retries_ = 0;
  throttled_ = 0;
  backoff_us_ = 0;
  first_byte_us_ = 0;
  for (auto& count : per_endpoint_) count = 0;
}

std::map<std::string, std::uint64_t> Counters::snapshot() const {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t k = 0; k < kRequestKinds; ++k)
    out[std::string("requests.") + kNames[k]] = requests_[k].load();
  out["retries"] = retries_.load();
  out["throttled"] = throttled_.load();
  out["backoff_us"] = backoff_us_.load();
  out["first_byte_us"] = first_byte_us_.load();
  for (std::size_t e = 0; e < per_endpoint_.size(); ++e)
    out["endpoint." + std::to_string(e) + ".requests"] = per_endpoint_[e].load();
  return out;
}

}  // namespace ckpt::backends::s3
