#!/usr/bin/env bash
# ctest: run_with_moto.sh VENV_PYTHON [--tls] COMMAND [ARGS...] — runs COMMAND against a private moto S3
# server (moto_fixture.py); skips (77) without the venv that ci/setup.sh makes.
set -euo pipefail
python="$1"
shift
if [ ! -x "$python" ]; then
  echo "SKIPPED: $python is missing: run ci/setup.sh (it installs moto[server] into .deps/venv)"
  exit 77
fi
exec "$python" "$(dirname "$0")/moto_fixture.py" "$@"
