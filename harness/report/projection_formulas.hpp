#pragma once

#include <cstdint>

namespace ckpt::harness {

// Checkpoint-interval arithmetic of the projection. Every argument is in seconds; C is the time
// training stalls for one checkpoint, R the restore time, M the mean time between failures.

// Young (1974): tau = sqrt(2 C M).
double young_interval(double checkpoint_seconds, double mtbf_seconds);
// Daly (2006), higher-order form: tau = sqrt(2 C M) [1 + (1/3) sqrt(C / 2M) + (1/9) (C / 2M)] - C
// for C < 2M, else tau = M.
double daly_interval(double checkpoint_seconds, double mtbf_seconds);
// Share of training time lost with checkpoints every `interval` seconds of compute:
// C / tau (writing) + (tau / 2 + R) / M (the work lost on average per failure plus the restore).
double expected_waste(double interval_seconds, double checkpoint_seconds, double restore_seconds,
                      double mtbf_seconds);

// Llama 3 (Meta, 2024): 419 unexpected interruptions in 54 days of pre-training on 16,384 GPUs.
struct MtbfPreset {
  const char* name;
  double interruptions;
  double days;
  std::int64_t gpus;
};
inline constexpr MtbfPreset kLlama3Preset{"llama3-16k", 419, 54, 16384};
// The preset's MTBF in hours for a job of `gpus` GPUs: failures scale with the GPU count, so
// M = (days × 24 / interruptions) × preset GPUs / gpus (llama3-16k on 16,384 GPUs: 3.093 h).
double preset_mtbf_hours(const MtbfPreset& preset, std::int64_t gpus);

}  // namespace ckpt::harness
