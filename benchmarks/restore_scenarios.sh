#!/usr/bin/env bash
# Resharding restore scenarios of configs/restore-scenarios.toml, each restore with caches
# dropped (cache.policy = "drop"), medians of campaign.iterations: same-layout restore of the
# TP8×PP4 checkpoint, TP8×PP4 -> TP4×PP8 (exact, whole_items), and TP4(×PP8) -> TP8(×PP4)
# (exact, exact with restore.gap_bytes = 8 KiB, whole_items), TP8×PP4 -> TP4×PP8 exact with
# O_DIRECT from an O_DIRECT-written checkpoint; then inference weight loading (--phase load) of
# Llama 3 8B and 70B weights by each method at the writer's TP 8 and pipelined at TP 4. Prints one
# line per scenario: read (or load) GiB/s (median), bytes needed and read, amplification,
# requests, bytes copied out of scratch (and for loads the preads issued).
#
#   benchmarks/restore_scenarios.sh [build/bin/ckptbench] [output-dir] [all|reshard|load]
set -euo pipefail
bin=${1:-build/bin/ckptbench}
out=${2:-results/run/restore-scenarios}
only=${3:-all}
config=configs/restore-scenarios.toml
tp4=(--set campaign.name=restore-scenarios-tp4 --set parallel.tp=4 --set parallel.pp=8)
mkdir -p "$out"

run() {  # name, ckptbench arguments...
  local name=$1
  shift
  "$bin" run "$config" --output "$out/$name" "$@" -q >/dev/null
  python3 - "$name" "$out/$name" <<'PY'
import glob, json, sys
name, folder = sys.argv[1], sys.argv[2]
for line in open(sorted(glob.glob(folder + "/*/results.jsonl"))[-1]):
    r = json.loads(line)
    s = r.get("reshard") or r.get("load") or {}
    label = name + ("-" + s["method"] if "load" in r else "")
    needed = s.get("bytes_needed", s.get("bytes", r["bytes_per_checkpoint"]))
    read = s.get("bytes_read", r["bytes_per_checkpoint"])
    print(f"{label:34s} {r['status']:6s} verified={r['verified']!s:5s} read {r['read_gib_per_s'] or 0:.3f} GiB/s "
          f"needed {needed} read {read} ({read / needed:.2f}x) requests {s.get('requests', r['extents_per_checkpoint'])} "
          f"copied {s.get('copied_bytes', 0)}" + (f" reads {s['reads']}" if "reads" in s else ""))
PY
}

if [ "$only" != load ]; then
  "$bin" run "$config" --phase checkpoint --output "$out/write-tp8" >/dev/null
  run same-layout-tp8xpp4 --phase restore
  run tp8xpp4-to-tp4xpp8-exact --phase restore --set restore.tp=4 --set restore.pp=8
  run tp8xpp4-to-tp4xpp8-whole --phase restore --set restore.tp=4 --set restore.pp=8 --set restore.read=whole_items
  "$bin" run "$config" --phase checkpoint --output "$out/write-tp4" "${tp4[@]}" >/dev/null
  run same-layout-tp4xpp8 --phase restore "${tp4[@]}"
  run tp4-to-tp8-exact --phase restore "${tp4[@]}" --set restore.tp=8 --set restore.pp=4
  run tp4-to-tp8-exact-gap8k --phase restore "${tp4[@]}" --set restore.tp=8 --set restore.pp=4 --set restore.gap_bytes=8192
  run tp4-to-tp8-whole --phase restore "${tp4[@]}" --set restore.tp=8 --set restore.pp=4 --set restore.read=whole_items
  direct=(--set campaign.name=restore-scenarios-direct --set backend.direct=true)
  "$bin" run "$config" --phase checkpoint --output "$out/write-direct" "${direct[@]}" >/dev/null
  run same-layout-direct --phase restore "${direct[@]}"
  run tp8xpp4-to-tp4xpp8-exact-direct --phase restore "${direct[@]}" --set restore.tp=4 --set restore.pp=8
fi

# Inference weight loading (--phase load) of weights-only safetensors checkpoints, TP 8.
load8b=(--set campaign.name=load-llama3-8b --set state.scope=weights --set parallel.pp=1 --set ranks.select=all
        --set strategy.format=safetensors)
load70b=("${load8b[@]}" --set campaign.name=load-llama3-70b --set model.name=llama3-70b --set model.scale=128)
once=(--set campaign.iterations=1 --set campaign.warmup=0)  # one kept checkpoint to load
methods=(--set 'load.method=["pipelined", "mmap", "read"]')
if [ "$only" != reshard ]; then
  "$bin" run "$config" --phase checkpoint --output "$out/write-load8b" "${load8b[@]}" "${once[@]}" >/dev/null
  run load-8b-tp8 --phase load "${load8b[@]}" "${methods[@]}"
  run load-8b-tp8-to-tp4 --phase load "${load8b[@]}" --set load.tp=4
  "$bin" run "$config" --phase checkpoint --output "$out/write-load70b" "${load70b[@]}" "${once[@]}" >/dev/null
  run load-70b-tp8 --phase load "${load70b[@]}" "${methods[@]}"
  run load-70b-tp8-to-tp4 --phase load "${load70b[@]}" --set load.tp=4
fi
