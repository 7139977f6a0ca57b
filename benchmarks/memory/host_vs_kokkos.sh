#!/usr/bin/env bash
# Host vs Kokkos memory with `ckptbench run`: RUNS runs of host-vs-kokkos.toml (default 8),
# alternating which space goes first, then medians over every timed iteration of every run
# (write, read) and over runs (fill, verify), and the kokkos / host ratios.
#
#   benchmarks/memory/host_vs_kokkos.sh [build/bin/ckptbench]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/bin/ckptbench}
runs=${RUNS:-8}
out=$(mktemp -d /tmp/ckptbench-host-vs-kokkos-results.XXXXXX)
trap 'rm -rf "$out" /tmp/ckptbench-host-vs-kokkos' EXIT
for i in $(seq 1 "$runs"); do
  if (( i % 2 )); then order='["host", "kokkos"]'; else order='["kokkos", "host"]'; fi
  if ! "$bin" run "$here/host-vs-kokkos.toml" --set "memory.space=$order" --output "$out" > "$out/log" 2>&1; then
    cat "$out/log" >&2
    exit 1
  fi
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, sys
rows = {}
for path in sorted(glob.glob(sys.argv[1] + "/*/results.jsonl")):
    for line in open(path):
        j = json.loads(line)
        assert j["verified"], j["error"]
        r = rows.setdefault(j["memory_space"], {"write": [], "read": [], "fill": [], "verify": []})
        r["write"] += j["samples"]["write_seconds"]
        r["read"] += j["samples"]["read_seconds"]
        r["fill"].append(j["fill_seconds"])
        r["verify"].append(j["verify_seconds"])
        size = j["bytes_per_checkpoint"]
med = {s: {k: statistics.median(v) for k, v in r.items()} for s, r in rows.items()}
print(f"{size} bytes per checkpoint; medians of {len(rows['host']['write'])} iterations (write, read), "
      f"{len(rows['host']['fill'])} runs (fill, verify)")
for s, m in med.items():
    print(f"{s:7s} write {size / m['write'] / 2**30:6.3f} GiB/s  read {size / m['read'] / 2**30:6.3f} GiB/s  "
          f"fill {m['fill'] * 1e3:6.1f} ms  verify {m['verify'] * 1e3:6.1f} ms")
h, k = med["host"], med["kokkos"]
print("kokkos / host time: " + "  ".join(f"{x} {k[x] / h[x]:.3f}" for x in ("write", "read", "fill", "verify")))
PY
