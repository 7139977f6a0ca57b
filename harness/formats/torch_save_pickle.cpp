#include "harness/formats/torch_save_pickle.hpp"

#include <algorithm>

namespace ckpt::harness {
namespace {

// A tuple of ints besides the ints: EMPTY_TUPLE (not memoized), TUPLE1 to TUPLE3 or
// MARK ... TUPLE, then its memo put.
void count_tuple_ops(PickleBytes& p, std::size_t size) {
  if (size == 0) {
    p.add(1);
    return;
  }
  p.add(size <= 3 ? 1 : 2);
  p.put();
}

constexpr std::uint64_t kRebuildGlobal = 33;  // GLOBAL torch._utils _rebuild_tensor_v2

// GLOBAL "torch\n<Class>Storage\n" of a dtype's storage class.
std::uint64_t storage_class_global_bytes(workloads::Dtype dtype) {
  switch (dtype) {
    case workloads::Dtype::fp16:
      return 19;  // HalfStorage
    case workloads::Dtype::fp32:
      return 20;  // FloatStorage
    case workloads::Dtype::fp64:
      return 21;  // DoubleStorage
    case workloads::Dtype::u8:
      return 19;  // ByteStorage
    case workloads::Dtype::bf16:
    case workloads::Dtype::fp8:
      break;
  }
  return 23;  // BFloat16Storage
}

}  // namespace

void count_first_persistent_id(PickleBytes& p, workloads::Dtype dtype, std::size_t storage_key) {
  p.add(kRebuildGlobal + 2);  // and MARK MARK
  p.put();
  p.text("storage");
  p.put();
  p.add(storage_class_global_bytes(dtype));
  p.put();
  p.text(std::to_string(storage_key));
  p.put();
  p.text("cpu");
  p.put();
}

void count_tensor_with_own_storage(PickleBytes& p, const std::vector<std::int64_t>& shape,
                                   std::size_t storage_key, const TensorMemo& memo) {
  p.get(memo.rebuild);
  p.add(2);  // MARK MARK
  p.get(memo.storage);
  p.get(memo.storage_class);
  p.text(std::to_string(storage_key));
  p.put();
  p.get(memo.cpu);
  count_tensor_after_storage_key(p, shape, memo.ordered_dict);
}

void count_tensor_after_storage_key(PickleBytes& p, const std::vector<std::int64_t>& shape,
                                    std::uint64_t ordered_dict) {
  std::int64_t elements = 1;
  for (const std::int64_t d : shape) elements *= d;
  count_view_after_storage_key(p, shape, elements, 0, ordered_dict);
}

void count_view_after_storage_key(PickleBytes& p, const std::vector<std::int64_t>& shape,
                                  std::int64_t storage_elements, std::int64_t storage_offset,
                                  std::uint64_t ordered_dict) {
  p.integer(storage_elements);
  p.add(2);  // TUPLE BINPERSID
  p.put();
  p.integer(storage_offset);
  for (const std::int64_t d : shape) p.integer(d);
  count_tuple_ops(p, shape.size());
  std::int64_t step = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    p.integer(step);
    step *= std::max<std::int64_t>(shape[d], 1);
  }
  count_tuple_ops(p, shape.size());
  p.add(1);  // NEWFALSE or NEWTRUE
  p.get(ordered_dict);
  p.add(2);  // EMPTY_TUPLE REDUCE
  p.put();
  p.add(1);  // TUPLE
  p.put();
  p.add(1);  // REDUCE
  p.put();
}

}  // namespace ckpt::harness
