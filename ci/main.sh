#!/usr/bin/env bash
# The main job: set up, build, and run the quickstart campaign (a small Llama-class workload
# on local disk comparing file-mapping strategies); prints the result table.
set -euo pipefail
cd "$(dirname "$0")/.."
./ci/build.sh default
build/bin/ckptbench run configs/quickstart.toml
