#include "harness/engine/flush_codec.hpp"

namespace ckpt::harness {

const CodecWork& FlushCodec::compress(const std::vector<RankPlan>& plans,
                                      const ProcessBuffer& layout, const std::byte* data) {
  last_ = CodecWork{};
  last_ = compress_plans(plans, layout, data, c_, stored_, frames_);
  return last_;
}

void FlushCodec::point(FlushTarget& target) const {
  const backends::MemoryView view = frames_.view();
  target.plans.clear();
  target.memory.clear();
  for (std::size_t r = 0; r < stored_.size(); ++r) {
    target.plans.push_back(stored_[r].io);
    target.memory.push_back({view.data + frames_.offset(r), stored_[r].buffer_bytes, view.kind});
  }
}

void FlushCodec::record(std::size_t index) {
  if (work_.size() <= index) work_.resize(index + 1);
  work_[index] = last_;
}

}  // namespace ckpt::harness
