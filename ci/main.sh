#!/usr/bin/env bash
# The main job: set up, build, and run ckptbench on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
./ci/build.sh default
echo
echo "== ckptbench models"
build/bin/ckptbench models
echo
echo "== ckptbench layout --model llama3-70b --tp 8 --pp 4 --dp 4 --zero 1"
build/bin/ckptbench layout --model llama3-70b --tp 8 --pp 4 --dp 4 --zero 1
