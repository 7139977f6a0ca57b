#!/usr/bin/env bash
# ctest: safetensors_check.sh CKPTBENCH PATTERN_BYTES VENV_PYTHON — skips (77) without the venv.
set -euo pipefail
python="$3"
if [ ! -x "$python" ] || ! "$python" -c "import safetensors, numpy" 2>/dev/null; then
  echo "SKIPPED: $python with safetensors and numpy is missing: run ci/setup.sh (it creates .deps/venv)"
  exit 77
fi
exec "$python" "$(dirname "$0")/safetensors_check.py" "$1" "$2"
