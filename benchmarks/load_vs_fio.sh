#!/usr/bin/env bash
# Inference weight loading against fio, and safetensors against raw files, on the same weights.
#
#   benchmarks/load_vs_fio.sh [--model M] [--scale S] [--reps N] [--threads T] [--chunk BYTES]
#                             [--shard BYTES] [--dir DIR] [--ckptbench PATH]
#
# 1. safetensors vs raw: N alternated pairs of `ckptbench run` (posix, fsync, caches dropped
#    before the restore) writing and reading the model's bf16 weights (state.scope = "weights"),
#    one file each (raw: file_per_rank; safetensors: one model-00001-of-00001.safetensors);
#    medians of write_seconds and read_seconds, and their ratios.
# 2. loading a safetensors checkpoint in Hugging Face shards of --shard bytes (default 256 MiB)
#    into host memory, caches dropped before every run, N
#    alternated rounds of: fio (one psync job per file, O_DIRECT, --chunk blocks, T jobs at most),
#    ckptbench load --method pipelined (T threads, O_DIRECT, --chunk chunks), mmap, read.
#    Medians and each method's ratio to fio. Needs root for drop_caches (else fadvise).
# A benchmark, not a test: it always exits 0 once the runs are done. The machine may be shared:
# the figures are medians of alternated runs for that reason, and say nothing of an idle machine.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=llama3-8b scale=16 reps=5 threads=4 chunk=33554432 shard=268435456
dir="$repo/build/load_vs_fio" bin="$repo/build/bin/ckptbench"
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;; --scale) scale=$2; shift 2 ;; --reps) reps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;; --chunk) chunk=$2; shift 2 ;; --shard) shard=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;; --ckptbench) bin=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "load_vs_fio: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v fio >/dev/null || { echo "load_vs_fio: fio is not on PATH" >&2; exit 2; }
rm -rf "$dir"; mkdir -p "$dir"
cp "$bin" "$dir/ckptbench"; bin="$dir/ckptbench"  # a rebuild during the run cannot change it
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

campaign() {  # campaign FORMAT NAME KEEP SHARD_BYTES
  cat > "$dir/$2.toml" <<TOML
[campaign]
name = "$2"
target = "$dir/target"
create_target = true
overwrite = true
keep = $3
iterations = 1
warmup = 0
[model]
name = "$model"
scale = $scale
[state]
scope = "weights"
[strategy]
format = "$1"
max_shard_bytes = $4
[backend]
name = "posix"
sync = "fsync"
[cache]
policy = "drop"
TOML
}
field() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])" "$1" "$2"; }

echo "== safetensors vs raw: $model / $scale, bf16 weights, $reps alternated pairs"
# One file each (max_shard_bytes above the weights' bytes), as raw's file_per_rank writes.
for format in raw safetensors; do campaign "$format" "$format" false 1000000000000; done
for i in $(seq "$reps"); do
  for format in raw safetensors; do
    rm -rf "$dir/out-$format"
    "$bin" run "$dir/$format.toml" --output "$dir/out-$format" -q >/dev/null
    results=$(ls "$dir"/out-"$format"/*/results.jsonl)
    w=$(field "$results" write_seconds); r=$(field "$results" read_seconds)
    echo "$w" >> "$dir/$format.write"; echo "$r" >> "$dir/$format.read"
    echo "  $format run $i: write $w s, read $r s"
  done
done
for phase in write read; do
  raw=$(median < "$dir/raw.$phase"); st=$(median < "$dir/safetensors.$phase")
  echo "  median $phase: raw $raw s, safetensors $st s, safetensors/raw time = $(python3 -c "print(f'{$st/$raw:.3f}')")"
done

echo "== loading the safetensors checkpoint: $threads threads, $chunk B chunks, O_DIRECT, $reps rounds"
campaign safetensors keep true "$shard"
"$bin" run "$dir/keep.toml" --output "$dir/out-keep" -q >/dev/null
ckpt="$dir/target/keep/case-0000/$(cat "$dir/target/keep/case-0000/latest")"
mapfile -t files < <(ls "$ckpt"/*.safetensors)
total=0; for f in "${files[@]}"; do total=$((total + $(stat -c %s "$f"))); done
echo "  ${#files[@]} files, $total bytes"
jobs=(); for f in "${files[@]}"; do jobs+=(--name="$(basename "$f")" --filename="$f"); done
for i in $(seq "$reps"); do
  drop_caches
  fio --output-format=json --rw=read --direct=1 --ioengine=psync --bs="$chunk" --group_reporting \
      --thread --numjobs=1 "${jobs[@]}" > "$dir/fio.json"
  python3 -c "
import json; j=json.load(open('$dir/fio.json'))['jobs'][0]['read']
print(j['io_bytes'] / (j['runtime'] / 1000) / 2**30)" >> "$dir/fio.gibs"
  for method in pipelined mmap read; do
    direct=--no-direct; [ "$method" = pipelined ] && direct=--direct
    "$bin" load "$ckpt" --method "$method" --threads "$threads" --chunk-bytes "$chunk" "$direct" > "$dir/$method.out"
    grep -q ", verified" "$dir/$method.out" || { cat "$dir/$method.out"; echo "load_vs_fio: $method did not verify" >&2; exit 1; }
    sed -n 's/.* = \([0-9.]*\) GiB\/s, cache.*/\1/p' "$dir/$method.out" >> "$dir/$method.gibs"
  done
  echo "  round $i: fio $(tail -1 "$dir/fio.gibs" | cut -c1-6) GiB/s, pipelined $(tail -1 "$dir/pipelined.gibs"), mmap $(tail -1 "$dir/mmap.gibs"), read $(tail -1 "$dir/read.gibs")"
done
fio_median=$(median < "$dir/fio.gibs")
echo "  median fio $(printf '%.3f' "$fio_median") GiB/s (fio jobs: one per file, ${#files[@]} in all)"
for method in pipelined mmap read; do
  m=$(median < "$dir/$method.gibs")
  echo "  median $method $m GiB/s = $(python3 -c "print(f'{$m/$fio_median:.3f}')") x fio"
done
rm -rf "$dir/target"
