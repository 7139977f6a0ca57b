#!/usr/bin/env bash
# Inference weight loading against fio, and safetensors against raw files, on the same weights.
#
#   benchmarks/load_vs_fio.sh [--model M] [--scale S] [--reps N] [--threads T] [--chunk BYTES]
#                             [--shard BYTES] [--dir DIR] [--ckptbench PATH] [--part formats|load|all]
#                             [--settle SECONDS] [--backend posix|uring]
#
# 1. formats, safetensors vs raw: N pairs of `ckptbench run` (posix, fsync) writing the model's
#    bf16 weights (state.scope = "weights") with --phase checkpoint, then, after a sync and
#    --settle seconds (default 5: this VM's disk keeps flushing after fsync returns), reading them
#    with --phase restore (caches dropped first); one file each (raw: file_per_rank; safetensors:
#    one model-00001-of-00001.safetensors). The order alternates (raw first in odd pairs). Medians
#    of write_seconds and read_seconds, and the median of the per-pair safetensors/raw ratios.
#    On a tmpfs --dir (e.g. /dev/shm/lvf) there is no disk: what is left is the formats' own cost.
# 2. load: loading a safetensors checkpoint in Hugging Face shards of --shard bytes (default
#    256 MiB) into host memory, caches dropped before every run, N
#    alternated rounds of: fio (one psync job per file, O_DIRECT, --chunk blocks, T jobs at most),
#    ckptbench load --method pipelined (T threads, O_DIRECT, --chunk chunks), mmap, read.
#    Medians and each method's ratio to fio. Needs root for drop_caches (else fadvise).
#    --backend uring: ckptbench loads through the uring backend and fio uses its io_uring engine
#    (one request in flight per job, as psync); default posix and psync.
# A benchmark, not a test: it always exits 0 once the runs are done. The machine may be shared:
# the figures are medians of alternated runs for that reason, and say nothing of an idle machine.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=llama3-8b scale=16 reps=5 threads=4 chunk=33554432 shard=268435456
dir="$repo/build/load_vs_fio" bin="$repo/build/bin/ckptbench" part=all settle=5 backend=posix
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;; --scale) scale=$2; shift 2 ;; --reps) reps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;; --chunk) chunk=$2; shift 2 ;; --shard) shard=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;; --ckptbench) bin=$2; shift 2 ;;
    --part) part=$2; shift 2 ;; --settle) settle=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "load_vs_fio: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$part" in formats|load|all) ;; *) echo "load_vs_fio: --part $part: use formats, load or all" >&2; exit 2 ;; esac
case "$backend" in posix) ioengine=psync ;; uring) ioengine=io_uring ;;
  *) echo "load_vs_fio: --backend $backend: use posix or uring" >&2; exit 2 ;; esac
[ "$part" = formats ] || command -v fio >/dev/null || { echo "load_vs_fio: fio is not on PATH" >&2; exit 2; }
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

ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.4f}')" "$1" "$2"; }
formats() {
  echo "== safetensors vs raw: $model / $scale, bf16 weights, $reps pairs, write then (sync, ${settle} s) read"
  # One file each (max_shard_bytes above the weights' bytes), as raw's file_per_rank writes.
  local format i order w r
  # One campaign name for both formats, so each write deletes the checkpoint read just before it,
  # whichever format that was: on this VM's disk a write right after deleting another file ran
  # 5x slower than one after deleting its own (fresh blocks vs just-freed ones, it seems), which
  # alternating the order alone turned into a per-pair ratio of 6 or 1/6.
  for format in raw safetensors; do campaign "$format" formats true 1000000000000; cp "$dir/formats.toml" "$dir/$format.toml"; done
  for i in $(seq "$reps"); do
    order="raw safetensors"; [ $((i % 2)) -eq 0 ] && order="safetensors raw"
    for format in $order; do
      rm -rf "$dir/target/formats" "$dir/out-$format-w" "$dir/out-$format-r"; sync
      "$bin" run "$dir/$format.toml" --phase checkpoint --output "$dir/out-$format-w" -q >/dev/null
      sync; sleep "$settle"
      "$bin" run "$dir/$format.toml" --phase restore --output "$dir/out-$format-r" -q >/dev/null
      w=$(field "$(ls "$dir"/out-"$format"-w/*/results.jsonl)" write_seconds)
      r=$(field "$(ls "$dir"/out-"$format"-r/*/results.jsonl)" read_seconds)
      echo "$w" >> "$dir/$format.write"; echo "$r" >> "$dir/$format.read"
      echo "  pair $i $format: write $w s, read $r s"
    done
    for phase in write read; do
      ratio "$(tail -1 "$dir/safetensors.$phase")" "$(tail -1 "$dir/raw.$phase")" >> "$dir/ratio.$phase"
    done
  done
  for phase in write read; do
    raw=$(median < "$dir/raw.$phase"); st=$(median < "$dir/safetensors.$phase")
    echo "  median $phase: raw $raw s, safetensors $st s, ratio of medians $(ratio "$st" "$raw"), median of per-pair ratios $(median < "$dir/ratio.$phase") (safetensors/raw time)"
  done
  rm -rf "$dir/target/formats"
}
[ "$part" = load ] || formats
[ "$part" = formats ] && exit 0

echo "== loading the safetensors checkpoint: $threads threads, $chunk B chunks, O_DIRECT, $reps rounds, backend $backend (fio $ioengine)"
campaign safetensors keep true "$shard"
"$bin" run "$dir/keep.toml" --output "$dir/out-keep" -q >/dev/null
ckpt="$dir/target/keep/case-0000/$(cat "$dir/target/keep/case-0000/latest")"
mapfile -t files < <(ls "$ckpt"/*.safetensors)
total=0; for f in "${files[@]}"; do total=$((total + $(stat -c %s "$f"))); done
echo "  ${#files[@]} files, $total bytes"
jobs=(); for f in "${files[@]}"; do jobs+=(--name="$(basename "$f")" --filename="$f"); done
for i in $(seq "$reps"); do
  drop_caches
  fio --output-format=json --rw=read --direct=1 --ioengine="$ioengine" --bs="$chunk" --group_reporting \
      --thread --numjobs=1 "${jobs[@]}" > "$dir/fio.json"
  python3 -c "
import json; j=json.load(open('$dir/fio.json'))['jobs'][0]['read']
print(j['io_bytes'] / (j['runtime'] / 1000) / 2**30)" >> "$dir/fio.gibs"
  for method in pipelined mmap read; do
    direct=--no-direct; [ "$method" = pipelined ] && direct=--direct
    "$bin" load "$ckpt" --backend "$backend" --method "$method" --threads "$threads" --chunk-bytes "$chunk" "$direct" > "$dir/$method.out"
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
