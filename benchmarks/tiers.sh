#!/usr/bin/env bash
# configs/tiers.toml under mpirun -np 8 (4 emulated nodes of 2 processes): the loop's stall and
# time to durable for sync, async and tiered (F = 2, drained every 2nd checkpoint), the tiered
# engine's time to local and to replicated; then node 1 lost after a tiered loop, recovered from
# its peers (F = 2) and from storage (F = 1, every checkpoint drained). Prints one line per case
# and the ratios measured in this one run.
#
#   benchmarks/tiers.sh [build/bin/ckptbench] [output-dir]
#
# TIERS_ARGS adds ckptbench options to both runs (e.g. "--set model.scale=4096" for a smoke test).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/ckptbench}
out=${2:-results/run/tiers}
config=configs/tiers.toml
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1
        --mca btl_vader_single_copy_mechanism none -np 8)
read -r -a extra <<<"${TIERS_ARGS:-}"
mkdir -p "$out"
"${mpirun[@]}" "$bin" run "$config" --output "$out/engines" -q "${extra[@]}" >/dev/null
"${mpirun[@]}" "$bin" run "$config" --output "$out/recovery" -q "${extra[@]}" --set engine.name=tiered \
  --set 'tiers.replicas=[2, 1]' --set tiers.drain_every=1 --set 'tiers.lost_nodes=[1]' >/dev/null
python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
def records(name):
    path = sorted(glob.glob(f"{out}/{name}/*/results.jsonl"))[-1]
    return [json.loads(line) for line in open(path)]
stall = {}
for r in records("engines"):
    t = r["training"]
    stall[t["engine"]] = t["stall_seconds"]
    line = f"{t['engine']:7s} stall {t['stall_seconds']:.3f} s  durable {t['time_to_durable_seconds']:.3f} s"
    if "tiers" in t:
        line += f"  local {t['tiers']['local_seconds']:.3f} s  replicated {t['tiers']['replicated_seconds']:.3f} s"
    print(line)
recovery = {}
for r in records("recovery"):
    rec = r["training"]["recovery"]
    f = r["training"]["tiers"]["replicas"]
    recovery[f] = rec["seconds"]
    print(f"recover node 1, F = {f}: {rec['seconds']:.3f} s, bytes {rec['bytes']}, verified {r['verified']}")
print(f"stall sync / tiered: {stall['sync'] / stall['tiered']:.1f}x; async / tiered: "
      f"{stall['async'] / stall['tiered']:.2f}x")
print(f"recovery from storage / from peers: {recovery[1] / recovery[2]:.2f}x")
PY
