#!/usr/bin/env bash
# The CI regression gate: runs configs/ci-gate.toml (calibrated: measure.calibration = true) and
# gates it with `ckptbench gate` against results/baselines/ci-gate-<machine class>.json, the
# class being architecture, cores and the target's file system (e.g. x86_64-2cpu-ext4). A class
# without a baseline passes, and says so loudly. Checkpoints go under build/ (the repository's
# file system, as on the machine that took the baseline), the run to build/ci-gate-runs/.
#
#   ci/gate.sh                     # gate (exit 0 passed, 1 regressed, 2 bad input)
#   ci/gate.sh --update-baseline   # take this class's baseline: BASELINE_RUNS (default 5) runs,
#                                  # pooled (gate --update-baseline --pool): their spread sets the
#                                  # tolerance, so take it at a typical (busy) time, not a quiet one
#
# CKPTBENCH (default build/bin/ckptbench) picks the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CKPTBENCH:-build/bin/ckptbench}"
update=false
[ "${1:-}" = "--update-baseline" ] && update=true
run_campaign() {  # OUTPUT_DIR: runs the gate campaign into it, prints the run directory
  mkdir -p "$1"
  "$bin" -q run configs/ci-gate.toml --output "$1" --set campaign.target=build/ci-gate-target >"$1/run.log" 2>&1 ||
    { cat "$1/run.log" >&2; echo "ci/gate.sh: the gate campaign failed (log above)" >&2; exit 2; }
  local run
  run="$(ls -d "$1"/ci-gate-*/)"
  echo "${run%/}"
}
out="build/ci-gate-runs/$(date -u +%Y%m%d-%H%M%S)-$$"
run="$(run_campaign "$out")"
class="$("$bin" gate "$run" --machine-class)"
baseline="results/baselines/ci-gate-$class.json"
if $update; then
  "$bin" gate "$run" --baseline "$baseline" --update-baseline
  for ((b = 2; b <= ${BASELINE_RUNS:-5}; b++)); do
    "$bin" gate "$(run_campaign "$out-$b")" --baseline "$baseline" --update-baseline --pool
  done
  exit 0
fi
if [ ! -f "$baseline" ]; then
  echo "ci/gate.sh: NOT GATED — no baseline for machine class $class ($baseline is missing). This run passes"
  echo "ci/gate.sh: without a verdict; take the class's baseline with ci/gate.sh --update-baseline and commit it."
  exit 0
fi
"$bin" gate "$run" --baseline "$baseline"
