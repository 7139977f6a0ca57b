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

}  // namespace

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
  p.integer(elements);
  p.add(2);  // TUPLE BINPERSID
  p.put();
  p.integer(0);  // the storage offset
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
