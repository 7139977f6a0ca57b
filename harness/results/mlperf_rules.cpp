#include "harness/results/mlperf_rules.hpp"

#include <fmt/format.h>

#include <array>

namespace ckpt::harness {
namespace {

struct Rule {
  std::string_view number;
  std::string_view text;
};

constexpr Rule kTable2{"2.2.1 (Table 2)",
                       "Parallelism (TPxPPxDP) 1x1x8, 8x1x8, 8x32x2, 8x64x2 and ZeRO 3, 3, 1, 1 "
                       "for 8B, 70B, 405B and 1T"};
constexpr Rule kClosedGpus{"2.2.5",
                           "For CLOSED submissions, the total number of GPUs must be fixed "
                           "according to Table 2."};
constexpr Rule kOpenGpus{"2.2.5",
                         "For OPEN submissions, the total number of GPUs may be increased in "
                         "multiples of (TPxPP) to showcase the scalability of the storage "
                         "solution."};
constexpr Rule kGpuMemory{"2.2.1",
                          "the aggregate GPU memory across all nodes must be sufficient to "
                          "accommodate the model's checkpoint size."};
constexpr Rule kPerHost{"2.2.5 (Table 3)", "--ppn, the number of GPUs per node: minimal 4"};
constexpr Rule kSubset{"2.2.2 (v3.0)",
                       "subset mode, for node-local storage, simulates one host's share of the "
                       "checkpoint; v3.0 allows it only for llama3-8b, with exactly 8 processes"};
constexpr Rule kFsync{"2.2.2",
                      "We enforce fsync to be applied during checkpoint writes to ensure data is "
                      "flushed to persistent storage."};
constexpr Rule kWriteThenRead{"2.2.2",
                              "one must first perform the checkpoint write, then clear the cache, "
                              "and finally perform the checkpoint read."};
constexpr Rule kTen{"2.2.5 (Table 3)",
                    "--num-checkpoints-write and --num-checkpoints-read: 10, changeable in "
                    "neither division"};
constexpr Rule kDefaultMode{"2.2.2",
                            "default mode: the benchmark runs at scale to write/read the entire "
                            "checkpoint dataset."};
constexpr Rule kSize{"2.2.1 (Table 2)",
                     "Checkpoint size 105 GB, 912 GB, 5.29 TB, 18 TB (DLIO's byte counts)"};

constexpr std::array<MlperfWorkload, 4> kWorkloads{{
    {"llama3-8b", "llama3-8b", 1, 1, 8, 3},
    {"llama3-70b", "mlperf-llama3-70b", 8, 1, 8, 3},
    {"llama3-405b", "llama3.1-405b", 8, 32, 2, 1},
    {"llama3-1t", "mlperf-llama3-1t", 8, 64, 2, 1},
}};

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

std::string cited(const std::string& what, const Rule& rule) {
  return fmt::format("{} -- rule {}: \"{}\"", what, rule.number, rule.text);
}

// What the rules forbid of the declared job: its model, parallelism and process counts.
void check_job(const Case& c, const MlperfSpec& m, const MlperfWorkload& w,
               std::vector<std::string>& refusals) {
  const auto refuse = [&](const std::string& what, const Rule& rule) {
    refusals.push_back(cited(fmt::format("mlperf.model = \"{}\": {}", m.model, what), rule));
  };
  if (c.model.name != w.zoo_model)
    refuse(fmt::format("model.name is {}, the workload is the zoo's {}; set model.name = \"{}\"",
                       c.model.name, w.zoo_model, w.zoo_model),
           kTable2);
  const auto same = [&](const char* key, std::int64_t have, std::int64_t want) {
    if (have != want)
      refuse(fmt::format("{} = {}, the rules' is {}; set {} = {}", key, have, want, key, want),
             kTable2);
  };
  same("parallel.tp", c.parallel.tp, w.tp);
  same("parallel.pp", c.parallel.pp, w.pp);
  same("parallel.zero", c.parallel.zero_stage, w.zero);
  if (c.parallel.ep != 1) same("parallel.ep", c.parallel.ep, 1);
  const std::int64_t world = w.tp * w.pp * w.dp;
  if (m.division == "closed" && c.parallel.dp != w.dp) {
    refuse(fmt::format("parallel.dp = {}: CLOSED runs the rules' {} processes at dp {}; set "
                       "parallel.dp = {} or mlperf.division = \"open\"",
                       c.parallel.dp, world, w.dp, w.dp),
           kClosedGpus);
  } else if (m.division == "open" && c.parallel.dp < w.dp) {
    refuse(fmt::format("parallel.dp = {} makes {} processes, fewer than the rules' {}; OPEN may "
                       "only add data-parallel replicas: parallel.dp >= {}",
                       c.parallel.dp, c.parallel.world_size(), world, w.dp),
           kOpenGpus);
  }
  if (c.ranks.gpus_per_node < 4)
    refuse(fmt::format("ranks.gpus_per_node = {}: set 4 or more", c.ranks.gpus_per_node), kPerHost);
}

void check_subset(const Case& c, const MlperfSpec& m, std::vector<std::string>& refusals) {
  if (!m.subset) return;
  if (m.model != "llama3-8b") {
    refusals.push_back(cited(
        fmt::format("mlperf.subset = true with mlperf.model = \"{}\": set mlperf.subset = false",
                    m.model),
        kSubset));
  } else if (c.ranks.select != RankSelect::node || c.ranks.gpus_per_node != 8) {
    refusals.push_back(
        cited(fmt::format("mlperf.subset = true runs one host of 8 processes, the case has "
                          "ranks.select = \"{}\", ranks.gpus_per_node = {}: set ranks.select = "
                          "\"node\" and ranks.gpus_per_node = 8",
                          rank_select_name(c.ranks.select), c.ranks.gpus_per_node),
              kSubset));
  }
}

void check_memory(const Case& c, const MlperfSpec& m, std::uint64_t full_scale_bytes,
                  std::vector<std::string>& refusals) {
  const std::uint64_t each = accelerator_memory_bytes(m.accelerator_type);
  const auto ranks = static_cast<std::uint64_t>(c.parallel.world_size());
  if (each * ranks >= full_scale_bytes) return;
  refusals.push_back(
      cited(fmt::format("{} ranks of {} ({} GiB each) hold {} bytes, the checkpoint is {} bytes",
                        ranks, m.accelerator_type, each / kGiB, each * ranks, full_scale_bytes),
            kGpuMemory));
}

// What this run does differently from a submission: the result is labelled non-compliant.
std::vector<std::string> differences(const Case& c) {
  std::vector<std::string> reasons;
  const auto differ = [&reasons](bool differs, const std::string& what, const Rule& rule) {
    if (differs) reasons.push_back(cited(what, rule));
  };
  differ(c.scale != 1,
         fmt::format("model.scale = {}: tensors 1/{} of the workload's", c.scale, c.scale), kSize);
  differ(c.state.sizing != workloads::Sizing::dlio,
         "model.sizing = \"exact\": the framework's bytes, not DLIO's (model.sizing = \"dlio\")",
         kSize);
  differ(c.state.scope != workloads::StateScope::full,
         "state.scope = \"weights\": the rules write the full training state", kSize);
  differ(c.iterations != 10 && !c.training.enabled(),
         fmt::format("campaign.iterations = {}: set 10", c.iterations), kTen);
  differ(c.warmup != 0,
         fmt::format("campaign.warmup = {}: untimed checkpoints beside the 10; set 0", c.warmup),
         kTen);
  differ(c.io.sync == backends::SyncPolicy::none, "backend.sync = \"none\": set \"fsync\"", kFsync);
  differ(c.phase == PhaseSelection::both,
         "campaign.phase = \"both\" reads each checkpoint right after writing it; write 10 with "
         "--phase checkpoint, then read with --phase restore",
         kWriteThenRead);
  differ(c.phase != PhaseSelection::checkpoint && c.cache == CachePolicy::none,
         "cache.policy = \"none\": the read may come from the page cache", kWriteThenRead);
  return reasons;
}

}  // namespace

const MlperfWorkload* mlperf_workload(std::string_view name) {
  for (const MlperfWorkload& w : kWorkloads) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

std::uint64_t accelerator_memory_bytes(std::string_view type) {
  if (type == "b200") return 180 * kGiB;
  if (type == "mi355") return 288 * kGiB;
  return 0;
}

MlperfVerdict check_mlperf(const Case& c, const MlperfSpec& m, std::uint64_t full_scale_bytes) {
  MlperfVerdict v;
  const MlperfWorkload* w = mlperf_workload(m.model);
  if (w == nullptr) {
    v.refusals.push_back("mlperf.model = \"" + m.model + "\" is no MLPerf Storage workload");
  } else {
    check_job(c, m, *w, v.refusals);
    check_subset(c, m, v.refusals);
    check_memory(c, m, full_scale_bytes, v.refusals);
  }
  v.reasons = differences(c);
  if (!m.subset && c.ranks.select != RankSelect::all) {
    v.reasons.push_back(cited(fmt::format("ranks.select = \"{}\": a share of the job's ranks",
                                          rank_select_name(c.ranks.select)),
                              kDefaultMode));
  }
  v.label = v.refusals.empty() && v.reasons.empty() ? m.division : "non-compliant";
  return v;
}

nlohmann::json mlperf_json(const MlperfSpec& m, const MlperfVerdict& v) {
  return {{"model", m.model},   {"accelerator_type", m.accelerator_type},
          {"subset", m.subset}, {"division", m.division},
          {"label", v.label},   {"reasons", v.reasons}};
}

}  // namespace ckpt::harness
