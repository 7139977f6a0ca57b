#!/usr/bin/env bash
# The committed .clang-format over every C++/CUDA source the repository tracks.
#   ci/format.sh          rewrite the files in place
#   ci/format.sh --check  change nothing; list each file that differs and fail (what .ci/run does)
# clang-format-14 (Debian 12's) is the one the tree is formatted with: another version may break
# lines differently, so the check asks for that one.
set -euo pipefail
cd "$(dirname "$0")/.."
formatter="${CKPT_CLANG_FORMAT:-clang-format-14}"
if ! command -v "$formatter" >/dev/null; then
  echo "ci/format.sh: $formatter not found: run ci/setup.sh (it installs clang-format)" >&2
  exit 2
fi
mapfile -d '' sources < <(git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  differing=()
  for f in "${sources[@]}"; do
    if ! "$formatter" --dry-run --Werror "$f" >/dev/null 2>&1; then differing+=("$f"); fi
  done
  if [ ${#differing[@]} -gt 0 ]; then
    printf 'ci/format.sh: %s differs from .clang-format\n' "${differing[@]}" >&2
    echo "ci/format.sh: ${#differing[@]} of ${#sources[@]} files differ: run ci/format.sh and commit the result" >&2
    exit 1
  fi
  echo "ci/format.sh: ${#sources[@]} files match .clang-format"
else
  "$formatter" -i "${sources[@]}"
fi
