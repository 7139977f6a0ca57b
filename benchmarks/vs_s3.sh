#!/usr/bin/env bash
# ckptbench's s3 backend against boto3 (the client most users would pick instead) moving the
# same bytes through the same S3 server with the same part size and concurrency.
#
# Each pair: ckptbench writes one checkpoint (one object per file, multipart above the part
# size) and restores it in a second run; boto3 then uploads local files of exactly the sizes of
# the data objects ckptbench wrote (upload_file, TransferConfig with the same multipart
# threshold, part size and max_concurrency) and downloads them again (download_file). The order
# of the two tools alternates from pair to pair. Prints every pair's GiB/s and ratio (ckptbench /
# boto3; the goal is >= 1.0: the benchmark's client must not be the bottleneck) and the medians
# [min, max], and each client's CPU seconds per GiB as a ratio (ckptbench / boto3: below 1.0,
# ckptbench's client costs less CPU; where one server bounds both clients' speed, this shows
# the client's own cost). Without an S3 endpoint in the environment it starts moto's server on 127.0.0.1
# (tests/backends/s3/moto_fixture.py, from .deps/venv): a local Python server bounds absolute
# numbers far below a real store's, but the ratios still show client overhead. Note also that
# boto3 reads from and writes to a local file (page cache) where ckptbench moves memory.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: benchmarks/vs_s3.sh [options]

  --bytes SIZE        about this many bytes per checkpoint (default 256MiB; suffixes K/M/G =
                      KiB/MiB/GiB): Llama 3 8B's weights at the model.scale that comes closest
  --files N           objects per checkpoint: N modeled ranks (TP N: 1, 2, 4 or 8), one
                      object each (default 1)
  --part-size SIZE    multipart part size of both clients (default 8MiB; at least 5MiB)
  --concurrency N     requests in flight per process for both (default 4)
  --pairs N           alternating pairs (default 5)
  --ckptbench PATH    the binary (default <repo>/build/bin/ckptbench)
  --dir DIR           scratch directory (default <repo>/build/vs_s3)
  -h, --help          this text

Against another store: export CKPT_TEST_S3_ENDPOINT, CKPT_TEST_S3_BUCKET, CKPT_TEST_S3_REGION,
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY first (objects go under the prefix vs-s3/).
EOF
}

die() { echo "vs_s3: error: $*" >&2; exit 2; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
venv_python="$repo/.deps/venv/bin/python"

if [ -z "${CKPT_TEST_S3_ENDPOINT:-}" ]; then
  [ -x "$venv_python" ] || die "$venv_python is missing: run ci/setup.sh (it installs moto and boto3)"
  exec "$venv_python" "$repo/tests/backends/s3/moto_fixture.py" "$0" "$@"
fi

bytes_arg=256MiB
files=1
part_arg=8MiB
concurrency=4
pairs=5
ckptbench="$repo/build/bin/ckptbench"
dir="$repo/build/vs_s3"

size_of() {
  local v=$1 n unit
  n=${v%%[!0-9]*}
  unit=${v#"$n"}
  [ -n "$n" ] || die "not a size: $v"
  case "$unit" in
    "" | B) echo "$n" ;;
    K | KiB) echo $((n << 10)) ;;
    M | MiB) echo $((n << 20)) ;;
    G | GiB) echo $((n << 30)) ;;
    *) die "not a size: $v (use K, M or G)" ;;
  esac
}

while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes_arg=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --part-size) part_arg=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --ckptbench) ckptbench=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option $1" ;;
  esac
done

bytes=$(size_of "$bytes_arg")
part=$(size_of "$part_arg")
[ -x "$ckptbench" ] || die "$ckptbench is missing: build it first (cmake --build build)"
[ "$part" -ge $((5 << 20)) ] || die "--part-size must be at least 5MiB (S3's minimum part)"
[ "$pairs" -ge 1 ] && [ "$concurrency" -ge 1 ] && [ "$files" -ge 1 ] || die "counts must be >= 1"

rm -rf "$dir"
mkdir -p "$dir"
# Llama 3 8B's weights are 16,060,522,496 bytes in bf16.
scale=$((16060522496 / bytes))
[ "$scale" -ge 1 ] || scale=1

cat >"$dir/vs-s3.toml" <<EOF
[campaign]
name = "vs-s3"
target = "ckpt"
keep = true
overwrite = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = $scale
[parallel]
tp = $files
[state]
scope = "weights"
[cache]
policy = "none"
[backend]
name = "s3"
[backend.s3]
prefix = "vs-s3"
part_size = $part
concurrency = $concurrency
EOF

py=python3  # with boto3 (the project's venv has it)
[ -x "$venv_python" ] && py="$venv_python"

run_ckptbench() {  # phase, output directory; prints its GiB/s and its CPU seconds per GiB
  local phase=$1 out=$2
  (cd "$dir" && "$ckptbench" run vs-s3.toml --phase "$phase" --output "$out" -q \
    --set "backend.s3.endpoint=$CKPT_TEST_S3_ENDPOINT" --set "backend.s3.bucket=$CKPT_TEST_S3_BUCKET" \
    --set "backend.s3.region=$CKPT_TEST_S3_REGION" >/dev/null)
  "$py" - "$out" "$phase" <<'EOF'
import glob, json, sys
out, phase = sys.argv[1], sys.argv[2]
record = json.loads(open(glob.glob(out + "/*/results.jsonl")[0]).readline())
if record["status"] != "ok":
    sys.exit(f"vs_s3: ckptbench {phase}: {record['error']}")
side = "write" if phase == "checkpoint" else "read"
# The process's CPU time (every thread) over its timed iterations, per GiB moved.
cpu = record["integrity"]["cpu"][side]
gib = record["bytes_per_checkpoint"] * record["iterations"] / 2**30
print(record[side + "_gib_per_s"], (cpu["user_seconds"] + cpu["system_seconds"]) / gib)
EOF
}

# boto3 moves files of the sizes of the data objects ckptbench left under its prefix; prints
# "<upload GiB/s> <download GiB/s> <upload CPU s/GiB> <download CPU s/GiB>" (the process's CPU
# time, every thread, over each transfer).
run_boto3() {
  "$py" - "$dir" "$part" "$concurrency" <<'EOF'
import os, sys, time
import boto3
from boto3.s3.transfer import TransferConfig
work, part, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s3 = boto3.client("s3", endpoint_url=os.environ["CKPT_TEST_S3_ENDPOINT"],
                  region_name=os.environ["CKPT_TEST_S3_REGION"])
bucket = os.environ["CKPT_TEST_S3_BUCKET"]
# The campaign's target is made absolute (beside its file): its keys are vs-s3/<that path>/...
skip = ("ckptbench-manifest.json", "latest", ".metadata", ".ckptbench.lock")
sizes = [o["Size"] for page in s3.get_paginator("list_objects_v2").paginate(
             Bucket=bucket, Prefix="vs-s3/")
         for o in page.get("Contents", [])
         if "/case-0000/step_" in o["Key"] and not o["Key"].endswith(skip)]
if not sizes:
    sys.exit("vs_s3: ckptbench left no data objects under vs-s3/ to size boto3's by")
config = TransferConfig(multipart_threshold=part, multipart_chunksize=part,
                        max_concurrency=concurrency, use_threads=True)
paths = []
for i, size in enumerate(sizes):
    path = os.path.join(work, f"boto3-{i}.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    paths.append(path)
total = sum(sizes)
start, cpu = time.perf_counter(), time.process_time()
for i, path in enumerate(paths):
    s3.upload_file(path, bucket, f"vs-s3-boto3/{i}.bin", Config=config)
up, up_cpu = time.perf_counter() - start, time.process_time() - cpu
start, cpu = time.perf_counter(), time.process_time()
for i, path in enumerate(paths):
    s3.download_file(bucket, f"vs-s3-boto3/{i}.bin", path + ".back", Config=config)
down, down_cpu = time.perf_counter() - start, time.process_time() - cpu
for path in paths:
    os.remove(path)
    os.remove(path + ".back")
gib = total / 2**30
print(gib / up, gib / down, up_cpu / gib, down_cpu / gib)
EOF
}

echo "vs_s3: $bytes_arg requested (model.scale $scale), $files file(s), part size $part_arg," \
  "concurrency $concurrency, $pairs pairs, endpoint $CKPT_TEST_S3_ENDPOINT"
printf '%-5s %-10s %12s %12s %8s %12s %12s %8s %9s %9s\n' pair first ckpt_write boto3_up ratio \
  ckpt_read boto3_down ratio cpu_write cpu_read
results="$dir/pairs.txt"
: >"$results"
for ((p = 1; p <= pairs; p++)); do
  if ((p % 2 == 1)); then first=ckptbench; else first=boto3; fi
  # boto3 first reuses the sizes of the previous pair's checkpoint (the same each time).
  if [ "$first" = boto3 ]; then read -r up down up_cpu down_cpu <<<"$(run_boto3)"; fi
  read -r w w_cpu <<<"$(run_ckptbench checkpoint "$dir/out-w$p")"
  read -r r r_cpu <<<"$(run_ckptbench restore "$dir/out-r$p")"
  if [ "$first" = ckptbench ]; then read -r up down up_cpu down_cpu <<<"$(run_boto3)"; fi
  wr=$("$py" -c "print($w / $up)")
  rr=$("$py" -c "print($r / $down)")
  # CPU seconds per GiB, ckptbench's over boto3's: below 1.0, ckptbench's client costs less.
  wc=$("$py" -c "print($w_cpu / $up_cpu)")
  rc=$("$py" -c "print($r_cpu / $down_cpu)")
  printf '%-5s %-10s %12.4f %12.4f %8.3f %12.4f %12.4f %8.3f %9.3f %9.3f\n' "$p" "$first" "$w" \
    "$up" "$wr" "$r" "$down" "$rr" "$wc" "$rc"
  echo "$wr $rr $wc $rc" >>"$results"
done
"$py" - "$results" <<'EOF'
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
for name, values in (("write", [r[0] for r in rows]), ("read", [r[1] for r in rows])):
    print(f"{name} ratio (ckptbench / boto3): median {statistics.median(values):.3f} "
          f"[{min(values):.3f}, {max(values):.3f}]" + ("" if statistics.median(values) >= 1.0
                                                        else "  BELOW TARGET 1.0"))
for name, values in (("write", [r[2] for r in rows]), ("read", [r[3] for r in rows])):
    print(f"{name} client CPU per GiB (ckptbench / boto3): median {statistics.median(values):.3f} "
          f"[{min(values):.3f}, {max(values):.3f}]")
EOF
