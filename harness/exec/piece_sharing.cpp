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
    if (piece.reader != me) {
      comm.receive(piece.reader, bounce.first(piece.bytes));
      counts.copied_bytes += deliver(piece, bounce.data(), buffer);
      continue;
    }
    const std::byte* read = staging.rank_view(0).data + piece.staging_offset;
    for (const int to : piece.receivers) comm.send(to, {read, piece.bytes});
    counts.sent_bytes += piece.bytes * piece.receivers.size();
    counts.copied_bytes += deliver(piece, read, buffer);
  }
  return counts;
}

}  // namespace ckpt::harness
