#pragma once

namespace ckpt::harness {

// The version of the results.jsonl record (results/SCHEMA.md), written as `schema_version` in
// every record and switched on by the readers. It goes up when the record's key paths change (a
// key added, removed or renamed) or a key's type, unit or meaning does, so that a reader of
// version N may rely on every key of version N.
inline constexpr int kResultsSchemaVersion = 5;
// The oldest version the readers still take: every version from it to kResultsSchemaVersion, each
// a case of the reader's switch (results/SCHEMA.md lists what each version changed).
inline constexpr int kOldestReadResultsSchemaVersion = 1;

}  // namespace ckpt::harness
