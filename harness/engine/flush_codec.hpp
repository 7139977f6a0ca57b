#pragma once

// strategy.compression under the training engines: each checkpoint's state compressed into frames
// (compress_plans) where a framework compresses it: sync inline, after any DP gather and inside
// the stall; async and lazy on the flush thread, from the snapshot in the host pool, outside the
// stall but inside the time to durable. The checkpoint's files and manifest then hold the frames'
// plans (stored()). The engines keep at most one checkpoint in flight, so one frames buffer serves
// them all; the pool must hold a whole snapshot (engine_problem refuses a ring).

#include <cstddef>
#include <vector>

#include "harness/engine/flush_writes.hpp"
#include "harness/exec/codec_plans.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

class FlushCodec {
 public:
  // `c`: the case (strategy.compression, and the coalescing of the frames' writes); `frames`: host
  // memory of bounded_stored_plans of the loop's plans. Both outlive the codec.
  FlushCodec(const Case& c, const ProcessBuffer& frames) : c_(c), frames_(frames) {}

  // Compresses `plans`, whose bytes lie in `data` at the offsets of `layout` (the state, or the
  // pool that mirrors it), into the frames buffer; stored() then holds the plans that write them.
  // One caller at a time: the loop's thread, or the flush thread while its checkpoint is in
  // flight (the loop reads stored() and last() only after collecting it). Throws what
  // compress_plans throws (std::bad_alloc).
  const CodecWork& compress(const std::vector<RankPlan>& plans, const ProcessBuffer& layout,
                            const std::byte* data);
  // The last compress()'s frames plans (paths as its plans') and figures (zero before the first,
  // and after one that threw).
  const std::vector<RankPlan>& stored() const { return stored_; }
  const CodecWork& last() const { return last_; }
  const ProcessBuffer& frames() const { return frames_; }
  // `target` (a whole-pool flush of the plans just compressed) writing the frames instead.
  void point(FlushTarget& target) const;

  // The loop's thread: checkpoint `index` (of the summary's) compressed as last() says; work()
  // holds one entry per checkpoint up to the highest recorded, zero for those that compressed
  // nothing.
  void record(std::size_t index);
  const std::vector<CodecWork>& work() const { return work_; }

 private:
  const Case& c_;
  const ProcessBuffer& frames_;
  std::vector<RankPlan> stored_;
  CodecWork last_;
  std::vector<CodecWork> work_;
};

}  // namespace ckpt::harness
