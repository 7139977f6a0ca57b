#pragma once

// The cooperative read of a resharded restore (restore.replicas = "cooperative") or a load
// (load.cooperative): each process reads its pieces of every process's plans into its exchange
// buffer, then the pieces go over MPI to the processes that need them (exchange_pieces). Its
// `replicas` record compares the bytes from storage and over the interconnect with what every
// process would read of its own plans.

#include "backends/backend.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Before any clock: takes the exchange and allocates its buffers in `space` (touched), and starts
// the record's `replicas` (collective).
void prepare_piece_read(CaseState& s, PieceExchange exchange, MemorySpace& space);

// The timed read (collective, also after a failed read: the others wait for this process's
// pieces): the reads of this process's pieces through `backend`, its own ones straight into
// `buffer` (the plans' rank buffers), then the exchange of the others into it. The sample's seconds
// cover both; the sent and copied bytes go to the record's `replicas`.
ProcessSample timed_piece_read(CaseState& s, backends::Backend& backend,
                               const ProcessBuffer& buffer);

}  // namespace ckpt::harness
