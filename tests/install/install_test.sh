#!/usr/bin/env bash
# `cmake --install BUILD --prefix TMP` into a fresh temporary directory, then:
#   - the prefix holds exactly bin/ckptbench, the zoo, configs/ and (when built) the man page,
#     file for file and byte for byte as in the source tree, the Slurm script still executable;
#   - the installed program runs: --version, `models` (one line per zoo file, llama3-8b among them);
#   - the man page is help2man's (.TH CKPTBENCH) with a subsection per subcommand and their options;
#   - the installed quickstart campaign, run from another directory: --dry-run (writes nothing),
#     a tiny real run with the defaults (target and results land in the current directory, as the
#     README says), and one with --set campaign.target and --output; the prefix stays unchanged.
# Usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR VERSION MAN_PAGE(ON|OFF) BINDIR DATADIR MANDIR
set -euo pipefail

[ $# -eq 8 ] || { echo "usage: $0 CMAKE BUILD_DIR SOURCE_DIR VERSION MAN_PAGE BINDIR DATADIR MANDIR" >&2; exit 2; }
cmake=$1 build=$2 source=$3 version=$4 man_page=$5 bindir=$6 datadir=$7 mandir=$8

fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
files_under() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install $build --prefix $prefix"; }

# The installed tree, exactly.
zoo_src=$source/workloads/zoo
configs_src=$source/configs
(cd "$zoo_src" && find . -maxdepth 1 -type f -name '*.toml' | sed 's|^\./||' | LC_ALL=C sort) >"$tmp/zoo.list"
files_under "$configs_src" >"$tmp/configs.list"
zoo_count=$(wc -l <"$tmp/zoo.list")
configs_count=$(wc -l <"$tmp/configs.list")
[ "$zoo_count" -gt 0 ] || fail "no *.toml in $zoo_src"
[ "$configs_count" -gt 0 ] || fail "no files in $configs_src"
grep -qx llama3-8b.toml "$tmp/zoo.list" || fail "llama3-8b.toml not in $zoo_src"
grep -qx quickstart.toml "$tmp/configs.list" || fail "quickstart.toml not in $configs_src"
{
  echo "$bindir/ckptbench"
  sed "s|^|$datadir/zoo/|" "$tmp/zoo.list"
  sed "s|^|$datadir/configs/|" "$tmp/configs.list"
  if [ "$man_page" = ON ]; then echo "$mandir/man1/ckptbench.1"; fi
} | LC_ALL=C sort >"$tmp/expected.list"
files_under "$prefix" >"$tmp/installed.list"
diff -u "$tmp/expected.list" "$tmp/installed.list" >&2 || fail "installed files differ from the expected list (-expected +installed)"
man_count=0
if [ "$man_page" = ON ]; then man_count=1; fi
[ "$(wc -l <"$tmp/installed.list")" -eq $((1 + zoo_count + configs_count + man_count)) ] || fail "installed file count"
while read -r f; do cmp -s "$zoo_src/$f" "$prefix/$datadir/zoo/$f" || fail "zoo/$f differs from the source"; done <"$tmp/zoo.list"
while read -r f; do cmp -s "$configs_src/$f" "$prefix/$datadir/configs/$f" || fail "configs/$f differs from the source"; done <"$tmp/configs.list"
[ -x "$prefix/$datadir/configs/cluster/slurm-multinode.sh" ] || fail "configs/cluster/slurm-multinode.sh lost its execute bit"

# The installed program.
bin=$prefix/$bindir/ckptbench
[ -x "$bin" ] || fail "$bin is not executable"
first_line="$("$bin" --version | head -n 1)"
case "$first_line" in
  "ckptbench $version ("*) ;;
  *) fail "$bin --version: first line '$first_line' does not start with 'ckptbench $version ('" ;;
esac
"$bin" models >"$tmp/models.txt"
grep -q '^llama3-8b ' "$tmp/models.txt" || fail "'ckptbench models' does not list llama3-8b"
[ "$(($(wc -l <"$tmp/models.txt") - 1))" -eq "$zoo_count" ] || fail "'ckptbench models' lists not one model per zoo file ($zoo_count)"

# The man page.
if [ "$man_page" = ON ]; then
  page=$prefix/$mandir/man1/ckptbench.1
  grep -q "^\.TH CKPTBENCH \"1\" \".*\" \"ckptbench $version\" \"User Commands\"$" "$page" || fail "$page: no .TH CKPTBENCH line for $version"
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS SUBCOMMANDS FILES EXAMPLES; do
    grep -qx "\.SH $section" "$page" || fail "$page: no $section section"
  done
  for sub in run layout models backends; do
    grep -qx "\.SS \"ckptbench $sub\"" "$page" || fail "$page: no subsection for ckptbench $sub"
  done
  for option in '\-\-dry\-run' '\-\-set' '\-\-tp' '\-\-json'; do
    grep -qF "\\fB$option\\fR" "$page" || fail "$page: subcommand option $option missing"
  done
  ! LC_ALL=C grep -nP '[^\x00-\x7F]|\?\?\?' "$page" >&2 || fail "$page: non-ASCII or undecoded (???) text"
fi

# The installed quickstart, run from another directory.
files_under "$prefix" >"$tmp/before.list"
config=$prefix/$datadir/configs/quickstart.toml
tiny=(--set model.scale=4096 --set campaign.iterations=1 --set campaign.warmup=0)
check_results() {  # DIR: the one run directory under DIR has 3 verified, ok cases
  local runs=("$1"/quickstart-*)
  [ ${#runs[@]} -eq 1 ] || fail "not one quickstart-* run directory in $1: ${runs[*]}"
  [ -f "${runs[0]}/results.jsonl" ] || fail "no results.jsonl in ${runs[0]}"
  [ "$(wc -l <"${runs[0]}/results.jsonl")" -eq 3 ] || fail "${runs[0]}/results.jsonl: not 3 cases"
  [ "$(grep -c '"status":"ok"' "${runs[0]}/results.jsonl")" -eq 3 ] || fail "${runs[0]}/results.jsonl: not 3 ok cases"
  [ "$(grep -c '"verified":true' "${runs[0]}/results.jsonl")" -eq 3 ] || fail "${runs[0]}/results.jsonl: not 3 verified cases"
}

mkdir "$tmp/dry" "$tmp/work" "$tmp/elsewhere"
(cd "$tmp/dry" && "$bin" run "$config" --dry-run) >"$tmp/dry.txt" || fail "ckptbench run $config --dry-run"
[ "$(head -n 1 "$tmp/dry.txt")" = "campaign quickstart ($config): 3 cases, 1 process(es)" ] ||
  fail "dry run: unexpected first line: $(head -n 1 "$tmp/dry.txt")"
[ -z "$(ls -A "$tmp/dry")" ] || fail "the dry run wrote into its directory: $(ls -A "$tmp/dry")"

(cd "$tmp/work" && "$bin" run "$config" "${tiny[@]}") >"$tmp/run.txt" 2>&1 || { cat "$tmp/run.txt" >&2; fail "ckptbench run $config"; }
[ -d "$tmp/work/ckptbench-target/quickstart" ] || fail "a relative campaign.target did not resolve against the current directory"
check_results "$tmp/work/results/runs"

(cd "$tmp/work" && "$bin" run "$config" "${tiny[@]}" --set campaign.target="$tmp/elsewhere/target" --output "$tmp/elsewhere/results") \
  >"$tmp/run2.txt" 2>&1 || { cat "$tmp/run2.txt" >&2; fail "ckptbench run $config --set campaign.target=..."; }
[ -d "$tmp/elsewhere/target/quickstart" ] || fail "--set campaign.target=$tmp/elsewhere/target was not used"
check_results "$tmp/elsewhere/results"

files_under "$prefix" | diff -u "$tmp/before.list" - >&2 || fail "running the installed program changed the prefix"
echo "install_test: ok ($(wc -l <"$tmp/installed.list") files under $prefix, man page $man_page)"
