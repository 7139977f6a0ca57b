#pragma once

// torch.save's framing around the items of a .distcp file (strategy.framing): DCP's
// FileSystemWriter torch.saves every tensor item into the file's stream, so each item is a whole
// zip archive (harness/formats/torch_save_size) whose data/0 record holds the tensor's bytes. The
// plan places the archive's bytes before the tensor's and after them; the bytes themselves are a
// stand-in of their exact size (stand_in_text), not zip records.

#include <cstdint>
#include <string>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

struct ItemFraming {
  std::uint64_t before = 0;  // the archive's bytes before the tensor's
  std::uint64_t after = 0;   // and after them

  std::uint64_t item_bytes(std::uint64_t tensor_bytes) const {
    return before + tensor_bytes + after;
  }
};

// Whether a layout's data files are .distcp files of items (dcp, megatron_dist).
bool writes_distcp_items(DirectoryLayout layout);

// Whether the case frames each item of its files: strategy.framing in effect and .distcp files.
bool frames_items(const Case& c);

// The archive torch.save writes around `shard` at model.scale `scale` (a shard that is not a whole
// block of its slice pickles as one dimension).
ItemFraming archive_framing(const workloads::Shard& shard, std::int64_t scale);

// The archive torch.save writes around `shard` at the case's model.scale (a shard that is not a
// whole block of its slice, a ZeRO flat range, pickles as one dimension); none where the case
// frames no items.
ItemFraming item_framing(const workloads::Shard& shard, const Case& c);

// The stand-in bytes of the framing before (`before` true) or after `shard`.
std::string framing_text(const workloads::Shard& shard, std::uint64_t bytes, bool before);

}  // namespace ckpt::harness
