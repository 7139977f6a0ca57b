#!/usr/bin/env bash
# Proves the CI regression gate where CI runs it: every run is `ci/gate.sh` itself (the same
# campaign, target and gate command) against the committed baseline
# results/baselines/ci-gate-<class>.json, in N rounds (default 20); within a round the scenarios
# run one after another, the order rotated each round, so that every scenario sees the same
# machine state:
#   unchanged    the campaign as CI runs it                -> every exit 1 is a false alarm
#   throttle10/15/20/30  backend.posix.throttle_percent     -> after every pwrite, pread and fsync
#                the posix backend sleeps that share of the time the request took: a slowdown of
#                the gated I/O (open, close, manifest and the cache drop are not slowed)
#   real         strategy.chunk_bytes = 4 KiB              -> thousands of small writes instead of
#                a few 4 MiB ones
# The changed scenarios differ in configuration, so they are gated with --allow-other-workload
# (the gate refuses another config_hash otherwise). It prints per scenario how often the gate
# flagged it (exit 1), the median [range] change of each phase's median ratio, the smallest
# detectable change the gate printed, and each run's duration (into $GATE_PROOF_DIR, default
# build/gate-proof, emptied first).
#
#   ci/gate.sh --update-baseline           # first, on the quiet machine: the baseline under proof
#   benchmarks/gate_proof.sh [N]           # then N rounds (default 20); build/gate-proof/summary.txt
#
# CKPTBENCH picks the binary (as for ci/gate.sh); SCENARIOS limits the scenarios (default
# "unchanged throttle10 throttle15 throttle20 throttle30 real"); GATE_ARGS adds gate options.
# REGATE=1 runs nothing: it gates the runs a previous proof left (listed in $GATE_PROOF_DIR/runs.txt)
# again against the current baseline, with other GATE_ARGS or another ckptbench, and summarises.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-20}"
bin="${CKPTBENCH:-build/bin/ckptbench}"
work="${GATE_PROOF_DIR:-build/gate-proof}"
regate="${REGATE:-0}"
read -r -a scenarios <<<"${SCENARIOS:-unchanged throttle10 throttle15 throttle20 throttle30 real}"
read -r -a extra <<<"${GATE_ARGS:-}"
declare -A settings=([unchanged]="" [real]="strategy.chunk_bytes=4KiB" [throttle10]="backend.posix.throttle_percent=10"
                     [throttle15]="backend.posix.throttle_percent=15" [throttle20]="backend.posix.throttle_percent=20"
                     [throttle30]="backend.posix.throttle_percent=30")
for s in "${scenarios[@]}"; do
  [ -n "${settings[$s]+x}" ] || { echo "gate_proof.sh: unknown scenario $s (${!settings[*]})" >&2; exit 2; }
done

gate_once() {  # SCENARIO ROUND: one gated run, its gate output into $work/SCENARIO-ROUND.gate
  local s="$1" i="$2" status=0 start end run options=(--markdown "${extra[@]}")
  [ -n "${settings[$s]}" ] && options+=(--allow-other-workload)
  start=$(date +%s.%N)
  if [ "$regate" = 1 ]; then
    run="$(awk -v s="$s" -v i="$i" '$1 == s && $2 == i {print $3}' "$work/runs.txt")"
    [ -n "$run" ] || return 0
    "$bin" gate "$run" --baseline "$baseline" "${options[@]}" >"$work/$s-$i.gate" 2>&1 || status=$?
  else
    local sets=()
    [ -n "${settings[$s]}" ] && sets=(--set "${settings[$s]}")
    CKPTBENCH="$bin" ci/gate.sh "${sets[@]}" -- "${options[@]}" >"$work/$s-$i.gate" 2>&1 || status=$?
    run="$(sed -n 's/^RUN .*(\(.*\))$/\1/p' "$work/$s-$i.gate")"
    echo "$s $i $run" >>"$work/runs.txt"
  fi
  end=$(date +%s.%N)
  [ "$status" -le 1 ] || { cat "$work/$s-$i.gate" >&2; echo "gate_proof.sh: $s round $i: exit $status" >&2; exit 2; }
  # "| - | write | base | now | -12.3 % | s / e % | 6.1 % | tol | p | verdict |" -> "write -12.3 6.1 verdict"
  local rows
  rows="$(awk -F'|' '$3 ~ /^ *(write|read|write\+read) *$/ {
            gsub(/ /, "", $3); gsub(/[ %+]/, "", $6); gsub(/[ %]/, "", $8); gsub(/^ +| +$/, "", $11); gsub(/ /, "_", $11)
            print $3, $6, $8, $11}' "$work/$s-$i.gate" | tr '\n' ' ')"
  echo "$s $i exit=$status seconds=$(echo "$end - $start" | bc) $rows" | tee -a "$work/rounds.txt"
}

if [ "$regate" = 1 ]; then
  [ -f "$work/runs.txt" ] || { echo "gate_proof.sh: REGATE=1 needs $work/runs.txt of an earlier proof" >&2; exit 2; }
  rm -f "$work/rounds.txt"
  first="$(awk 'NR == 1 {print $3}' "$work/runs.txt")"
  baseline="results/baselines/ci-gate-$("$bin" gate "$first" --machine-class).json"
else
  rm -rf "$work"
  mkdir -p "$work"
  { echo "started $(date -u +%FT%TZ) at commit $(git rev-parse --short HEAD)"; uptime; } >"$work/machine.txt"
fi
for ((i = 1; i <= rounds; i++)); do
  n=${#scenarios[@]}
  for ((k = 0; k < n; k++)); do gate_once "${scenarios[$(((i - 1 + k) % n))]}" "$i"; done
done
[ "$regate" = 1 ] || { echo "finished $(date -u +%FT%TZ)"; uptime; } >>"$work/machine.txt"

python3 - "$work" "$regate" "${scenarios[@]}" <<'PY' | tee "$work/summary.txt"
import statistics, sys
work, regate, scenarios = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
rows = [line.split() for line in open(f"{work}/rounds.txt")]
def spread(values):
    return f"{statistics.median(values):+.1f} [{min(values):+.1f} .. {max(values):+.1f}]"
print(f"gate proof: {open(work + '/machine.txt').read().strip()}")
total = sum(float(r[3].split("=")[1]) for r in rows)
what = "the gate alone (REGATE=1)" if regate else "ci/gate.sh: the campaign and the gate"
print(f"{len(rows)} gated runs in {total:.0f} s: {total / max(1, len(rows)):.1f} s per run ({what})")
for s in scenarios:
    mine = [r for r in rows if r[0] == s]
    if not mine:
        continue
    line = f"{s:10}  flagged {sum(r[2] == 'exit=1' for r in mine):2} of {len(mine)}"
    for d in ("write", "read", "write+read"):
        fields = [r[r.index(d) + 1:r.index(d) + 4] for r in mine if d in r]
        if not fields:
            continue
        change = [float(f[0]) for f in fields]
        detectable = [float(f[1]) for f in fields]
        regressed = sum(f[2] == "regressed" for f in fields)
        line += (f"\n    {d:10}  change {spread(change)} %, smallest detectable {statistics.median(detectable):.1f} % "
                 f"[{min(detectable):.1f} .. {max(detectable):.1f}], regressed {regressed}")
    print(line)
PY
