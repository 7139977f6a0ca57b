// The cooperative read's plan (plan_piece_exchange): every byte some process's plans read is read
// from storage exactly once, by a process that needs it, bytes one process alone reads by that
// process, shared ones spread by bytes; the pieces the readers send and the deliveries of every
// process put exactly the bytes of a direct read in every rank buffer (checked by replaying the
// exchange in memory on file contents).

#include "harness/loadplan/piece_exchange.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ckpt::harness {
namespace {

// A rank plan reading `extents` of `path` (file offset, memory offset, length), its buffer just
// large enough.
RankPlan reading(const std::string& path, const std::vector<backends::Extent>& extents) {
  RankPlan plan;
  backends::FilePlan file{.path = path};
  for (const backends::Extent& e : extents) {
    file.extents.push_back(e);
    plan.buffer_bytes = std::max(plan.buffer_bytes, e.memory_offset + e.length);
  }
  plan.io.files.push_back(std::move(file));
  return plan;
}

// The byte at `offset` of file `path`.
std::byte content(const std::string& path, std::uint64_t offset) {
  return static_cast<std::byte>((offset * 7 + path.size() * 13 + offset / 251) & 0xff);
}

using Buffers = std::vector<std::vector<std::vector<std::byte>>>;  // [process][plan] bytes

// Every rank buffer as reading its own plans directly would fill it.
Buffers direct_reads(const std::vector<std::vector<RankPlan>>& by_process) {
  Buffers out;
  for (const auto& plans : by_process) {
    auto& mine = out.emplace_back();
    for (const RankPlan& plan : plans) {
      auto& buffer = mine.emplace_back(plan.buffer_bytes, std::byte{0});
      for (const backends::FilePlan& f : plan.io.files) {
        for (const backends::Extent& e : f.extents) {
          for (std::uint64_t i = 0; i < e.length; ++i)
            buffer[e.memory_offset + i] = content(f.path, e.file_offset + i);
        }
      }
    }
  }
  return out;
}

// Replays every process's exchange round by round: each process's staging reads of the round from
// the files into its one exchange buffer; then every process takes its pieces of the round in
// order, a reader's out of its buffer, a receiver's once the process it comes from passed it on
// (queued per (sender, receiver) pair), copies its deliveries and passes it on down the tree;
// until every process took all its pieces, before the next round reuses the buffers. Every
// process must run as many rounds.
Buffers replay(const std::vector<std::vector<RankPlan>>& by_process,
               const std::vector<PieceExchange>& exchanges) {
  Buffers out;
  for (const auto& plans : by_process) {
    auto& mine = out.emplace_back();
    for (const RankPlan& plan : plans) mine.emplace_back(plan.buffer_bytes, std::byte{0});
  }
  const auto fill = [](const backends::FilePlan& f, std::vector<std::byte>& into) {
    for (const backends::Extent& e : f.extents) {
      EXPECT_LE(e.memory_offset + e.length, into.size()) << f.path;
      for (std::uint64_t i = 0; i < e.length && e.memory_offset + i < into.size(); ++i)
        into[e.memory_offset + i] = content(f.path, e.file_offset + i);
    }
  };
  const std::size_t n = exchanges.size();
  std::vector<std::vector<std::byte>> staging;
  for (std::size_t p = 0; p < n; ++p) {
    const PieceExchange& x = exchanges[p];
    for (std::size_t i = 0; i < x.own.size(); ++i) {
      for (const backends::FilePlan& f : x.own[i].io.files) fill(f, out[p][i]);
    }
    EXPECT_EQ(x.rounds(), exchanges.front().rounds()) << "process " << p;
    staging.emplace_back(x.staging.front().buffer_bytes);
  }
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> messages;
  for (int round = 0; round < exchanges.front().rounds(); ++round) {
    std::vector<std::size_t> next(n, 0);  // each process's next piece
    for (std::size_t p = 0; p < n; ++p) {
      std::fill(staging[p].begin(), staging[p].end(), std::byte{0});
      for (const backends::FilePlan& f :
           exchanges[p].staging[static_cast<std::size_t>(round)].io.files)
        fill(f, staging[p]);
    }
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t p = 0; p < n; ++p) {
        const std::vector<ExchangedPiece>& pieces = exchanges[p].pieces;
        for (; next[p] < pieces.size(); ++next[p], moved = true) {
          const ExchangedPiece& piece = pieces[next[p]];
          if (piece.round != round) continue;
          std::vector<std::byte> held;
          if (piece.reader == static_cast<int>(p)) {
            EXPECT_EQ(piece.from, -1);
            const auto* bytes = staging[p].data() + piece.staging_offset;
            held.assign(bytes, bytes + piece.bytes);
          } else {
            auto& queue = messages[{piece.from, static_cast<int>(p)}];
            if (queue.empty()) break;  // not passed on yet
            held = std::move(queue.front());
            queue.pop_front();
            EXPECT_EQ(held.size(), piece.bytes);
            EXPECT_LE(held.size(), exchanges[p].bounce_bytes);
          }
          for (const int to : piece.sends_to) messages[{static_cast<int>(p), to}].push_back(held);
          for (const PieceDelivery& d : piece.deliveries)
            std::copy_n(held.data() + d.source, d.length, out[p][d.plan].data() + d.memory_offset);
        }
      }
    }
    for (std::size_t p = 0; p < n; ++p) {
      if (next[p] < exchanges[p].pieces.size() && exchanges[p].pieces[next[p]].round == round)
        ADD_FAILURE() << "process " << p << " waits for a piece never passed on in round " << round;
    }
    for (const auto& [pair, queue] : messages)
      EXPECT_TRUE(queue.empty()) << pair.first << " -> " << pair.second << ": not received in "
                                 << "round " << round;
  }
  return out;
}

std::vector<PieceExchange> every_process(const std::vector<std::vector<RankPlan>>& by_process,
                                         std::uint64_t piece_bytes,
                                         std::uint64_t exchange_budget = 0) {
  std::vector<PieceExchange> out;
  for (int p = 0; p < static_cast<int>(by_process.size()); ++p)
    out.push_back(plan_piece_exchange(by_process, p, piece_bytes, 8, exchange_budget));
  return out;
}

// (file, offset) -> times read from storage over every process, in place or into staging.
std::map<std::pair<std::string, std::uint64_t>, int> reads_per_byte(
    const std::vector<PieceExchange>& exchanges) {
  std::map<std::pair<std::string, std::uint64_t>, int> out;
  for (const PieceExchange& x : exchanges) {
    std::vector<RankPlan> reads = x.own;
    reads.insert(reads.end(), x.staging.begin(), x.staging.end());
    for (const RankPlan& plan : reads) {
      for (const backends::FilePlan& f : plan.io.files) {
        for (const backends::Extent& e : f.extents) {
          for (std::uint64_t i = 0; i < e.length; ++i) ++out[{f.path, e.file_offset + i}];
        }
      }
    }
  }
  return out;
}

TEST(PieceExchange, TwoProcessesReadingOneFileReadEachPieceOnceAndSendItToTheOther) {
  // Both processes read bytes [0, 40) of one file, into different places; pieces of 16 bytes.
  const std::vector<std::vector<RankPlan>> plans{
      {reading("/c/a", {{.file_offset = 0, .memory_offset = 0, .length = 40}})},
      {reading("/c/a", {{.file_offset = 0, .memory_offset = 8, .length = 24},
                        {.file_offset = 24, .memory_offset = 40, .length = 16}})}};
  const std::vector<PieceExchange> x = every_process(plans, 16);
  // Pieces [0,16) [16,32) [32,40): the least loaded reads each, the first on a tie.
  ASSERT_EQ(x[0].pieces.size(), 3u);
  ASSERT_EQ(x[1].pieces.size(), 3u);
  EXPECT_EQ(x[0].pieces[0].reader, 0);
  EXPECT_EQ(x[0].pieces[1].reader, 1);
  EXPECT_EQ(x[0].pieces[2].reader, 0);
  EXPECT_EQ(x[0].staging.at(0).payload_bytes, 24u);
  EXPECT_EQ(x[1].staging.at(0).payload_bytes, 16u);
  EXPECT_EQ(x[0].staging.at(0).buffer_bytes, 24u);  // [0,16) at 0, [32,40) at 16
  EXPECT_EQ(x[0].pieces[0].sends_to, std::vector<int>{1});
  EXPECT_EQ(x[1].pieces[0].from, 0);
  EXPECT_EQ(x[1].pieces[0].bytes, 16u);
  EXPECT_EQ(x[1].bounce_bytes, 16u);
  // Process 1 splits [16,32) between its two extents: two deliveries out of one piece.
  EXPECT_EQ(x[1].pieces[1].deliveries.size(), 2u);
  for (const auto& [byte, times] : reads_per_byte(x)) EXPECT_EQ(times, 1) << byte.second;
  EXPECT_EQ(reads_per_byte(x).size(), 40u);
  EXPECT_EQ(replay(plans, x), direct_reads(plans));
}

TEST(PieceExchange, BytesOneProcessAloneReadsStayItsOwnAndSharedOnesGoToTheLeastLoaded) {
  // Three processes, two files; process 2 reads every other 4 bytes of /c/b (strided rows), the
  // others overlapping ranges of both files; rank plans several per process.
  std::vector<backends::Extent> strided;
  for (std::uint64_t i = 0; i < 8; ++i)
    strided.push_back({.file_offset = 8 * i, .memory_offset = 4 * i, .length = 4});
  const std::vector<std::vector<RankPlan>> plans{
      {reading("/c/b", {{.file_offset = 0, .memory_offset = 0, .length = 64}}),
       reading("/c/a", {{.file_offset = 10, .memory_offset = 0, .length = 30}})},
      {reading("/c/a", {{.file_offset = 0, .memory_offset = 0, .length = 20}}),
       reading("/c/b", {{.file_offset = 60, .memory_offset = 0, .length = 20}})},
      {reading("/c/b", strided)}};
  const std::vector<PieceExchange> x = every_process(plans, 32);
  const auto reads = reads_per_byte(x);
  EXPECT_EQ(reads.size(), 40u + 80u);  // /c/a [0,40), /c/b [0,80)
  for (const auto& [byte, times] : reads) EXPECT_EQ(times, 1) << byte.first << " @" << byte.second;
  // /c/a: [0,10) process 1's own, [10,20) shared (to process 0, less loaded), [20,40) process 0's
  // own, read in place as one request. /c/b: the eight strided 4-byte runs shared by processes 0
  // and 2 (to 2, less loaded), the runs between process 0's own, [60,64) shared (to 1), [64,80)
  // 1's own.
  EXPECT_EQ(x[0].storage_bytes(), 10u + 20u + 28u);
  EXPECT_EQ(x[0].staging.at(0).payload_bytes, 10u);
  EXPECT_EQ(x[1].storage_bytes(), 10u + 4u + 16u);
  EXPECT_EQ(x[1].staging.at(0).payload_bytes, 4u);
  EXPECT_EQ(x[2].storage_bytes(), 32u);
  EXPECT_EQ(x[2].staging.at(0).payload_bytes, 32u);
  ASSERT_EQ(x[0].own.size(), 2u);
  ASSERT_EQ(x[0].own[1].io.files.size(), 1u);
  const backends::FilePlan& own = x[0].own[1].io.files[0];
  EXPECT_EQ(own.path, "/c/a");
  ASSERT_EQ(own.extents.size(), 1u);
  EXPECT_EQ(own.extents[0].file_offset, 20u);
  EXPECT_EQ(own.extents[0].memory_offset, 10u);
  EXPECT_EQ(own.extents[0].length, 20u);
  EXPECT_EQ(x[0].own[0].payload_bytes, 28u);  // /c/b's runs between the strided ones
  std::uint64_t sent = 0;
  for (const PieceExchange& mine : x) {
    for (const ExchangedPiece& piece : mine.pieces) sent += piece.bytes * piece.sends_to.size();
  }
  EXPECT_EQ(sent, 10u + 32u + 4u);  // only shared bytes travel
  for (const ExchangedPiece& piece : x[2].pieces) {
    EXPECT_EQ(piece.reader, 2);
    EXPECT_EQ(piece.sends_to, std::vector<int>{0});
  }
  EXPECT_EQ(x[0].bounce_bytes, 4u);
  EXPECT_EQ(x[1].bounce_bytes, 10u);
  EXPECT_EQ(x[2].bounce_bytes, 0u);
  EXPECT_EQ(replay(plans, x), direct_reads(plans));
}

TEST(PieceExchange, BytesOneRankAloneReadsAreReadInPlaceAndAProcessReadingNothingHasNothing) {
  const std::vector<std::vector<RankPlan>> plans{
      {reading("/c/a", {{.file_offset = 0, .memory_offset = 0, .length = 8}})}, {}};
  const std::vector<PieceExchange> x = every_process(plans, 16);
  EXPECT_TRUE(x[0].pieces.empty());
  EXPECT_TRUE(x[0].staging.at(0).io.files.empty());
  ASSERT_EQ(x[0].own.size(), 1u);
  ASSERT_EQ(x[0].own[0].io.files.size(), 1u);
  ASSERT_EQ(x[0].own[0].io.files[0].extents.size(), 1u);
  EXPECT_EQ(x[0].own[0].io.files[0].extents[0].file_offset, 0u);
  EXPECT_EQ(x[0].own[0].io.files[0].extents[0].length, 8u);
  EXPECT_EQ(x[0].storage_bytes(), 8u);
  EXPECT_TRUE(x[1].pieces.empty());
  EXPECT_TRUE(x[1].own.empty());
  EXPECT_EQ(x[1].staging.at(0).buffer_bytes, 8u);  // one block, for the (empty) read
  EXPECT_EQ(x[1].buffer_bytes(), 8u);
  EXPECT_EQ(replay(plans, x), direct_reads(plans));
}

TEST(PieceExchange, ABudgetTooSmallForOneRoundRunsInRoundsAndStillReadsEachByteOnce) {
  // Both processes read bytes [0, 96) of one file; pieces of 16 bytes, read alternately by 0 and 1.
  const std::vector<std::vector<RankPlan>> plans{
      {reading("/c/a", {{.file_offset = 0, .memory_offset = 0, .length = 96}})},
      {reading("/c/a", {{.file_offset = 0, .memory_offset = 4, .length = 96}})}};
  const std::vector<PieceExchange> whole = every_process(plans, 16);
  ASSERT_EQ(whole[0].rounds(), 1);
  EXPECT_EQ(whole[0].buffer_bytes(), 48u + 16u);  // 3 pieces staged, one received at a time
  // 40 bytes for the exchange: a bounce of 16 leaves 24 for staging, one piece of each reader
  // per round.
  const std::vector<PieceExchange> x = every_process(plans, 16, 40);
  for (const PieceExchange& p : x) {
    ASSERT_EQ(p.rounds(), 3);
    EXPECT_EQ(p.buffer_bytes(), 16u + 16u);
    EXPECT_LE(p.buffer_bytes(), 40u);
    for (const RankPlan& round : p.staging) EXPECT_EQ(round.payload_bytes, 16u);
    ASSERT_EQ(p.pieces.size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(p.pieces[i].reader, static_cast<int>(i % 2));
      EXPECT_EQ(p.pieces[i].round, static_cast<int>(i / 2));
      if (p.pieces[i].reader == &p - x.data()) {
        EXPECT_EQ(p.pieces[i].staging_offset, 0u);
      }
    }
    EXPECT_EQ(p.storage_bytes(), whole[static_cast<std::size_t>(&p - x.data())].storage_bytes());
  }
  for (const auto& [byte, times] : reads_per_byte(x)) EXPECT_EQ(times, 1) << byte.second;
  EXPECT_EQ(reads_per_byte(x).size(), 96u);
  EXPECT_EQ(replay(plans, x), direct_reads(plans));
  // A budget below one piece and the bounce still runs, a piece per round, over the budget (the
  // memory check refuses it).
  const std::vector<PieceExchange> tight = every_process(plans, 16, 20);
  EXPECT_EQ(tight[0].rounds(), 3);
  EXPECT_EQ(tight[0].buffer_bytes(), 32u);
  EXPECT_EQ(replay(plans, tight), direct_reads(plans));
}

// Process p of `processes` reads all of /c/w (a replicated tensor: one piece every process reads)
// and [16p, 16p + 32) of /c/x (half of it its neighbour's too).
std::vector<std::vector<RankPlan>> replicated_and_overlapping(int processes) {
  std::vector<std::vector<RankPlan>> plans;
  for (int p = 0; p < processes; ++p) {
    const auto at = static_cast<std::uint64_t>(p) * 16;
    plans.push_back({reading("/c/w", {{.file_offset = 0, .memory_offset = 0, .length = 64}}),
                     reading("/c/x", {{.file_offset = at, .memory_offset = 8, .length = 32}})});
  }
  return plans;
}

// The exchange as a comparable tuple: per piece its reader, round, bytes, tree links and
// deliveries; then the reads.
std::vector<std::vector<std::uint64_t>> summary(const PieceExchange& x) {
  std::vector<std::vector<std::uint64_t>> out;
  for (const ExchangedPiece& piece : x.pieces) {
    std::vector<std::uint64_t> row{static_cast<std::uint64_t>(piece.reader),
                                   static_cast<std::uint64_t>(piece.round), piece.bytes,
                                   piece.staging_offset};
    row.push_back(static_cast<std::uint64_t>(piece.from + 1));
    for (const int q : piece.sends_to) row.push_back(static_cast<std::uint64_t>(q));
    for (const PieceDelivery& d : piece.deliveries)
      row.insert(row.end(), {d.plan, d.memory_offset, d.source, d.length});
    out.push_back(std::move(row));
  }
  out.push_back({x.storage_bytes(), x.buffer_bytes(), x.bounce_bytes,
                 static_cast<std::uint64_t>(x.rounds())});
  return out;
}

TEST(PieceExchange, EveryProcessPlannedInOnePassIsEachPlannedAloneAndScales) {
  const std::vector<std::vector<RankPlan>> few = replicated_and_overlapping(5);
  const std::vector<PieceExchange> all = plan_piece_exchanges(few, 16, 8);
  ASSERT_EQ(all.size(), 5u);
  for (int p = 0; p < 5; ++p)
    EXPECT_EQ(summary(all[static_cast<std::size_t>(p)]),
              summary(plan_piece_exchange(few, p, 16, 8)))
        << "process " << p;
  EXPECT_EQ(replay(few, all), direct_reads(few));
  // /c/w once, [0, 96) of /c/x once.
  EXPECT_EQ(reads_per_byte(all).size(), 64u + 96u);
  // Every piece goes once to each other process reading it: /c/w's 4 pieces to 4 processes each,
  // the 4 shared halves of /c/x to one neighbour each.
  std::size_t sends = 0;
  for (const PieceExchange& x : all) {
    for (const ExchangedPiece& piece : x.pieces) sends += piece.sends_to.size();
  }
  EXPECT_EQ(sends, 4u * 4u + 4u);
  // /c/w's third piece: process 2 reads it (the least loaded) and it goes down the tree of nodes
  // [2, 0, 1, 3, 4]: node 0 to nodes 4, 2, 1 (farthest first), node 1 to node 3. The reader sends
  // ceil(log2 5) = 3 messages, not 4.
  const auto third = [&all](int p) {
    for (const ExchangedPiece& piece : all[static_cast<std::size_t>(p)].pieces) {
      if (piece.reader == 2) return piece;
    }
    return ExchangedPiece{};
  };
  EXPECT_EQ(third(2).sends_to, (std::vector<int>{4, 1, 0}));
  EXPECT_EQ(third(0).from, 2);
  EXPECT_EQ(third(0).sends_to, std::vector<int>{3});
  EXPECT_EQ(third(3).from, 0);
  EXPECT_EQ(third(1).from, 2);
  EXPECT_TRUE(third(1).sends_to.empty());
  EXPECT_EQ(third(4).from, 2);
  // 4000 processes: every one planned in one pass, in time that grows with the reads (planning
  // each alone would take 4000 passes over 8000 reads).
  const int many = 4000;
  const std::vector<std::vector<RankPlan>> plans = replicated_and_overlapping(many);
  const std::clock_t start = std::clock();
  const std::vector<PieceExchange> every = plan_piece_exchanges(plans, 16, 8, 1 << 20);
  const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_LT(cpu, 2.0);
  ASSERT_EQ(every.size(), static_cast<std::size_t>(many));
  EXPECT_EQ(summary(every[1234]), summary(plan_piece_exchange(plans, 1234, 16, 8, 1 << 20)));
}

}  // namespace
}  // namespace ckpt::harness
