#pragma once

// Bytes a checkpoint file holds that ckptbench does not model byte for byte (torch.save's zip
// records, DeepSpeed's engine state): recognisable text of the real bytes' size, which fill_plans
// writes into the buffer and verify_plans checks, as it does a FileHeader.

#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::harness {

// `bytes` bytes: `head` (cut to fit), then the alphabet over and over.
std::string stand_in_text(std::string_view head, std::uint64_t bytes);

}  // namespace ckpt::harness
