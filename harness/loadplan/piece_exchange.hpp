#pragma once

// The cooperative read of any set of read plans (a resharded restore's, an inference load's),
// after DCP's cooperative load planner and Megatron's fully parallel load: every byte of a stored
// file that some process's plans read is read from storage once, by one of the processes that
// need it, and sent over the interconnect to the others that need it. Each file's bytes are cut
// into pieces where the set of processes reading them changes and at multiples of `piece_bytes`
// of the file, so that every process reading from a piece reads all of it: a piece only one
// process reads is its own read, and one that several read goes to the one with the fewest bytes
// to read so far (the first on a tie), which reads it into its exchange buffer and sends it whole
// to the others down a binomial tree rooted at the reader (each holder passes it on, so the
// reader sends ceil(log2 n) messages of a piece n processes read, not n - 1, and no process more).
// Each copies it to the places its own plans read it into, as the read would have.
// A piece only one rank reads is read straight into its place. Under a bound on the exchange
// buffer the shared pieces go in rounds, the same on every process: a round ends before a piece
// that would take some reader past the bound, and each round's pieces are read, then sent, before
// the next round's reuse the buffer.

#include <cstdint>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// Bytes of a piece that land in one of this process's rank buffers.
struct PieceDelivery {
  std::size_t plan = 0;             // index of the rank plan on this process
  std::uint64_t memory_offset = 0;  // in that rank's buffer
  std::uint64_t source = 0;         // from the piece's start
  std::uint64_t length = 0;
};

// One piece this process reads or receives.
struct ExchangedPiece {
  int reader = 0;
  std::uint64_t bytes = 0;
  int from = -1;                     // the process it arrives from; -1: this process reads it
  std::vector<int> sends_to;         // the processes this one passes it on to, in order
  std::uint64_t staging_offset = 0;  // reader only: where it lies in the exchange buffer
  std::vector<PieceDelivery> deliveries;
  int round = 0;  // the round it is read and sent in
};

struct PieceExchange {
  // Per round (at least one, as many on every process), what this process reads of the pieces
  // others read too, or several of its ranks: into the exchange buffer (io; payload_bytes the
  // bytes read; buffer_bytes the same in every round, the widest round's). Empty io when none.
  std::vector<RankPlan> staging;
  // The pieces only one of its ranks reads, read straight into that rank's buffer: per rank plan
  // of the process (in their order), its reads of them (payload_bytes their bytes).
  std::vector<RankPlan> own;
  std::vector<ExchangedPiece> pieces;  // this process's, in the one order of every process
  std::uint64_t bounce_bytes = 0;      // the largest piece it receives

  // Bytes this process reads from storage: staging's and own's.
  std::uint64_t storage_bytes() const;
  // Memory the exchange takes besides the rank buffers: the exchange buffer and the bounce.
  std::uint64_t buffer_bytes() const {
    return (staging.empty() ? 0 : staging.front().buffer_bytes) + bounce_bytes;
  }
  int rounds() const { return static_cast<int>(staging.size()); }
};

// The exchange of process `process`, given every process's read plans (by_process[q]: process
// q's, in its order; their paths absolute). Pieces of the exchange buffer start at multiples of
// `alignment` (direct I/O). `piece_bytes` > 0. `exchange_budget`: the bound on buffer_bytes() of
// every process (the same on all), met in rounds whose staging leaves room for a bounce of the
// largest shared piece; a round holds at least one piece, which may break it. 0: one round.
PieceExchange plan_piece_exchange(const std::vector<std::vector<RankPlan>>& by_process, int process,
                                  std::uint64_t piece_bytes, std::uint64_t alignment,
                                  std::uint64_t exchange_budget = 0);

// Every process's exchange, as plan_piece_exchange plans each, in one pass over the pieces (time
// and memory in proportion to all the reads, not to the processes times them): for a planner that
// needs every process's, such as the dry run's memory figures.
std::vector<PieceExchange> plan_piece_exchanges(
    const std::vector<std::vector<RankPlan>>& by_process, std::uint64_t piece_bytes,
    std::uint64_t alignment, std::uint64_t exchange_budget = 0);

}  // namespace ckpt::harness
