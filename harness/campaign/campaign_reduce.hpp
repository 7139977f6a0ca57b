#pragma once

// The strategies that make checkpoints smaller (strategy.compression*): their values into the
// Case, refused with the reason where the backend, layout or phase cannot carry them. Internal to
// harness/campaign.

#include <nlohmann/json.hpp>

#include "harness/campaign/campaign_case.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness::schema {

// After fill_io, fill_memory and fill_training: c.compression from `v`, checked against them.
void fill_reduce(Case& c, const CaseValues& v);

// A case that keeps no delta chain, or compresses nothing, keeps the config (and config_hash) it
// had before those keys existed, so that gate baselines of such cases still match.
void drop_unused_reduce_keys(nlohmann::json& config);

}  // namespace ckpt::harness::schema
