#include "harness/cli/layout_files.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <set>

#include "harness/checkpoint/dcp_metadata.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/common/config_error.hpp"
#include "harness/common/text_format.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

constexpr std::int64_t kMaxFileListRanks = 16384;

Case planning_case(const workloads::Layout& layout, const FilesRequest& request) {
  Case c;
  c.model = layout.model();
  c.parallel = layout.parallel();
  c.state = layout.state();
  c.mapping = Mapping::file_per_rank;
  c.directory_layout = request.directory_layout;
  c.megatron_optimizer = request.megatron_optimizer;
  c.writer_threads = request.writer_threads;
  c.framing = request.framing && !framing_refusal(c);
  return c;
}

// The coordinator's files, sized from every rank's shards (the items DCP's metadata lists).
void add_coordinator_files(const workloads::Layout& layout, const Case& c,
                           std::vector<ListedFile>& files) {
  if (!writes_dcp_metadata(c)) return;
  std::vector<ManifestTensor> items;
  for (std::int64_t r = 0; r < layout.world_size(); ++r) {
    const std::vector<RankPlan> plans = plan_ranks(layout, c, {r}, {});
    for (const PlacedShard& ps : plans.front().shards)
      items.push_back({.shard = ps.shard, .rank = r, .file = ps.file});
  }
  for (const CoordinatorFile& f : coordinator_files(c, items))
    files.push_back({f.name, 0, f.text.size(), 0});
}

std::uint64_t total_bytes(const std::vector<ListedFile>& files) {
  std::uint64_t total = 0;
  for (const ListedFile& f : files) total += f.bytes;
  return total;
}

std::size_t writer_count(const std::vector<ListedFile>& files) {
  std::set<std::int64_t> writers;
  for (const ListedFile& f : files) writers.insert(f.rank);
  return writers.size();
}

}  // namespace

std::vector<ListedFile> list_checkpoint_files(const workloads::Layout& layout,
                                              const FilesRequest& request) {
  const workloads::ParallelSpec& p = layout.parallel();
  const std::optional<std::int64_t> rank = request.rank;
  if (request.directory_layout == DirectoryLayout::deepspeed && p.pp > 1 && p.zero_stage >= 2) {
    throw ConfigError("command line", 0, "--layout",
                      deepspeed_pipeline_refusal(p.zero_stage, "--zero", "--pp"));
  }
  if (request.directory_layout != DirectoryLayout::dcp &&
      p.zero_sharding == workloads::ZeroSharding::per_tensor) {
    Case c;
    c.parallel = p;
    c.directory_layout = request.directory_layout;
    throw ConfigError("command line", 0, "--zero-sharding",
                      per_tensor_sharding_refusal(c, "--layout", "--zero-sharding"));
  }
  if (layout.world_size() > kMaxFileListRanks) {
    throw ConfigError("command line", 0, "--files",
                      "lists the files of at most " + std::to_string(kMaxFileListRanks) +
                          " ranks (as a dry run plans); this job has " +
                          std::to_string(layout.world_size()) +
                          " — list a smaller job of the same shape");
  }
  const Case c = planning_case(layout, request);
  std::vector<std::int64_t> ranks;
  if (rank) {
    ranks.push_back(*rank);
  } else {
    for (std::int64_t r = 0; r < layout.world_size(); ++r) ranks.push_back(r);
  }
  std::vector<ListedFile> files;
  for (std::int64_t r : ranks) {
    const std::vector<RankPlan> plans = plan_ranks(layout, c, {r}, {});
    for (const backends::FilePlan& file : plans.front().io.files) {
      files.push_back(
          {file.path, r, file.file_size, static_cast<std::int64_t>(file.datasets.size())});
    }
  }
  if (!rank || *rank == 0) {
    add_coordinator_files(layout, c, files);
    // DeepSpeed's tag pointer, beside the checkpoint directory (record_latest_checkpoint).
    if (c.directory_layout == DirectoryLayout::deepspeed) {
      files.push_back(
          {std::string(kLatestName), 0, checkpoint_dir_name(c.directory_layout, 1).size(), 0});
    }
  }
  return files;
}

void print_files_text(std::ostream& out, DirectoryLayout directory_layout,
                      const std::vector<ListedFile>& files) {
  fmt::print(out, "{}/ ({} layout): {} files from {} ranks, {} ({} B)\n\n",
             checkpoint_dir_name(directory_layout, 1), directory_layout_name(directory_layout),
             files.size(), writer_count(files),
             format_bytes(static_cast<std::int64_t>(total_bytes(files))),
             group_digits(static_cast<std::int64_t>(total_bytes(files))));
  std::size_t width = 4;
  for (const ListedFile& f : files) width = std::max(width, f.path.size());
  fmt::print(out, "{:>6}  {:<{}}  {:>20}  {:>8}\n", "rank", "file", width, "bytes", "tensors");
  for (const ListedFile& f : files) {
    fmt::print(out, "{:>6}  {:<{}}  {:>20}  {:>8}\n", f.rank, f.path, width,
               group_digits(static_cast<std::int64_t>(f.bytes)), f.tensors);
  }
  fmt::print(
      out,
      "\nbytes: .distcp files with torch.save's framing of each item, the .pt files of "
      "deepspeed (no PP) and megatron whole as the frameworks write them "
      "(--framing off: the tensors' alone, beside the frameworks' padding and extra "
      "tensors), other .pt files the tensors' own; ranks not listed write no file;\n"
      ".metadata is an estimate of DCP's pickle, common.pt megatron-core's size for the model\n");
}

nlohmann::json files_json(DirectoryLayout directory_layout, const std::vector<ListedFile>& files) {
  nlohmann::json list = nlohmann::json::array();
  for (const ListedFile& f : files) {
    list.push_back(
        {{"path", f.path}, {"rank", f.rank}, {"bytes", f.bytes}, {"tensors", f.tensors}});
  }
  return {{"layout", directory_layout_name(directory_layout)},
          {"directory", checkpoint_dir_name(directory_layout, 1)},
          {"file_count", files.size()},
          {"writer_count", writer_count(files)},
          {"total_bytes", total_bytes(files)},
          {"files", std::move(list)}};
}

}  // namespace ckpt::harness
