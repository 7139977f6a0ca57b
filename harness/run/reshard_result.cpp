#include "harness/run/reshard_result.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "harness/exec/iteration.hpp"

namespace ckpt::harness {
namespace {

std::string layout_text(const workloads::ParallelSpec& p) {
  return fmt::format("TP{}×PP{}×DP{}{}{}", p.tp, p.pp, p.dp,
                     p.ep > 1 ? fmt::format("×EP{}", p.ep) : "",
                     p.zero_stage > 0 ? fmt::format(" ZeRO-{}", p.zero_stage) : "");
}

}  // namespace

ReshardSummary reshard_summary(const Case& c, Comm& comm, const std::vector<RankPlan>& plans) {
  nlohmann::json mine = nlohmann::json::array();
  for (const RankPlan& p : plans) {
    std::uint64_t copied = 0;
    for (const BufferCopy& copy : p.reshard.copies) copied += copy.length;
    mine.push_back({p.reshard.bytes_needed, p.reshard.bytes_read, p.reshard.padding_bytes,
                    p.reshard.requests.size(), copied});
  }
  ReshardSummary s;
  s.from = layout_text(c.parallel);
  s.to = layout_text(c.restore.parallel) +
         (c.restore.state.scope != c.state.scope ? " (weights)" : "");
  s.read = c.restore.read == ReshardRead::whole_items ? "whole_items" : "exact";
  s.gap_bytes = c.restore.gap_bytes;
  s.direct_alignment = c.io.direct ? c.io.direct_alignment : 0;
  std::vector<double> bytes_read, requests;
  for (const std::string& text : comm.gather(mine.dump())) {
    for (const auto& rank : nlohmann::json::parse(text)) {
      s.bytes_needed += rank[0].get<std::uint64_t>();
      s.bytes_read += rank[1].get<std::uint64_t>();
      s.padding_bytes += rank[2].get<std::uint64_t>();
      s.requests += rank[3].get<std::uint64_t>();
      s.copied_bytes += rank[4].get<std::uint64_t>();
      bytes_read.push_back(rank[1].get<double>());
      requests.push_back(rank[3].get<double>());
    }
  }
  s.rank_bytes_read = spread(bytes_read);
  s.rank_requests = spread(requests);
  return s;
}

}  // namespace ckpt::harness
