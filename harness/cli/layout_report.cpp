#include "harness/cli/layout_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <optional>
#include <string>

#include "harness/common/text_format.hpp"

namespace ckpt::harness {
namespace {

using workloads::Layout;
using workloads::WorldSummary;

std::string state_line(const workloads::StateSpec& s) {
  const std::string naming(workloads::naming_name(s.effective_naming()));
  if (s.scope == workloads::StateScope::weights) {
    std::string linear;
    if (s.weights == workloads::WeightFormat::fp8_block)
      linear = ", linear weights fp8_block with fp32 block scales";
    if (s.weights == workloads::WeightFormat::mxfp4)
      linear = ", experts mxfp4 (u8 blocks of 32 fp4 values, u8 e8m0 scales)";
    return fmt::format("weights only, {}{} ({} names)", workloads::dtype_name(s.weight_dtype),
                       linear, naming);
  }
  const std::string master =
      s.master_dtype ? std::string(workloads::dtype_name(*s.master_dtype)) : "none";
  return fmt::format("full: weights {}, master {}, exp_avg/exp_avg_sq {} ({} names)",
                     workloads::dtype_name(s.weight_dtype), master,
                     workloads::dtype_name(s.optimizer_dtype), naming);
}

std::string sizing_line(const workloads::StateSpec& s) {
  if (s.sizing == workloads::Sizing::exact) return "exact (the tensors the framework saves)";
  return "dlio (DLIO's / MLPerf Storage v2.0's formula: rank order tp, pp, dp; no vocab padding; "
         "norms on "
         "every TP rank; optimizer groups of parameters / ranks + 5 × hidden; Q and O by hidden × "
         "hidden)";
}

std::string parallel_line(const Layout& layout) {
  const auto& p = layout.parallel();
  std::string line = fmt::format("TP {} × PP {} × DP {}", p.tp, p.pp, p.dp);
  if (p.ep > 1) line += fmt::format(" (EP {} inside DP)", p.ep);
  line += fmt::format(", ZeRO-{}, vocab padded {} → {}", p.zero_stage, layout.model().vocab_size,
                      layout.padded_vocab());
  if (p.pp > 1) {
    const auto [first_begin, first_end] = layout.pipeline().layers_of(0);
    const auto [last_begin, last_end] = layout.pipeline().layers_of(p.pp - 1);
    line +=
        fmt::format(", layers per stage {} … {}", first_end - first_begin, last_end - last_begin);
  }
  return line;
}

void print_histogram(std::ostream& out, const WorldSummary& summary) {
  std::int64_t widest = 1;
  for (const auto& b : summary.histogram) widest = std::max(widest, b.shards);
  fmt::print(out, "\nshard sizes (all ranks)      shards            bytes\n");
  for (const auto& b : summary.histogram) {
    const std::string range = b.lower == 0 ? "empty"
                                           : fmt::format("[{}, {})", format_size_label(b.lower),
                                                         format_size_label(2 * b.lower));
    const auto bar = static_cast<std::size_t>((b.shards * 30 + widest - 1) / widest);
    fmt::print(out, "  {:<24} {:>10} {:>16}  {}\n", range, group_digits(b.shards),
               format_bytes(b.bytes), std::string(bar, '#'));
  }
}

void print_rank_shards(std::ostream& out, const Layout& layout, std::int64_t rank) {
  const auto c = layout.coord(rank);
  const auto shards = layout.shards(rank);
  std::int64_t bytes = 0;
  for (const auto& s : shards) bytes += s.bytes;
  fmt::print(out, "\nrank {} (tp {}, pp {}, dp {}, ep {}): {} shards, {} ({} B)\n", rank, c.tp,
             c.pp, c.dp, c.ep, shards.size(), format_bytes(bytes), group_digits(bytes));
  std::vector<std::string> slices;
  std::size_t width = 16;
  for (const auto& s : shards) {
    slices.push_back(format_slice(s.offset, s.extent) +
                     fmt::format(" [{}:{})", s.flat_begin, s.flat_end));
    width = std::max(width, slices.back().size());
  }
  fmt::print(out, "  {:<10} {:<5} {:>13}  {:<16} {:<{}} {}\n", "state", "dtype", "bytes",
             "global shape", "slice [elements)", width, "name");
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto& s = shards[i];
    fmt::print(out, "  {:<10} {:<5} {:>13}  {:<16} {:<{}} {}\n",
               workloads::state_kind_name(s.state), workloads::dtype_name(s.dtype),
               group_digits(s.bytes), format_shape(s.global_shape), slices[i], width, s.name);
  }
}

nlohmann::json distribution_json(const workloads::Distribution& d) {
  return {{"min", d.min}, {"median", d.median}, {"max", d.max}};
}

nlohmann::json shard_json(const workloads::Shard& s) {
  return {{"name", s.name},
          {"state", workloads::state_kind_name(s.state)},
          {"dtype", workloads::dtype_name(s.dtype)},
          {"global_shape", s.global_shape},
          {"offset", s.offset},
          {"extent", s.extent},
          {"flat_begin", s.flat_begin},
          {"flat_end", s.flat_end},
          {"bytes", s.bytes}};
}

nlohmann::json rank_json(const Layout& layout, std::int64_t rank, bool with_shards) {
  const auto totals = layout.totals(rank);
  nlohmann::json j{{"rank", rank}, {"bytes", totals.bytes}, {"tensors", totals.tensors}};
  if (!with_shards) return j;
  const auto c = layout.coord(rank);
  j["coord"] = {{"tp", c.tp}, {"pp", c.pp}, {"dp", c.dp}, {"ep", c.ep}, {"expert_dp", c.expert_dp}};
  j["shards"] = nlohmann::json::array();
  for (const auto& s : layout.shards(rank)) j["shards"].push_back(shard_json(s));
  return j;
}

nlohmann::json inputs_json(const Layout& layout) {
  const auto& p = layout.parallel();
  const auto& s = layout.state();
  return {{"parallelism",
           {{"tp", p.tp},
            {"pp", p.pp},
            {"dp", p.dp},
            {"ep", p.ep},
            {"zero", p.zero_stage},
            {"vocab_divisor", p.vocab_divisor},
            {"padded_vocab", layout.padded_vocab()},
            {"pp_first_stage_layers", p.pp_first_stage_layers},
            {"pp_last_stage_layers", p.pp_last_stage_layers}}},
          {"state",
           {{"scope", workloads::state_scope_name(s.scope)},
            {"naming", workloads::naming_name(s.effective_naming())},
            {"weight_dtype", workloads::dtype_name(s.weight_dtype)},
            {"master_dtype", s.master_dtype ? nlohmann::json(workloads::dtype_name(*s.master_dtype))
                                            : nlohmann::json(nullptr)},
            {"optimizer_dtype", workloads::dtype_name(s.optimizer_dtype)},
            {"sizing", workloads::sizing_name(s.sizing)},
            {"weights", workloads::weight_format_name(s.weights)}}}};
}

// The same job's checkpoint bytes with every weight unquantized; nullopt when it is.
std::optional<std::int64_t> unquantized_bytes(const Layout& layout) {
  if (layout.state().weights == workloads::WeightFormat::unquantized) return std::nullopt;
  workloads::StateSpec plain = layout.state();
  plain.weights = workloads::WeightFormat::unquantized;
  return Layout(layout.model(), layout.parallel(), plain).checkpoint_bytes();
}

}  // namespace

void print_layout_text(std::ostream& out, const Layout& layout, const WorldSummary& summary,
                       std::optional<std::int64_t> rank) {
  fmt::print(out, "model        {}\n", layout.model().name);
  fmt::print(out, "parameters   {} ({:.2f} B)\n", group_digits(summary.parameters),
             static_cast<double>(summary.parameters) / 1e9);
  fmt::print(out, "parallelism  {}\n", parallel_line(layout));
  fmt::print(out, "world size   {} ranks ({} write)\n", group_digits(summary.world_size),
             group_digits(summary.writing_ranks));
  fmt::print(out, "state        {}\n", state_line(layout.state()));
  fmt::print(out, "sizing       {}\n", sizing_line(layout.state()));
  fmt::print(out, "checkpoint   {} ({} B) in {} shards\n", format_bytes(summary.checkpoint_bytes),
             group_digits(summary.checkpoint_bytes), group_digits(summary.shards));
  if (const auto plain = unquantized_bytes(layout)) {
    fmt::print(out, "unquantized  {} ({} B): {} B ({:.1f} %) saved\n", format_bytes(*plain),
               group_digits(*plain), group_digits(*plain - summary.checkpoint_bytes),
               100.0 * static_cast<double>(*plain - summary.checkpoint_bytes) /
                   static_cast<double>(*plain));
  }
  fmt::print(out, "\nper rank          min          median             max\n");
  fmt::print(out, "  bytes   {:>14}  {:>14}  {:>14}\n", format_bytes(summary.rank_bytes.min),
             format_bytes(summary.rank_bytes.median), format_bytes(summary.rank_bytes.max));
  fmt::print(out, "  shards  {:>14}  {:>14}  {:>14}\n", group_digits(summary.rank_shards.min),
             group_digits(summary.rank_shards.median), group_digits(summary.rank_shards.max));
  print_histogram(out, summary);
  if (rank) print_rank_shards(out, layout, *rank);
}

nlohmann::json layout_json(const Layout& layout, const WorldSummary& summary,
                           std::optional<std::int64_t> rank) {
  nlohmann::json j{
      {"model", layout.model().name},     {"parameters", summary.parameters},
      {"world_size", summary.world_size}, {"checkpoint_bytes", summary.checkpoint_bytes},
      {"shards", summary.shards},         {"writing_ranks", summary.writing_ranks}};
  j.update(inputs_json(layout));
  if (const auto plain = unquantized_bytes(layout)) j["unquantized_bytes"] = *plain;
  j["rank_summary"] = {{"bytes", distribution_json(summary.rank_bytes)},
                       {"tensors", distribution_json(summary.rank_shards)}};
  if (rank) {
    j["ranks"] = nlohmann::json::array({rank_json(layout, *rank, true)});
  } else if (summary.world_size <= kMaxListedRanks) {
    j["ranks"] = nlohmann::json::array();
    for (std::int64_t r = 0; r < summary.world_size; ++r)
      j["ranks"].push_back(rank_json(layout, r, false));
  }
  j["histogram"] = nlohmann::json::array();
  for (const auto& b : summary.histogram) {
    j["histogram"].push_back({{"lower_bytes", b.lower}, {"shards", b.shards}, {"bytes", b.bytes}});
  }
  return j;
}

}  // namespace ckpt::harness
