#pragma once

// The cooperative read's second step (plan_piece_exchange planned it): each piece, read by one
// process into its exchange buffer, sent over MPI point to point to the other processes reading
// it, each of which copies it to the places its rank plans read it into.

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
// for the pieces of round `round` (whose staging the readers read beforehand): the reader of a
// piece sends it whole to each receiver, one message, and copies its deliveries
// out of `staging` (the exchange buffer); a receiver receives it into `bounce`
// (at least exchange.bounce_bytes) and copies its deliveries into `buffer`, whose rank i is the
// plans' i. Blocking pairs taken in one order on every process cannot deadlock. Host memory only.
PieceCounts exchange_pieces(Comm& comm, const PieceExchange& exchange, int round,
                            const ProcessBuffer& staging, const ProcessBuffer& buffer,
                            std::span<std::byte> bounce);

}  // namespace ckpt::harness
