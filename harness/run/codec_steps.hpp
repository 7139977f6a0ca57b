#pragma once

// Private to harness/run: strategy.compression's steps in the write and restore iterations (the
// codec over a process's plans: compress_plans, decode_plans), and what the case's result records
// of them.
#include <string>
#include <utility>
#include <vector>

#include "harness/exec/codec_plans.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Before any clock: keeps `plans.stored` (the frames the case moves) with a buffer of their own in
// `space`, and starts the case's compression record. Nothing when the plans store raw bytes.
void prepare_stored(CaseState& s, ProcessPlans& plans, MemorySpace& space);

// Collective, before the timed write: compresses the write plans into the stored buffer and
// records the codec's figures (`timed`: a timed iteration). The stored plans then write the frames.
void compress_for_write(CaseState& s, bool timed);

// The case's compression record started for `codec` (the case's, or the checkpoint's a load
// reads), its bytes and samples still empty.
void start_compression_record(CaseState& s, const CompressionSpec& codec);

// Collective: one compression (`encode`) or decompression of this process's, `mine`, recorded in
// the case's compression record over every process: its bytes (a decompression's only while the
// record has none: a load's pieces), and (`timed`) its seconds.
void record_codec_work(CaseState& s, const CodecWork& mine, bool encode, bool timed);

// Collective, after the timed read of the stored plans (`read_ok`: this process's read succeeded):
// decodes the frames into `raw`, the logical plans' buffer, and records the codec's figures.
// Returns this process's seconds and its first problem (a damaged frame).
std::pair<double, std::string> decode_after_read(CaseState& s, const ProcessBuffer& raw,
                                                 bool read_ok, bool timed);

}  // namespace ckpt::harness
