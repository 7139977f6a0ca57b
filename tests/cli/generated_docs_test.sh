#!/usr/bin/env bash
# A generated part of a doc page must be exactly what the program prints today, so the reference
# cannot drift from the declarations it comes from (ci/update-docs.sh regenerates every part).
# Usage: generated_docs_test.sh PAGE NAME COMMAND...: compares the lines between
# "<!-- NAME:begin -->" and "<!-- NAME:end -->" of PAGE with the output of COMMAND.
set -euo pipefail
page="$1"
name="$2"
shift 2
begin="<!-- $name:begin -->"
end="<!-- $name:end -->"
if [ "$(grep -cxF "$begin" "$page")" != 1 ] || [ "$(grep -cxF "$end" "$page")" != 1 ]; then
  echo "$page: expected one line '$begin' and one line '$end'"
  exit 1
fi
expected="$("$@")"
actual="$(sed -n "\\|^$begin\$|,\\|^$end\$|p" "$page" | sed '1d;$d')"
if [ "$expected" != "$actual" ]; then
  echo "$page: the part between '$begin' and '$end' differs from '$*' (run ci/update-docs.sh):"
  diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") || true
  exit 1
fi
echo "$page: '$name' matches '$*' ($(printf '%s\n' "$expected" | wc -l) lines)"
