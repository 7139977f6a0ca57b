#!/usr/bin/env bash
# Fuzzes the campaign parser (with --set overrides), the TOML model-file reader, the HF
# config.json reader, the safetensors header parser, results.jsonl lines and checkpoint manifests
# with libFuzzer under ASan + UBSan. The programs come from the ASan job's build (configure preset
# asan, build-asan/: clang, every object also compiled with -fsanitize=fuzzer-no-link); build
# preset fuzz builds only them and the libraries they link, so after ci/sanitizers.sh asan nothing
# is left to build. Corpora, findings and logs stay in build-fuzz/, apart from the build.
#
#   ci/fuzz.sh [SECONDS]        # each target SECONDS (default 60; a longer run: 3600)
#
# Each target starts from its seed corpus (configs/, workloads/zoo/, tests/fuzz/seeds/) and the
# inputs that once crashed or hung (tests/fuzz/regressions/<target>/), copied into
# build-fuzz/corpus/<target>, which keeps growing across runs. An input that crashes, leaks,
# escapes with an exception other than ConfigError, or runs longer than 10 s stops the run and is
# written to build-fuzz/findings/<target>/: fix it, then add it to tests/fuzz/regressions/<target>/,
# where ctest (FuzzRegressions.<target>) replays it in every build (ckpt_fuzz_replay_<target>).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${CKPT_FUZZ_SECONDS:-60}}"
jobs="${CKPT_JOBS:-$(nproc)}"

./ci/setup.sh
if ! command -v clang++-14 >/dev/null && ! command -v clang++ >/dev/null; then
  echo "ci/fuzz.sh: clang++ is needed for libFuzzer (apt-get install clang)" >&2
  exit 1
fi
cmake --preset asan >/dev/null
cmake --build --preset fuzz -j "$jobs"

declare -A seeds=(
  [campaign]="configs tests/fuzz/seeds/campaign"
  [model_toml]="workloads/zoo"
  [model_hf]="tests/fuzz/seeds/model_hf"
  [safetensors_header]="tests/fuzz/seeds/safetensors_header"
  [results_record]="tests/fuzz/seeds/results_record"
  [manifest]="tests/fuzz/seeds/manifest"
)
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# One fuzzer per core at a time (each is one process); a target's outcome is printed when it ends.
fuzz_target() {  # TARGET: fuzzes it; exit 1 on a finding
  local target="$1" corpus="build-fuzz/corpus/$1" findings="build-fuzz/findings/$1" log="build-fuzz/fuzz-$1.log"
  mkdir -p "$corpus" "$findings"
  # shellcheck disable=SC2086
  find ${seeds[$target]} "tests/fuzz/regressions/$target" -type f ! -name .keep -exec cp -t "$corpus" {} +
  echo "ci/fuzz.sh: $target for ${seconds} s (log: $log)"
  if build-asan/bin/ckpt_fuzz_"$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=16384 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | sed "s/^/ci\/fuzz.sh: $target: /" || true
  else
    echo "ci/fuzz.sh: $target: FINDING (see $log and $findings/)" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}
status=0
running=0
for target in campaign model_toml model_hf safetensors_header results_record manifest; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_target "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit "$status"
