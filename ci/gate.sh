#!/usr/bin/env bash
# The CI regression gate: runs configs/ci-gate.toml (calibrated: measure.calibration = true) and
# gates it with `ckptbench gate` against results/baselines/ci-gate-<machine class>.json, the
# class being architecture, cores and the target's file system (e.g. x86_64-2cpu-ext4). A class
# without a baseline passes, and says so loudly. Checkpoints go under build/ (the repository's
# file system, as on the machine that took the baseline), the run to build/ci-gate-runs/.
#
#   ci/gate.sh                     # gate (exit 0 passed, 1 regressed, 2 bad input)
#   ci/gate.sh --update-baseline   # take this class's baseline: BASELINE_RUNS (default 10) runs,
#                                  # pooled (gate --update-baseline --pool), replacing the old one
#   ci/gate.sh --set KEY=VALUE ... [-- GATE_OPTION ...]
#                                  # the same with campaign overrides and gate options
#                                  # (benchmarks/gate_proof.sh: a deliberate slowdown, gated with
#                                  # --allow-other-workload against the unchanged baseline)
#
# Take the baseline where and as CI runs: a quiet machine of CI's class, nothing else running
# (CI's runner runs this step alone). Its runs' spread decides the smallest change the gate can
# detect; `ckptbench gate` refuses a baseline too spread to detect its tolerance (10 %), and
# --update-baseline does not install one (it prints the refusal, exit 2).
#
# CKPTBENCH (default build/bin/ckptbench) picks the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CKPTBENCH:-build/bin/ckptbench}"
update=false
sets=()
gate_options=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update-baseline) update=true ;;
    --set)
      [ $# -ge 2 ] || { echo "ci/gate.sh: --set needs KEY=VALUE" >&2; exit 2; }
      sets+=(--set "$2")
      shift ;;
    --) shift; gate_options=("$@"); break ;;
    *) echo "ci/gate.sh: unknown argument \`$1\` (--update-baseline, --set KEY=VALUE, -- GATE_OPTION...)" >&2; exit 2 ;;
  esac
  shift
done
if $update && [ ${#sets[@]} -gt 0 ]; then
  echo "ci/gate.sh: --update-baseline takes the unchanged campaign, not --set ${sets[*]:1}" >&2
  exit 2
fi
run_campaign() {  # OUTPUT_DIR [--set KEY=VALUE ...]: runs the gate campaign into it, prints the run directory
  local dir="$1"
  shift
  mkdir -p "$dir"
  "$bin" -q run configs/ci-gate.toml --output "$dir" --set campaign.target=build/ci-gate-target "${sets[@]}" "$@" \
    >"$dir/run.log" 2>&1 ||
    { cat "$dir/run.log" >&2; echo "ci/gate.sh: the gate campaign failed (log above)" >&2; exit 2; }
  local run
  run="$(ls -d "$dir"/ci-gate-*/)"
  echo "${run%/}"
}
out="build/ci-gate-runs/$(date -u +%Y%m%d-%H%M%S)-$$"
run="$(run_campaign "$out")"
class="$("$bin" gate "$run" --machine-class)"
baseline="results/baselines/ci-gate-$class.json"
if $update; then
  runs="${BASELINE_RUNS:-10}"
  # A fresh baseline (no run of an earlier machine state pooled in), replacing the old one only
  # when all its runs succeeded.
  fresh="build/ci-gate-runs/baseline-$$.json"
  rm -f "$fresh"
  "$bin" gate "$run" --baseline "$fresh" --update-baseline
  for ((b = 2; b <= runs; b++)); do
    # Runs taken back to back share one machine state (page cache, writeback, where the files
    # land) and spread less than CI's gate run, which follows the test suite: an unpooled run of
    # other I/O before each one makes the baseline's spread the one the gate will meet.
    run_campaign "$out-$b-between" --set backend.posix.throttle_percent=15 >/dev/null
    "$bin" gate "$(run_campaign "$out-$b")" --baseline "$fresh" --update-baseline --pool
  done
  # Gating the first of its runs against it states each row's spread and what it can detect; a
  # baseline too spread for the gate's tolerance is refused there (exit 2) and not installed.
  status=0
  "$bin" gate "$run" --baseline "$fresh" >"$fresh.check" 2>&1 || status=$?
  if [ "$status" -eq 2 ]; then
    cat "$fresh.check" >&2
    echo "ci/gate.sh: the new baseline is too spread to gate (above); $baseline is unchanged — take it on a quiet machine" >&2
    exit 2
  fi
  awk '/^case / {table = 1} table && /^$/ {table = 0} table || /^smallest/' "$fresh.check"
  mkdir -p "$(dirname "$baseline")"
  mv "$fresh" "$baseline"
  echo "ci/gate.sh: $baseline pooled from $runs runs ($(uptime | sed 's/.*load/load/'))"
  exit 0
fi
if [ ! -f "$baseline" ]; then
  echo "ci/gate.sh: NOT GATED — no baseline for machine class $class ($baseline is missing). This run passes"
  echo "ci/gate.sh: without a verdict; take the class's baseline with ci/gate.sh --update-baseline and commit it."
  exit 0
fi
"$bin" gate "$run" --baseline "$baseline" "${gate_options[@]}"
