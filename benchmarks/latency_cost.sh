#!/usr/bin/env bash
# measure.latency off against on: REPEATS runs (default 5) of benchmarks/latency-cost.toml, each
# alternating off and on per backend (off first in odd runs, on first in even ones); prints per backend and phase the median over the runs of
# each case's median bandwidth, and on/off. Quote the ratio, not the absolute figures.
#
#   benchmarks/latency_cost.sh [REPEATS] [OUTPUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-5}"
out="${2:-results/runs/latency-cost}"
mkdir -p "$out"
for ((i = 1; i <= repeats; i++)); do
  order="[false,true]"
  ((i % 2 == 0)) && order="[true,false]"
  build/bin/ckptbench -q run benchmarks/latency-cost.toml --set "measure.latency=$order" --output "$out/$i" >/dev/null
  echo "run $i of $repeats done" >&2
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, sys
rows = {}
for path in glob.glob(sys.argv[1] + "/*/*/results.jsonl"):
    for line in open(path):
        r = json.loads(line)
        key = (r["backend"], r["config"]["measure"]["latency"])
        for phase in ("write", "read"):
            rows.setdefault(key + (phase,), []).append(r[phase + "_gib_per_s"])
print(f"{'backend':8} {'phase':6} {'off GiB/s':>10} {'on GiB/s':>10} {'on/off':>7}  runs")
for backend in sorted({k[0] for k in rows}):
    for phase in ("write", "read"):
        off, on = rows[(backend, False, phase)], rows[(backend, True, phase)]
        mo, mn = statistics.median(off), statistics.median(on)
        print(f"{backend:8} {phase:6} {mo:10.3f} {mn:10.3f} {mn / mo:7.3f}  {len(off)}")
PY
