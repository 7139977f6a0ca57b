#!/usr/bin/env bash
# All tests: set up, build (warnings are errors), run every ctest suite. Prints the wall seconds
# of each part, so a CI log shows where the plain suite's time goes.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
./ci/setup.sh
setup=$((SECONDS - start))
start=$SECONDS
./ci/build.sh default
build=$((SECONDS - start))
start=$SECONDS
ctest --preset default
echo "ci/test.sh: set-up ${setup} s, build ${build} s (its set-up check included), tests $((SECONDS - start)) s"
