#!/usr/bin/env bash
# Proves the regression gate on this machine (issue 14, point 4). Takes a fresh pooled baseline
# of configs/ci-gate.toml as ci/gate.sh --update-baseline does (BASELINE_RUNS runs, default 5,
# pooled with `gate --update-baseline --pool`), then N rounds of gated runs, interleaved so that
# every scenario of a round sees the same noise:
#   unchanged     the campaign as it is                    -> every exit 1 is a false alarm
#   real          strategy.chunk_bytes = 4 KiB (vs none)   -> 30,000 write calls instead of 34
#   throttle15    backend.posix.throttle_percent = 15      -> after every pwrite, pread and fsync
#                 the posix backend sleeps 15 % of the time that request took: a real slowdown of
#                 the gated I/O by 15 % of its transfer and sync time (open, close, manifest and
#                 the cache drop are not slowed, so the whole iteration slows a little less)
# and, in the first SWEEP_ROUNDS rounds (default: all), the threshold sweep throttle10,
# throttle20, throttle30 (the same knob at 10, 20 and 30 %). It prints how often each scenario was
# flagged, how often each direction regressed, the median [range] change of the ratio the gate
# measured, and the scenario's cost in plain GiB/s against the unchanged runs of the same rounds
# (into $GATE_PROOF_DIR, default build/gate-proof, emptied first).
#
#   benchmarks/gate_proof.sh [N]    # N rounds (default 20); writes build/gate-proof/summary.txt
#
# CKPTBENCH (default build/bin/ckptbench) picks the binary; GATE_ARGS adds gate options
# (e.g. GATE_ARGS="--tolerance 0.15"); GATE_ITERATIONS sets every run's timed iterations
# (default: the campaign's); SCENARIOS limits the scenarios (e.g. SCENARIOS="unchanged real").
# REGATE=1 runs nothing: it gates the runs a previous proof left in $GATE_PROOF_DIR again (other
# GATE_ARGS, another ckptbench) and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-20}"
sweep_rounds="${SWEEP_ROUNDS:-$rounds}"
bin="${CKPTBENCH:-build/bin/ckptbench}"
work="${GATE_PROOF_DIR:-build/gate-proof}"
regate="${REGATE:-0}"
if [ "$regate" != 1 ]; then
  rm -rf "$work"
  mkdir -p "$work"
fi
target="build/gate-proof-target"
iterations=()
[ -n "${GATE_ITERATIONS:-}" ] && iterations=(--set "campaign.iterations=$GATE_ITERATIONS")

run_campaign() {  # OUTPUT_DIR [--set ...]: prints the run directory
  local output="$1"
  shift
  "$bin" -q run configs/ci-gate.toml --output "$output" --set campaign.target="$target" "${iterations[@]}" "$@" \
    >"$output.log" 2>&1 || { cat "$output.log" >&2; echo "gate_proof.sh: a campaign run failed (log above)" >&2; exit 2; }
  ls -d "$output"/ci-gate-*/
}

declare -A settings=([unchanged]="" [real]="strategy.chunk_bytes=4KiB" [throttle10]="backend.posix.throttle_percent=10"
                     [throttle15]="backend.posix.throttle_percent=15" [throttle20]="backend.posix.throttle_percent=20"
                     [throttle30]="backend.posix.throttle_percent=30")
read -r -a scenarios <<<"${SCENARIOS:-unchanged real throttle15 throttle10 throttle20 throttle30}"

[ "$regate" = 1 ] || { echo "started $(date -u +%FT%TZ)"; uptime; } >"$work/machine.txt"
[ "$regate" = 1 ] || echo "baseline: ${BASELINE_RUNS:-5} pooled runs of configs/ci-gate.toml"
[ "$regate" = 1 ] && rm -f "$work/rounds.txt"
for ((b = 1; b <= ${BASELINE_RUNS:-5}; b++)); do
  [ "$regate" = 1 ] && break
  baseline_run="$(run_campaign "$work/baseline-$b")"
  pool=()
  [ "$b" -gt 1 ] && pool=(--pool)
  "$bin" gate "$baseline_run" --baseline "$work/baseline.json" --update-baseline "${pool[@]}"
done

for ((i = 1; i <= rounds; i++)); do
  for s in "${scenarios[@]}"; do
    case "$s" in throttle10 | throttle20 | throttle30) [ "$i" -le "$sweep_rounds" ] || continue ;; esac
    args=()
    [ -n "${settings[$s]}" ] && args+=(--set "${settings[$s]}")
    if [ "$regate" = 1 ]; then
      [ -d "$work/$s-$i" ] || continue
      run="$(ls -d "$work/$s-$i"/ci-gate-*/)"
    else
      run="$(run_campaign "$work/$s-$i" "${args[@]}")"
    fi
    status=0
    # shellcheck disable=SC2086
    "$bin" gate "$run" --baseline "$work/baseline.json" --markdown ${GATE_ARGS:-} >"$work/$s-$i.gate" || status=$?
    [ "$status" -le 1 ] || { cat "$work/$s-$i.gate"; exit 2; }
    # "| - | write | base | now | -12.3 % | tol | p | verdict |" -> "write -12.3 verdict" (also read, write+read)
    changes="$(awk -F'|' '$3 ~ /write|read/ {gsub(/ /, "", $3); gsub(/[ %+]/, "", $6); gsub(/^ +| +$/, "", $9); print $3, $6, $9}' "$work/$s-$i.gate" | tr '\n' ' ')"
    echo "$s $i exit=$status $changes" | tee -a "$work/rounds.txt"
  done
done
[ "$regate" = 1 ] || { echo "finished $(date -u +%FT%TZ)"; uptime; } >>"$work/machine.txt"

python3 - "$work" "$rounds" "$sweep_rounds" "${scenarios[@]}" <<'PY' | tee "$work/summary.txt"
import glob, json, statistics, sys
work, rounds, sweep, scenarios = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [line.split() for line in open(f"{work}/rounds.txt")]
def median_rate(s, i, key):  # the run's median plain GiB/s (bytes / seconds) in one direction
    j = json.loads(open(glob.glob(f"{work}/{s}-{i}/ci-gate-*/results.jsonl")[0]).readline())
    return statistics.median(j["bytes_per_checkpoint"] / 2**30 / t for t in j["samples"][key])
base = json.load(open(f"{work}/baseline.json"))["cases"][0]
print(f"gate proof: {rounds} rounds (sweep {sweep}), baseline pooled from {len(base.get('write_runs', [0]))} runs of "
      f"configs/ci-gate.toml; {open(work + '/machine.txt').read().strip()}")
for s in scenarios:
    mine = [r for r in rows if r[0] == s]
    if not mine:
        continue
    line = f"{s:10}  flagged {sum(r[2] == 'exit=1' for r in mine):2} of {len(mine)}"
    for d, key in (("write", "write_seconds"), ("read", "read_seconds"), ("write+read", None)):
        ch = [float(r[r.index(d) + 1]) for r in mine if d in r]
        reg = sum(r[r.index(d) + 2] == "regressed" for r in mine if d in r)
        cost = [median_rate(s, r[1], key) / median_rate("unchanged", r[1], key) - 1 for r in mine] if key and s != "unchanged" else []
        if ch:
            line += f"  {d}: change {statistics.median(ch):+.1f} % [{min(ch):+.1f} .. {max(ch):+.1f}], regressed {reg:2}"
            if cost:
                line += f", GiB/s vs unchanged {100 * statistics.median(cost):+.1f} %"
    print(line)
PY
