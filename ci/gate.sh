#!/usr/bin/env bash
# The CI regression gate: runs configs/ci-gate.toml (calibrated: measure.calibration = true) and
# gates it with `ckptbench gate` against results/baselines/ci-gate-<machine class>.json, the
# class being architecture, cores and the target's file system (e.g. x86_64-2cpu-ext4). A class
# without a baseline passes, and says so loudly. Checkpoints go under build/ (the repository's
# file system, as on the machine that took the baseline), the run to build/ci-gate-runs/.
#
#   ci/gate.sh                     # gate (exit 0 passed, 1 regressed, 2 bad input)
#   ci/gate.sh --update-baseline   # take this class's baseline: one run of 30 timed iterations
#
# CKPTBENCH (default build/bin/ckptbench) picks the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CKPTBENCH:-build/bin/ckptbench}"
update=false
[ "${1:-}" = "--update-baseline" ] && update=true
out="build/ci-gate-runs/$(date -u +%Y%m%d-%H%M%S)-$$"
mkdir -p "$out"
extra=()
$update && extra=(--set campaign.iterations=30)
"$bin" -q run configs/ci-gate.toml --output "$out" --set campaign.target=build/ci-gate-target "${extra[@]}" >"$out/run.log" 2>&1 ||
  { cat "$out/run.log"; echo "ci/gate.sh: the gate campaign failed (log above)"; exit 2; }
run="$(ls -d "$out"/ci-gate-*/)"
run="${run%/}"
class="$("$bin" gate "$run" --machine-class)"
baseline="results/baselines/ci-gate-$class.json"
if $update; then
  "$bin" gate "$run" --baseline "$baseline" --update-baseline
  exit 0
fi
if [ ! -f "$baseline" ]; then
  echo "ci/gate.sh: NOT GATED — no baseline for machine class $class ($baseline is missing). This run passes"
  echo "ci/gate.sh: without a verdict; take the class's baseline with ci/gate.sh --update-baseline and commit it."
  exit 0
fi
"$bin" gate "$run" --baseline "$baseline"
