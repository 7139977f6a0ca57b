#!/usr/bin/env bash
# The README's backend option table must be exactly what `ckptbench backends --markdown` prints
# from the backends' own option tables. Regenerate it with ci/update-readme.sh.
set -euo pipefail
binary="$1"
readme="$2"
expected="$("$binary" backends --markdown)"
actual="$(sed -n '/<!-- backend-options:begin -->/,/<!-- backend-options:end -->/p' "$readme" | sed '1d;$d')"
if [ "$expected" != "$actual" ]; then
  echo "README.md's backend option table differs from 'ckptbench backends --markdown' (run ci/update-readme.sh):"
  diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") || true
  exit 1
fi
echo "README.md's backend option table matches the option tables ($(printf '%s\n' "$expected" | wc -l) lines)"
