#pragma once

#include <string>
#include <string_view>

namespace ckpt::backends::s3 {

// The CRC-32 (IEEE) of `bytes` in base64, as the x-amz-checksum-crc32 header carries it (a
// DeleteObjects request must carry a checksum of its body).
std::string crc32_base64(std::string_view bytes);

}  // namespace ckpt::backends::s3
