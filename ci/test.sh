#!/usr/bin/env bash
# All tests: set up, build (warnings are errors), run every ctest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./ci/build.sh default
ctest --preset default
