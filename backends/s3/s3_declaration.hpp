#pragma once

// What the s3 backend declares about itself (header-only: the registry lists it whether or not
// the backend is compiled in).
#include <cstdint>

#include "backends/backend.hpp"

namespace ckpt::backends::s3 {

// The protocol's limits on multipart uploads: every part but the last at least 5 MiB, at most
// 5 GiB each (also the largest single PUT), at most 10,000 parts.
inline constexpr std::int64_t kMinPartSize = std::int64_t{5} << 20;
inline constexpr std::int64_t kMaxPartSize = std::int64_t{5} << 30;
inline constexpr std::uint64_t kMaxParts = 10000;

inline OptionTable option_table() {
  return {
      {.name = "endpoint",
       .type = OptionType::text,
       .default_value = "",
       .help =
           "base URL of the S3 service (http://host:port or https://host), or several separated "
           "by commas, each serving the same bucket (nodes or gateways of one store): which one a "
           "request goes to is backend.s3.endpoint_choice; required"},
      {.name = "endpoint_choice",
       .type = OptionType::choice,
       .default_value = "rank",
       .help = "rank: process p sends every request to endpoint p modulo their count; "
               "least_loaded: each request goes to the endpoint with the fewest requests in "
               "flight from this process, ties to the first from the rank's own endpoint on (so "
               "the choice is deterministic); results count the requests each endpoint got",
       .choices = {"rank", "least_loaded"}},
      {.name = "bucket",
       .type = OptionType::text,
       .default_value = "",
       .help = "bucket the objects go to; it must exist (checked before any data moves); required"},
      {.name = "prefix",
       .type = OptionType::text,
       .default_value = "",
       .help = "key prefix: a file's object key is prefix/path, the path without its leading '/'"},
      {.name = "region",
       .type = OptionType::text,
       .default_value = "us-east-1",
       .help = "region the requests are signed for (SigV4)"},
      {.name = "addressing",
       .type = OptionType::choice,
       .default_value = "path",
       .help = "path: endpoint/bucket/key (MinIO, Ceph RGW, local servers); virtual: "
               "bucket.host/key (AWS)",
       .choices = {"path", "virtual"}},
      {.name = "part_size",
       .type = OptionType::size,
       .default_value = "16777216",
       .help = "objects larger than this go as multipart uploads in parts of this size (the "
               "protocol's minimum is 5 MiB, except for the last part); smaller ones as one PUT",
       .min = kMinPartSize,
       .max = kMaxPartSize},
      {.name = "concurrency",
       .type = OptionType::integer,
       .default_value = "8",
       .help = "requests in flight per process, each on its own connection: parts of multipart "
               "uploads, whole small objects, ranged GETs",
       .min = 1,
       .max = 1024},
      {.name = "retries",
       .type = OptionType::integer,
       .default_value = "5",
       .help = "retries of a request that failed to connect or got HTTP 429, 500, 502, 503 "
               "(SlowDown) or 504, after exponential back-off with full jitter",
       .min = 0,
       .max = 100},
      {.name = "backoff_ms",
       .type = OptionType::integer,
       .default_value = "100",
       .help = "back-off base: retry n waits a random time up to backoff_ms * 2^n, at most 20 s",
       .min = 1,
       .max = 60000},
      {.name = "ca_file",
       .type = OptionType::text,
       .default_value = "",
       .help = "PEM file of the certificate authorities that sign an https endpoint's certificate; "
               "default: the system's"},
  };
}

inline Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{
      .request_latency = true,
      .object_store = true,
      .advice = {
          {"threads", "s3 keeps backend.s3.concurrency requests in flight per process; set that"},
          {"direct", "an object store has no O_DIRECT; leave backend.direct false"},
          {"fallocate", "objects are written whole; leave backend.fallocate false"},
          {"shared_file",
           "an object is written whole by one process, so several processes cannot write "
           "extents of one file; use strategy.mapping = \"file_per_rank\" or "
           "\"file_per_tensor\""}}};
}

}  // namespace ckpt::backends::s3
