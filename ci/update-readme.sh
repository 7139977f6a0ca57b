#!/usr/bin/env bash
# Regenerates the README's backend option table from the backends' option tables
# (`ckptbench backends --markdown`), between its begin/end markers. Needs a build (ci/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-build/bin/ckptbench}"
table="$("$binary" backends --markdown)"
python3 - "$table" <<'PY'
import re, sys
table = sys.argv[1]
path = "README.md"
text = open(path, encoding="utf-8").read()
begin, end = "<!-- backend-options:begin -->", "<!-- backend-options:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path}: markers {begin} / {end} not found")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w", encoding="utf-8").write(head + begin + "\n" + table + "\n" + end + tail)
PY
echo "README.md: backend option table regenerated"
