#include "harness/exec/replica_share.hpp"

#include <algorithm>
#include <cstring>
#include <span>

namespace ckpt::harness {
namespace {

std::span<std::byte> place_of(const ProcessBuffer& buffer,
                              const std::pair<std::size_t, std::uint64_t>& place,
                              std::uint64_t bytes) {
  return {buffer.rank_view(place.first).data + place.second, bytes};
}

}  // namespace

ShareCounts share_replicas(Comm& comm, const std::vector<ReplicaShare>& shares,
                           const ProcessBuffer& buffer, std::uint64_t chunk_bytes) {
  ShareCounts counts;
  const int me = comm.rank();
  for (const ReplicaShare& share : shares) {
    const std::span<std::byte> first = place_of(buffer, share.places.front(), share.bytes);
    for (std::uint64_t at = 0; at < share.bytes; at += chunk_bytes) {
      const std::span<std::byte> chunk = first.subspan(at, std::min(chunk_bytes, share.bytes - at));
      if (me != share.reader) {
        comm.receive(share.reader, chunk);
        continue;
      }
      for (const int to : share.receivers) comm.send(to, chunk);
    }
    if (me == share.reader) counts.sent_bytes += share.bytes * share.receivers.size();
    for (std::size_t i = 1; i < share.places.size(); ++i) {
      std::memcpy(place_of(buffer, share.places[i], share.bytes).data(), first.data(), share.bytes);
      counts.copied_bytes += share.bytes;
    }
  }
  return counts;
}

}  // namespace ckpt::harness
