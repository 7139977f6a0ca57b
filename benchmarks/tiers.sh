#!/usr/bin/env bash
# configs/tiers.toml under mpirun -np 8 (4 emulated nodes of 2 processes): the loop's stall and
# time to durable for sync, async and tiered (F = 2, drained every 2nd checkpoint), the tiered
# engine's time to local and to replicated; then node 1 lost after a tiered loop, recovered from
# its peers (F = 2) and from storage (F = 1, every checkpoint drained); node 1 lost and recovered
# by a restarted job (--phase restore) from the local tiers a tiered job left; then the same
# state restored without the loop, same layout and resharded to DP 4 (ZeRO-1), with every rank
# reading its own ranges ("written"; same layout also "read", every DP replica reading its copy) and
# cooperatively (each stored byte read once, what several processes read sent over MPI). Prints
# one line per case and the ratios measured in this one run.
#
#   benchmarks/tiers.sh [build/bin/ckptbench] [output-dir]
#
# TIERS_ARGS adds ckptbench options to every run (e.g. "--set training.iterations=4"); the
# resharded restore needs a model.scale that divides 256 (Llama 3's vocabulary is 256 x 501 rows).
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
# The restarted job: a tiered job keeps its node-local tiers, then a job of its own loses node 1.
tiered=(--set engine.name=tiered --set campaign.keep=true)
"${mpirun[@]}" "$bin" run "$config" --phase checkpoint --output "$out/trained" -q "${extra[@]}" \
  "${tiered[@]}" >/dev/null
"${mpirun[@]}" "$bin" run "$config" --phase restore --output "$out/restarted" -q "${extra[@]}" \
  "${tiered[@]}" --set 'tiers.lost_nodes=[1]' >/dev/null
# Restores without the loop: written vs cooperative, same layout (one checkpoint per case) and
# resharded (one checkpoint, restored by each in turn).
plain=(--set training.iterations=0 --set engine.name=sync --set campaign.keep=true)
"${mpirun[@]}" "$bin" run "$config" --phase checkpoint --output "$out/written-same" -q "${extra[@]}" \
  "${plain[@]}" --set 'restore.replicas=["written", "read", "cooperative"]' >/dev/null
"${mpirun[@]}" "$bin" run "$config" --phase restore --output "$out/restore-same" -q "${extra[@]}" \
  "${plain[@]}" --set 'restore.replicas=["written", "read", "cooperative"]' >/dev/null
"${mpirun[@]}" "$bin" run "$config" --phase checkpoint --output "$out/written-reshard" -q \
  "${extra[@]}" "${plain[@]}" >/dev/null
for mode in written cooperative; do
  "${mpirun[@]}" "$bin" run "$config" --phase restore --output "$out/restore-reshard-$mode" -q \
    "${extra[@]}" "${plain[@]}" --set restore.dp=4 --set "restore.replicas=$mode" \
    >/dev/null
done
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
for r in records("restarted"):
    rec = r["training"]["recovery"]
    print(f"restarted job, node 1 lost: {rec['seconds']:.3f} s, bytes {rec['bytes']}, "
          f"parts {rec['parts']}, verified {r['verified']}")
restore = {}
for layout, runs in (("same", ["same"]), ("reshard", ["reshard-written", "reshard-cooperative"])):
    for r in [r for run in runs for r in records(f"restore-{run}")]:
        x = r.get("replicas") or {}
        mode = x.get("mode", "written")
        restore[layout, mode] = r["read_seconds"]
        line = f"restore {layout:7s} {mode:11s} {r['read_seconds']:.3f} s, verified {r['verified']}"
        if x:
            line += (f", storage {x['storage_bytes']} B, interconnect {x['interconnect_bytes']} B "
                     f"(every rank reading its own: {x['held_bytes']} B)")
        print(line)
print(f"stall sync / tiered: {stall['sync'] / stall['tiered']:.1f}x; async / tiered: "
      f"{stall['async'] / stall['tiered']:.2f}x")
print(f"recovery from storage / from peers: {recovery[1] / recovery[2]:.2f}x")
# Against every rank reading its own ranges: "read" gives the DP replicas their copies too.
for layout, each in (("same", "read"), ("reshard", "written")):
    print(f"restore {layout}, {each} / cooperative: "
          f"{restore[layout, each] / restore[layout, 'cooperative']:.2f}x")
PY
