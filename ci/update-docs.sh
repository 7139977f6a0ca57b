#!/usr/bin/env bash
# Regenerates the generated parts of docs/ from the declarations in the code, between their
# "<!-- NAME:begin -->" and "<!-- NAME:end -->" lines: the campaign keys (`ckptbench keys
# --markdown`) and the backend options (`ckptbench backends --markdown`). Needs a build
# (ci/build.sh); tests/cli/generated_docs_test.sh fails when a part drifts.
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-build/bin/ckptbench}"

# replace PAGE NAME TEXT: puts TEXT between the page's markers NAME.
replace() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, name, text = sys.argv[1], sys.argv[2], sys.argv[3]
page = open(path, encoding="utf-8").read()
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
if page.count(begin) != 1 or page.count(end) != 1:
    sys.exit(f"{path}: expected one {begin} and one {end}")
head, rest = page.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w", encoding="utf-8").write(head + begin + "\n" + text + "\n" + end + tail)
PY
  echo "$1: $2 regenerated"
}

replace docs/campaign-keys.md campaign-keys "$("$binary" keys --markdown)"
replace docs/backends.md backend-options "$("$binary" backends --markdown)"
