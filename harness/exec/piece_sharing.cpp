#include "harness/exec/piece_sharing.hpp"

#include <cstring>

namespace ckpt::harness {
namespace {

// Copies the piece's deliveries from `piece` (its bytes in the exchange buffer, or received).
std::uint64_t deliver(const ExchangedPiece& x, const std::byte* piece,
                      const ProcessBuffer& buffer) {
  std::uint64_t bytes = 0;
  for (const PieceDelivery& d : x.deliveries) {
    std::memcpy(buffer.rank_view(d.plan).data + d.memory_offset, piece + d.source, d.length);
    bytes += d.length;
  }
  return bytes;
}

}  // namespace

PieceCounts exchange_pieces(Comm& comm, const PieceExchange& exchange, int round,
                            const ProcessBuffer& staging, const ProcessBuffer& buffer,
                            std::span<std::byte> bounce) {
  PieceCounts counts;
  const int me = comm.rank();
  for (const ExchangedPiece& piece : exchange.pieces) {
    if (piece.round != round) continue;
    const std::byte* held =
        piece.reader == me ? staging.rank_view(0).data + piece.staging_offset : bounce.data();
    if (piece.reader != me) comm.receive(piece.from, bounce.first(piece.bytes));
    for (const int to : piece.sends_to) comm.send(to, {held, piece.bytes});
    counts.sent_bytes += piece.bytes * piece.sends_to.size();
    counts.copied_bytes += deliver(piece, held, buffer);
  }
  return counts;
}

}  // namespace ckpt::harness
