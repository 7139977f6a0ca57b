#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/formats/pickle_bytes.hpp"
#include "workloads/dtype.hpp"

namespace ckpt::harness {

// Memo indices of what torch.save's pickle reuses for every tensor after the first: the
// _rebuild_tensor_v2 global, the persistent id's "storage" and "cpu", the storage class and the
// OrderedDict global of the backward hooks.
struct TensorMemo {
  std::uint64_t rebuild = 0, storage = 0, storage_class = 0, cpu = 0, ordered_dict = 0;
};

// Counts a contiguous tensor that torch.save pickles with a storage of its own, named
// `storage_key` (the archive's data/<key>): the persistent id with the storage's element count,
// the offset, size and stride, and the memo puts of the key, the tuples, the hooks' OrderedDict
// and the rebuilt tensor.
void count_tensor_with_own_storage(PickleBytes& p, const std::vector<std::int64_t>& shape,
                                   std::size_t storage_key, const TensorMemo& memo);

// The first tensor of a pickle, which spells out what the others reuse: the rebuild function,
// MARK MARK, "storage", the storage class of `dtype`, the storage's key and "cpu", each put in
// the memo.
void count_first_persistent_id(PickleBytes& p, workloads::Dtype dtype, std::size_t storage_key);

// What follows the storage's key and device in any tensor's pickle: the storage's element count
// closing the persistent id, the offset, size and stride, the requires_grad flag, the hooks'
// OrderedDict (memo index `ordered_dict`) and the memo puts of the tuples and the tensor; for a
// tensor that is its storage, and for a view of `storage_elements` at `storage_offset`.
void count_tensor_after_storage_key(PickleBytes& p, const std::vector<std::int64_t>& shape,
                                    std::uint64_t ordered_dict);
void count_view_after_storage_key(PickleBytes& p, const std::vector<std::int64_t>& shape,
                                  std::int64_t storage_elements, std::int64_t storage_offset,
                                  std::uint64_t ordered_dict);

}  // namespace ckpt::harness
