#!/usr/bin/env bash
# Installs dependencies (ci/setup.sh), configures and builds with the given preset
# (default: "default", the Release build in build/ with warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
./ci/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
