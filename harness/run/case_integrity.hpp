#pragma once

// Private to harness/run: the integrity checks of one case (IntegrityRecord) as its runner takes
// them, and the record that links the two invocations of MLPerf Storage's two-invocation workflow.
#include "backends/backend.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Every process's preloaded libraries and interposed I/O calls, merged at process 0. Collective.
void record_preload(CaseState& s);

// The durability probe of the case's target, once per run and target (process 0; the others
// record nothing, as the record is process 0's). Not probed, with the reason, for a phase that
// claims no durability (load, backend.sync = "none", a backend that stores nothing) or an object
// store.
void probe_target(CaseState& s, const backends::Backend* backend);

// The facts the warnings need once the case's sizes are known (bytes per host, the host's memory
// and cores), and the event that ends each timed phase that ran.
void record_integrity_facts(CaseState& s);

// The write invocation of an [mlperf] case (--phase checkpoint) that ended ok leaves its end in
// the case directory (process 0); the read invocation (--phase restore) reads it and records the
// gap from it to its own start (check_invocation_gap). Collective.
void record_write_end(CaseState& s);
void check_read_gap(CaseState& s);

}  // namespace ckpt::harness
