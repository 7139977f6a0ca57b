// The files each directory layout writes for the reference job: Llama 3 8B, TP2 × PP2 × DP2,
// ZeRO-1, full state (bf16 weights, fp32 master, exp_avg, exp_avg_sq: 2 + 12 bytes a parameter).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "harness/campaign/campaign.hpp"
#include "harness/cli/layout_files.hpp"
#include "harness/common/config_error.hpp"
#include "harness/models/model_zoo.hpp"
#include "harness/plan/megatron_pt_files.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

// Elements of one TP rank of one layer: attention (q, k, v, o: 4096 × (4096 + 1024 + 1024 +
// 4096)) and MLP (3 × 4096 × 14336) halved by TP, plus its two 4096-element norms, which the
// legacy formats save on both TP ranks.
constexpr std::int64_t kLayerSplit = (4096 * 10240 + 3 * 4096 * 14336) / 2;  // 109,051,904
constexpr std::int64_t kLayerNorms = 2 * 4096;
constexpr std::int64_t kTable =
    128256 * 4096 / 2;  // embedding / output half: vocab 128256 needs no padding
constexpr std::int64_t kStage0 = kTable + 16 * (kLayerSplit + kLayerNorms);  // one TP rank, legacy
constexpr std::int64_t kStage1 =
    16 * (kLayerSplit + kLayerNorms) + 4096 + kTable;  // + final norm, output

workloads::Layout reference_job(int zero = 1) {
  workloads::ParallelSpec p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 2;
  p.zero_stage = zero;
  return workloads::Layout(zoo_model("llama3-8b"), p, workloads::StateSpec{});
}

std::vector<ListedFile> files_of(DirectoryLayout layout,
                                 MegatronOptimizer optimizer = MegatronOptimizer::gathered) {
  return list_checkpoint_files(reference_job(),
                               {.directory_layout = layout, .megatron_optimizer = optimizer});
}

// torch.save's archive around each of the reference job's 1,312 .distcp items (1,577 B each on
// average; strategy.framing, harness/plan/item_framing).
constexpr std::uint64_t kDistcpFraming = 2'069'024;

std::uint64_t total(const std::vector<ListedFile>& files) {
  std::uint64_t sum = 0;
  for (const ListedFile& f : files) sum += f.bytes;
  return sum;
}

TEST(FrameworkLayout, DcpWritesOneFilePerRankAndEveryElementOnce) {
  auto files = files_of(DirectoryLayout::dcp);
  ASSERT_EQ(files.size(), 9u);
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(files[static_cast<std::size_t>(r)].path, "__" + std::to_string(r) + "_0.distcp");
    EXPECT_EQ(files[static_cast<std::size_t>(r)].rank, r);
  }
  EXPECT_EQ(files.back().path, ".metadata");  // the coordinator's, last, from rank 0
  EXPECT_EQ(files.back().rank, 0);
  files.pop_back();
  // 8,030,261,248 parameters × 14 bytes, each item framed
  EXPECT_EQ(total(files), 112'423'657'472u + kDistcpFraming);
  std::vector<ListedFile> bare = list_checkpoint_files(
      reference_job(), {.directory_layout = DirectoryLayout::dcp, .framing = false});
  bare.pop_back();
  EXPECT_EQ(total(bare), static_cast<std::uint64_t>(reference_job().checkpoint_bytes()));
}

// Each file is whole, as Megatron torch.saves it (megatron_pt_files); its storages are the
// layout's tensors, beside model_optim_rng.pt's 5,088 bytes of RNG state.
TEST(FrameworkLayout, MegatronGathersTheDistributedOptimizerOnDpRankZero) {
  const auto files = files_of(DirectoryLayout::megatron);
  // rank = (pp × dp + dp_rank) × tp + tp_rank: DP rank 0 of (tp, pp) is rank 0, 1, 4, 5.
  const std::vector<std::tuple<std::string, std::int64_t, std::uint64_t>> expected{
      {"mp_rank_00_000/model_optim_rng.pt", 0, 2 * kStage0},
      {"mp_rank_00_000/distrib_optim.pt", 0, 12 * kStage0},
      {"mp_rank_01_000/model_optim_rng.pt", 1, 2 * kStage0},
      {"mp_rank_01_000/distrib_optim.pt", 1, 12 * kStage0},
      {"mp_rank_00_001/model_optim_rng.pt", 4, 2 * kStage1},
      {"mp_rank_00_001/distrib_optim.pt", 4, 12 * kStage1},
      {"mp_rank_01_001/model_optim_rng.pt", 5, 2 * kStage1},
      {"mp_rank_01_001/distrib_optim.pt", 5, 12 * kStage1}};
  const workloads::Layout layout = reference_job();
  Case c;
  c.directory_layout = DirectoryLayout::megatron;
  ASSERT_EQ(files.size(), expected.size());
  std::uint64_t tensors = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [path, rank, tensor_bytes] = expected[i];
    EXPECT_EQ(files[i].path, path);
    EXPECT_EQ(files[i].rank, rank) << files[i].path;
    const bool model_file = path.ends_with("/model_optim_rng.pt");
    const PtFileBytes pt = model_file ? megatron_model_optim_rng_bytes(layout, c, rank)
                                      : megatron_distrib_optim_bytes(layout, rank);
    EXPECT_EQ(files[i].bytes, pt.whole) << path;
    EXPECT_EQ(pt.data, tensor_bytes + (model_file ? 5088u : 0u)) << path;
    tensors += tensor_bytes;
  }
  // The TP-replicated norms (16 + 16 layers × 2 norms + the final norm, 14 bytes an element)
  // come once more than in DCP, from TP rank 1.
  EXPECT_EQ(tensors, 112'423'657'472u + (32 * kLayerNorms + 4096) * 14u);
}

TEST(FrameworkLayout, MegatronPerDpOptimizerFilesKeepEachDpShard) {
  const auto files = files_of(DirectoryLayout::megatron, MegatronOptimizer::per_dp);
  ASSERT_EQ(files.size(), 12u);  // 4 model_optim_rng.pt + 8 optim.pt
  std::map<std::string, std::int64_t> writer;
  std::map<std::string, std::uint64_t> optimizer_bytes;  // per mp_rank_TT_PPP
  for (const ListedFile& f : files) {
    writer[f.path] = f.rank;
    if (f.path.ends_with("/optim.pt")) optimizer_bytes[f.path.substr(0, 14)] += f.bytes;
  }
  EXPECT_EQ(writer.at("mp_rank_00_000_000/optim.pt"), 0);
  EXPECT_EQ(writer.at("mp_rank_00_000_001/optim.pt"), 2);
  EXPECT_EQ(writer.at("mp_rank_01_001_001/optim.pt"), 7);
  EXPECT_EQ(writer.at("mp_rank_01_001/model_optim_rng.pt"), 5);
  EXPECT_EQ(optimizer_bytes.at("mp_rank_00_000"), 12u * kStage0);
  EXPECT_EQ(optimizer_bytes.at("mp_rank_01_001"), 12u * kStage1);
}

TEST(FrameworkLayout, DeepSpeedWritesOneFilePerLayerAndTpRankUnderPipelineParallelism) {
  const auto files = files_of(DirectoryLayout::deepspeed);
  std::map<std::string, ListedFile> by_path;
  for (const ListedFile& f : files) by_path[f.path] = f;
  ASSERT_EQ(files.size(),
            83u);  // 35 layers × 2 TP ranks + 8 optimizer files + 4 engine states + latest
  ASSERT_EQ(by_path.size(), files.size());
  for (int tp = 0; tp < 2; ++tp) {
    for (int layer = 0; layer <= 34; ++layer) {
      const std::string name = fmt::format("layer_{:02d}-model_{:02d}-model_states.pt", layer, tp);
      ASSERT_TRUE(by_path.contains(name)) << name;
      const ListedFile& f = by_path.at(name);
      EXPECT_EQ(f.rank, (layer <= 16 ? 0 : 4) + tp) << name;  // DP rank 0 of the stage holding it
      const std::int64_t elements = layer == 0 || layer == 34 ? kTable
                                    : layer == 33             ? 4096
                                                              : kLayerSplit + kLayerNorms;
      EXPECT_EQ(f.bytes, 2u * elements) << name;
    }
  }
  // ZeRO-1 optimizer shards: one file per DP rank and model-parallel rank (pp × tp + tp).
  for (int dp = 0; dp < 2; ++dp) {
    for (int mp = 0; mp < 4; ++mp) {
      EXPECT_TRUE(by_path.contains(
          fmt::format("bf16_zero_pp_rank_{}_mp_rank_{:02d}_optim_states.pt", dp, mp)));
    }
  }
  const auto optimizer = [&](int mp) {
    return by_path.at(fmt::format("bf16_zero_pp_rank_0_mp_rank_{:02d}_optim_states.pt", mp)).bytes +
           by_path.at(fmt::format("bf16_zero_pp_rank_1_mp_rank_{:02d}_optim_states.pt", mp)).bytes;
  };
  EXPECT_EQ(optimizer(1), 12u * kStage0);
  EXPECT_EQ(optimizer(3), 12u * kStage1);
  // The engine state of each model-parallel rank, from its DP rank 0: 4096 B plus, per weight
  // tensor, its name + 32 + 4 per dimension (an estimate; deepspeed_engine_state_file).
  std::uint64_t engine_bytes = 0;
  const workloads::Layout job = reference_job();
  for (const auto& [mp, rank] :
       {std::pair{0, 0}, std::pair{1, 1}, std::pair{2, 4}, std::pair{3, 5}}) {
    const std::string name = fmt::format("mp_rank_{:02d}_model_states.pt", mp);
    ASSERT_TRUE(by_path.contains(name)) << name;
    std::uint64_t estimate = 4096;
    for (const workloads::Shard& s : job.shards(rank)) {
      if (s.state == workloads::StateKind::weight)
        estimate += s.name.size() + 32 + 4 * s.global_shape.size();
    }
    EXPECT_EQ(by_path.at(name).rank, rank) << name;
    EXPECT_EQ(by_path.at(name).tensors, 0) << name;
    EXPECT_EQ(by_path.at(name).bytes, estimate) << name;
    EXPECT_GT(estimate, 4096u + 100u);
    engine_bytes += estimate;
  }
  EXPECT_EQ(files.back().path,
            "../latest");  // DeepSpeed's tag file, last, from rank 0: "global_step1"
  EXPECT_EQ(files.back().rank, 0);
  EXPECT_EQ(files.back().bytes, 12u);
  EXPECT_EQ(total(files), 112'423'657'472u + (32 * kLayerNorms + 4096) * 14u + engine_bytes + 12u);
}

TEST(FrameworkLayout, MegatronDistWritesTwoFilesPerRankAndSpreadsReplicasOverDp) {
  auto files = files_of(DirectoryLayout::megatron_dist);
  ASSERT_EQ(files.size(), 8u * 2 + 3);
  for (std::int64_t r = 0; r < 8; ++r) {
    for (std::size_t n = 0; n < 2; ++n) {
      const ListedFile& f = files[static_cast<std::size_t>(2 * r) + n];
      EXPECT_EQ(f.rank, r);
      EXPECT_TRUE(f.path == fmt::format("__{}_{}.distcp", r, 0) ||
                  f.path == fmt::format("__{}_{}.distcp", r, 1))
          << f.path;
    }
  }
  EXPECT_EQ(files[16].path, ".metadata");
  EXPECT_EQ(files[17].path, "common.pt");
  EXPECT_EQ(files[18].path, "metadata.json");
  // {"sharded_backend": "torch_dist", "sharded_backend_version": 1, "common_backend": "torch",
  // "common_backend_version": 1}: Megatron's CheckpointingConfig as json.dump writes it
  EXPECT_EQ(files[18].bytes, 119u);
  files.resize(16);
  // deduplicated: every element once, as DCP, each item framed
  EXPECT_EQ(total(files), 112'423'657'472u + kDistcpFraming);
  std::map<std::int64_t, std::uint64_t> per_rank;
  for (const ListedFile& f : files) per_rank[f.rank] += f.bytes;
  // Every rank writes: the DP-replicated weights are spread over DP by size, so DP ranks 0 and 1
  // of each (tp, pp) differ by less than the largest weight shard (a vocabulary half, 2 × kTable).
  for (const auto& [first, second] : {std::pair{0, 2}, {1, 3}, {4, 6}, {5, 7}}) {
    const auto a = static_cast<std::int64_t>(per_rank.at(first)),
               b = static_cast<std::int64_t>(per_rank.at(second));
    EXPECT_LT(std::abs(a - b), 2 * kTable) << first << " vs " << second;
  }
}

TEST(FrameworkLayout, DeepSpeedRefusesZero2And3WithPipelineParallelism) {
  for (const int zero : {2, 3}) {
    try {
      list_checkpoint_files(reference_job(zero),
                            {.directory_layout = DirectoryLayout::deepspeed, .rank = 0});
      ADD_FAILURE() << "ZeRO-" << zero << " × PP 2 accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "--layout");
      EXPECT_EQ(std::string(e.what()),
                "command line: `--layout`: \"deepspeed\" with --pp > 1 cannot use --zero = " +
                    std::to_string(zero) +
                    ": DeepSpeed's PipelineEngine refuses it (\"ZeRO-2 and ZeRO-3 are incompatible "
                    "with pipeline "
                    "parallelism\", deepspeed/runtime/pipe/engine.py) — set --zero = 0 or 1, or "
                    "--pp = 1");
    }
  }
  const std::string campaign =
      "[model]\nname = \"llama3-8b\"\n[parallel]\ntp = 2\npp = 2\ndp = 2\nzero = 3\n"
      "[strategy]\nlayout = \"deepspeed\"\n[campaign]\nname = \"t\"\ntarget = \"out\"\n";
  try {
    parse_campaign(campaign, "c.toml", {});
    ADD_FAILURE() << "campaign accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "strategy.layout");
    EXPECT_NE(std::string(e.what()).find("parallel.pp > 1 cannot use parallel.zero = 3"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(parse_campaign(campaign, "c.toml", {"strategy.layout=megatron"}));
}

}  // namespace
}  // namespace ckpt::harness
