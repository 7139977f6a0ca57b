#!/usr/bin/env bash
# Proves the regression gate on this machine (issue 14, point 4): takes a fresh baseline of
# configs/ci-gate.toml (30 timed iterations), then N rounds of three gated runs, interleaved so
# that all three see the same noise:
#   unchanged  the campaign as it is                     -> every exit 1 is a false alarm
#   real       strategy.chunk_bytes = 4 KiB (vs none)    -> should be flagged every time
#   mild       strategy.alignment = 128 KiB              -> a cost of about 15 % (printed: the
#              (7 % padding written, and split writes)      median change the gate measured)
# and prints how often each was flagged, with the median and range of the changes it measured
# (into $GATE_PROOF_DIR, default build/gate-proof, emptied first).
#
#   benchmarks/gate_proof.sh [N]       # N rounds (default 20); writes build/gate-proof/summary.txt
#
# CKPTBENCH (default build/bin/ckptbench) picks the binary; GATE_ARGS adds gate options
# (e.g. GATE_ARGS="--tolerance 0.15"); GATE_ITERATIONS sets the gated runs' timed iterations
# (default: the campaign's 10).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-20}"
bin="${CKPTBENCH:-build/bin/ckptbench}"
work="${GATE_PROOF_DIR:-build/gate-proof}"
rm -rf "$work"
mkdir -p "$work"
target="build/gate-proof-target"

run_campaign() {  # OUTPUT_DIR [--set ...]: prints the run directory
  local output="$1"
  shift
  "$bin" -q run configs/ci-gate.toml --output "$output" --set campaign.target="$target" "$@" >"$output.log" 2>&1 ||
    { cat "$output.log" >&2; echo "gate_proof.sh: a campaign run failed (log above)" >&2; exit 2; }
  ls -d "$output"/ci-gate-*/
}

declare -A settings=([unchanged]="" [real]="strategy.chunk_bytes=4KiB" [mild]="strategy.alignment=128KiB")
scenarios=(unchanged real mild)

echo "baseline: configs/ci-gate.toml with 30 timed iterations"
baseline_run="$(run_campaign "$work/baseline" --set campaign.iterations=30)"
"$bin" gate "$baseline_run" --baseline "$work/baseline.json" --update-baseline

for ((i = 1; i <= rounds; i++)); do
  for s in "${scenarios[@]}"; do
    args=(--set "campaign.iterations=${GATE_ITERATIONS:-10}")
    [ -n "${settings[$s]}" ] && args+=(--set "${settings[$s]}")
    run="$(run_campaign "$work/$s-$i" "${args[@]}")"
    status=0
    # shellcheck disable=SC2086
    "$bin" gate "$run" --baseline "$work/baseline.json" --markdown ${GATE_ARGS:-} >"$work/$s-$i.gate" || status=$?
    [ "$status" -le 1 ] || { cat "$work/$s-$i.gate"; exit 2; }
    # "| - | write | base | now | -12.3 % | p | verdict |" -> "write -12.3 verdict"
    changes="$(awk -F'|' '$3 ~ /write|read/ {gsub(/ /, "", $3); gsub(/[ %+]/, "", $6); gsub(/^ +| +$/, "", $8); print $3, $6, $8}' "$work/$s-$i.gate" | tr '\n' ' ')"
    echo "$s $i exit=$status $changes" | tee -a "$work/rounds.txt"
  done
done

python3 - "$work/rounds.txt" "$rounds" "${GATE_ITERATIONS:-10}" <<'PY' | tee "$work/summary.txt"
import statistics, sys
rounds = [line.split() for line in open(sys.argv[1])]
print(f"gate proof: {sys.argv[2]} rounds, baseline of 30 iterations, each run {sys.argv[3]} iterations (configs/ci-gate.toml)")
for s in ("unchanged", "real", "mild"):
    rows = [r for r in rounds if r[0] == s]
    flagged = sum(r[2] == "exit=1" for r in rows)
    line = f"{s:9}  flagged {flagged} of {len(rows)}"
    for d in ("write", "read"):
        ch = [float(r[r.index(d) + 1]) for r in rows if d in r]
        reg = sum(r[r.index(d) + 2] == "regressed" for r in rows if d in r)
        if ch:
            line += f"  {d}: change median {statistics.median(ch):+.1f} % [{min(ch):+.1f} .. {max(ch):+.1f}], regressed {reg}"
    print(line)
PY
