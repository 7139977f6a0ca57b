#!/usr/bin/env bash
# The test suite under sanitizers, each in its own build folder:
#   asan  ASan + UBSan, -fno-sanitize-recover=all (preset asan, build-asan/, clang): the unit,
#         CLI, backend and single-process integration tests and the fuzz regressions (ctest
#         --preset asan). No MPI in this build, so the mpiio/hdf5 tests and the mpirun cases are
#         left to the plain suite. The same build has the libFuzzer programs ci/fuzz.sh runs
#         (every object is also compiled with -fsanitize=fuzzer-no-link), so the sanitizer
#         libraries are compiled once for both jobs.
#   tsan  ThreadSanitizer (preset tsan, build-tsan/): the code with threads — the posix and uring
#         workers (posix/uring backend tests), the bounded slots (*Slots*), the staging pipeline
#         (Stager*), the codec threads (*Codec*), the pipelined loader's workers (LoadWorkers*),
#         the async engines (Engine*) — the unit programs of common, memory, exec, load and
#         engine with a gtest filter. Each unit program links only its layer and those below, so
#         this job builds neither the report nor the run and command-line layers.
#
#   ci/sanitizers.sh [asan|tsan ...]     # default: both
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${CKPT_JOBS:-$(nproc)}"
jobs_wanted=("$@")
[ ${#jobs_wanted[@]} -gt 0 ] || jobs_wanted=(asan tsan)

./ci/setup.sh

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$PWD/ci/tsan.supp"

run_asan() {
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan
}

# The test programs with threaded code: the backends' and the unit programs of the folders with
# threads, each filtered to its threaded tests; a program this tree does not define is left out.
tsan_programs=(ckpt_backend_tests ckpt_unit_common_tests ckpt_unit_memory_tests ckpt_unit_exec_tests
  ckpt_unit_load_tests ckpt_unit_engine_tests)
tsan_filter='*osix*:*ring*:*Slots*:*Worker*:*Stag*:*Codec*:Engine*:*/Engine*'

run_tsan() {
  cmake --preset tsan >/dev/null
  local defined targets=()
  defined="$(cmake --build build-tsan --target help | sed -n 's/^\([A-Za-z0-9_]*\): .*/\1/p')"
  for t in "${tsan_programs[@]}"; do
    if grep -qx "$t" <<<"$defined"; then targets+=("$t"); fi
  done
  echo "ci/sanitizers.sh: tsan: building ${targets[*]}"
  cmake --build build-tsan -j "$jobs" --target "${targets[@]}"
  for t in "${targets[@]}"; do
    echo "ci/sanitizers.sh: tsan: $t --gtest_filter=$tsan_filter"
    build-tsan/bin/"$t" --gtest_filter="$tsan_filter" --gtest_brief=1
  done
}

for job in "${jobs_wanted[@]}"; do
  start=$(date +%s)
  case "$job" in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) echo "ci/sanitizers.sh: unknown job $job (asan, tsan)" >&2; exit 2 ;;
  esac
  echo "ci/sanitizers.sh: $job passed in $(($(date +%s) - start)) s"
done
