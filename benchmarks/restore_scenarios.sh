#!/usr/bin/env bash
# Resharding restore scenarios of configs/restore-scenarios.toml, each restore with caches
# dropped (cache.policy = "drop"), medians of campaign.iterations: same-layout restore of the
# TP8×PP4 checkpoint, TP8×PP4 -> TP4×PP8 (exact, whole_items), and TP4(×PP8) -> TP8(×PP4)
# (exact, exact with restore.gap_bytes = 8 KiB, whole_items), and TP8×PP4 -> TP4×PP8 exact with
# O_DIRECT from an O_DIRECT-written checkpoint. Prints one line per scenario: read GiB/s
# (median), bytes needed and read, amplification, requests, bytes copied out of scratch.
#
#   benchmarks/restore_scenarios.sh [build/bin/ckptbench] [output-dir]
set -euo pipefail
bin=${1:-build/bin/ckptbench}
out=${2:-results/run/restore-scenarios}
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
r = json.loads(open(sorted(glob.glob(folder + "/*/results.jsonl"))[-1]).readline())
s = r.get("reshard") or {}
needed = s.get("bytes_needed", r["bytes_per_checkpoint"])
read = s.get("bytes_read", r["bytes_per_checkpoint"])
print(f"{name:28s} {r['status']:6s} verified={r['verified']!s:5s} read {r['read_gib_per_s'] or 0:.3f} GiB/s "
      f"needed {needed} read {read} ({read / needed:.2f}x) requests {s.get('requests', r['extents_per_checkpoint'])} "
      f"copied {s.get('copied_bytes', 0)}")
PY
}

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
