#pragma once

// The cooperative read's second step (plan_piece_exchange planned it): each piece, read by one
// process into its exchange buffer, sent over MPI point to point down a binomial tree to the other
// processes reading it, each of which copies it to the places its rank plans read it into.

#include <cstddef>
#include <cstdint>
#include <span>

#include "harness/comm/comm.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/loadplan/piece_exchange.hpp"

namespace ckpt::harness {

struct PieceCounts {
  std::uint64_t sent_bytes = 0;    // to other processes (the interconnect)
  std::uint64_t copied_bytes = 0;  // from the exchange buffer or a message into the rank buffers
};

// Collective (every process with its own exchange, in the one order plan_piece_exchange gives),
// for the pieces of round `round` (whose staging the readers read beforehand): a piece's reader
// sends it out of `staging` (the exchange buffer) down its broadcast tree, each receiver receives
// it into `bounce` (at least exchange.bounce_bytes) and passes it on to its own sends_to; every
// holder copies its deliveries into `buffer`, whose rank i is the plans' i. Blocking pairs taken
// in one order on every process, each piece's tree acyclic, cannot deadlock. Host memory only.
PieceCounts exchange_pieces(Comm& comm, const PieceExchange& exchange, int round,
                            const ProcessBuffer& staging, const ProcessBuffer& buffer,
                            std::span<std::byte> bounce);

}  // namespace ckpt::harness
