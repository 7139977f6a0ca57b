#!/usr/bin/env bash
# ckptbench's built-in codecs against the zstd command-line tool on the same files.
#
# For each file (default: the four kinds of data.pattern = "trained" a mixed-precision Adam
# checkpoint holds, written by `ckptbench codec --save`): N rounds, each one `ckptbench codec
# --file F --json` (its zstd and byte-grouped codecs, in memory, one thread, one frame per chunk)
# and one `zstd -bL -BCHUNK` (zstd's own in-memory benchmark, one thread, the file cut into
# independent chunks of the same size), in alternating order. Prints every round, each pair's
# ratios (ckptbench / zstd: compression ratio, compress speed, decompress speed) and their
# medians [min, max] per file. zstd's MB/s are 10^6 bytes/s; both are shown as GiB/s of input.
# This is a benchmark, not a test: it exits 0 whatever the ratios are.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: benchmarks/vs_zstd.sh [options] [FILE...]

  --bytes SIZE        bytes of each generated file when no FILE is given (default 256MiB)
  --level N           zstd level of both tools (default 3)
  --chunk-bytes SIZE  independent chunk (frame) size of both tools (default 4MiB)
  --pairs N           rounds per file (default 3)
  --binary PATH       the ckptbench program (default build/bin/ckptbench)
  --dir DIR           where generated files go (default a temporary directory, removed)
  FILE...             files to compress instead of generated ones
EOF
}

bytes=256MiB
level=3
chunk=4MiB
pairs=3
binary=build/bin/ckptbench
dir=""
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes="$2"; shift 2 ;;
    --level) level="$2"; shift 2 ;;
    --chunk-bytes) chunk="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "vs_zstd.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
command -v zstd >/dev/null || { echo "vs_zstd.sh: the zstd tool is missing (apt-get install zstd)" >&2; exit 2; }
[ -x "$binary" ] || { echo "vs_zstd.sh: $binary is not an executable ckptbench (--binary PATH)" >&2; exit 2; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
if [ ${#files[@]} -eq 0 ]; then
  [ -n "$dir" ] || dir="$scratch/inputs"
  "$binary" codec --save "$dir" --bytes "$bytes" >/dev/null
  files=("$dir"/weight-bf16.bin "$dir"/master-fp32.bin "$dir"/exp_avg-fp32.bin "$dir"/exp_avg_sq-fp32.bin)
fi
chunk_bytes="$(python3 -c "
import re,sys
m = re.fullmatch(r'(\d+)\s*([KMGT]?)(i?B)?', sys.argv[1], re.I)
if not m: sys.exit('vs_zstd.sh: --chunk-bytes ' + sys.argv[1] + ': give e.g. 4MiB or 4194304')
print(int(m.group(1)) * 1024 ** ' KMGT'.index((m.group(2) or ' ').upper()))" "$chunk")"

rounds="$scratch/rounds.jsonl"
for f in "${files[@]}"; do
  [ -r "$f" ] || { echo "vs_zstd.sh: $f: not a readable file" >&2; exit 2; }
  for ((p = 0; p < pairs; p++)); do
    run_ours() {
      "$binary" codec --file "$f" --level "$level" --chunk-bytes "$chunk_bytes" --repeat 1 --json >"$scratch/ours.json"
    }
    run_zstd() {
      # zstd reports on stderr, each update ending in a carriage return; the last with both speeds.
      zstd -b"$level" -e"$level" -i1 -T1 -B"$chunk_bytes" "$f" 2>&1 | tr '\r' '\n' | grep -E 'MB/s,.*MB/s' | tail -1 >"$scratch/zstd.txt"
    }
    if [ $((p % 2)) -eq 0 ]; then run_ours; run_zstd; else run_zstd; run_ours; fi
    python3 - "$f" "$p" "$scratch/ours.json" "$scratch/zstd.txt" >>"$rounds" <<'PY'
import json, re, sys
path, pair, ours, tool = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3])), open(sys.argv[4]).read()
m = re.search(r':\s*(\d+)\s*->\s*(\d+)\s*\(x?\s*([\d.]+)\),\s*([\d.]+)\s*MB/s,\s*([\d.]+)\s*MB/s', tool)
if not m:
    sys.exit(f"vs_zstd.sh: cannot read zstd's benchmark line: {tool!r}")
gib = 2 ** 30
record = {"file": path, "pair": pair,
          "zstd_tool": {"ratio": int(m.group(1)) / int(m.group(2)),
                        "compress": float(m.group(4)) * 1e6 / gib, "decompress": float(m.group(5)) * 1e6 / gib}}
for row in ours:
    record[row["codec"]] = {"ratio": row["ratio"], "compress": row["compress_gib_per_s"],
                            "decompress": row["decompress_gib_per_s"]}
print(json.dumps(record))
PY
  done
done

python3 - "$rounds" "$level" "$chunk_bytes" <<'PY'
import json, statistics, sys, os
rows = [json.loads(line) for line in open(sys.argv[1])]
level, chunk = sys.argv[2], sys.argv[3]
print(f"zstd level {level}, chunks of {chunk} bytes, one thread; ratio = input / compressed; speeds GiB/s of input")
print(f"{'file':<22} {'pair':>4} {'codec':<13} {'ratio':>7} {'comp':>7} {'decomp':>7}")
for r in rows:
    for codec in ("zstd_tool", "zstd", "grouped-bf16", "grouped-fp32"):
        c = r[codec]
        print(f"{os.path.basename(r['file']):<22} {r['pair']:>4} {codec:<13} {c['ratio']:>7.3f} {c['compress']:>7.2f} {c['decompress']:>7.2f}")
def spread(values):
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"
print()
print("per pair, ckptbench / zstd tool: median [min, max] over the pairs")
print(f"{'file':<22} {'codec':<13} {'ratio':>22} {'compress':>22} {'decompress':>22}")
for f in dict.fromkeys(r["file"] for r in rows):
    mine = [r for r in rows if r["file"] == f]
    for codec in ("zstd", "grouped-bf16", "grouped-fp32"):
        cols = [spread([r[codec][k] / r["zstd_tool"][k] for r in mine]) for k in ("ratio", "compress", "decompress")]
        print(f"{os.path.basename(f):<22} {codec:<13} {cols[0]:>22} {cols[1]:>22} {cols[2]:>22}")
PY
