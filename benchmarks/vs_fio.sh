#!/usr/bin/env bash
# ckptbench's posix backend against fio doing the same I/O.
#
# For each row (O_DIRECT write, buffered write + fsync, O_DIRECT read after a cache drop; also
# buffered read): N alternating rounds of the same work, each round one fio run, one ckptbench
# run holding the whole checkpoint in memory and one with fio's footprint (memory.reuse_bytes =
# one block), in rotating order: one file, the same bytes, the same block size (every request
# exactly one block, psync: one pwrite/pread at a time, one thread), fsync at the end of writes,
# caches dropped and a settle pause before every run. Then the same ckptbench case on the null
# backend to size the harness's own overhead. Prints every run, each pair's ratio, medians
# [min, max]; exits 0 when a ratio misses its target (this is a benchmark, not a test) and says
# "BELOW TARGET". See benchmarks/README.md.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: benchmarks/vs_fio.sh [options]

  --bytes SIZE       bytes per run, a multiple of --block and of 4 KiB, at least 4 MiB
                     (default 1GiB; suffixes K/M/G/T = KiB/MiB/GiB/TiB, or KB/MB/GB/TB)
  --block SIZE       request size of both tools, a multiple of 4 KiB (default 1MiB)
  --pairs N          rounds per row, at least 1 (default 5): each round runs fio, ckptbench and
                     ckptbench with fio's footprint once, in rotating order (--reps: the same)
  --null-reps N      null-backend runs per mode (default 1)
  --rows LIST        comma list of direct-write, buffered-write, direct-read, buffered-read
                     (default direct-write,buffered-write,direct-read); a read row reads what
                     its mode's write row wrote last, or writes it once first (unmeasured)
  --no-footprint     skip the ckptbench runs with fio's footprint (memory.reuse_bytes)
  --direct-sync P    fsync or none: fsync at the end of the O_DIRECT writes (default fsync;
                     buffered writes always fsync)
  --settle SECONDS   pause after each cache drop before the run starts (default 3; see below)
  --warmup 0|1       1: each measured run is preceded, in the same tool invocation, by one
                     unmeasured run of the same kind on another fresh file that is then
                     deleted (ckptbench campaign.warmup = 1; fio a first job with unlink=1, or
                     a first read of the file); default 1, like campaign.warmup; 0: cold runs
  --fio-footprint    give fio as much resident buffer memory as ckptbench (iodepth = bytes /
                     block: psync still issues one request at a time, but fio allocates and
                     fills that many blocks); default: fio's usual single block
  --engine E         psync (default: ckptbench backend posix, one request at a time) or
                     io_uring (ckptbench backend uring; both tools keep --iodepth requests
                     in flight)
  --iodepth N        queue depth with --engine io_uring (default 16)
  --dir DIR          scratch directory for data files, configs and results (default
                     <repo>/build/vs_fio, on the same file system as the build tree)
  --ckptbench PATH   the binary (default <repo>/build/bin/ckptbench); copied into the run directory
                     so a rebuild during the run cannot change it
  --fio PATH         fio binary (default: fio on PATH)
  --keep             keep the data files (default: removed at the end)
  -h, --help         this text

Why --settle: on VMs with free page reporting (virtio-balloon), memory freed by the cache drop
is handed back to the host within ~2 s, and page-cache pages allocated after that cost a host
fault each. A run that starts right after the drop (fio, ~50 ms of setup) then writes to the
page cache several times faster than one that starts later (ckptbench allocates and fills its
buffer first). The pause puts both tools in the same, settled state.
EOF
}

die() { echo "vs_fio: error: $*" >&2; exit 2; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
PY=/usr/bin/python3

bytes_arg=1GiB
block_arg=1MiB
reps=5
null_reps=1
rows_arg=direct-write,buffered-write,direct-read
reuse=1
direct_sync=fsync
settle=3
warmup=1
fio_footprint=0
engine=psync
iodepth=16
dir="$repo/build/vs_fio"
ckptbench="$repo/build/bin/ckptbench"
fio_bin=fio
keep=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bytes) bytes_arg=${2:?--bytes needs a value}; shift 2 ;;
    --block) block_arg=${2:?--block needs a value}; shift 2 ;;
    --pairs|--reps) reps=${2:?$1 needs a value}; shift 2 ;;
    --null-reps) null_reps=${2:?--null-reps needs a value}; shift 2 ;;
    --rows) rows_arg=${2:?--rows needs a value}; shift 2 ;;
    --no-footprint) reuse=0; shift ;;
    --direct-sync) direct_sync=${2:?--direct-sync needs a value}; shift 2 ;;
    --settle) settle=${2:?--settle needs a value}; shift 2 ;;
    --warmup) warmup=${2:?--warmup needs a value}; shift 2 ;;
    --fio-footprint) fio_footprint=1; shift ;;
    --engine) engine=${2:?--engine needs a value}; shift 2 ;;
    --iodepth) iodepth=${2:?--iodepth needs a value}; shift 2 ;;
    --dir) dir=${2:?--dir needs a value}; shift 2 ;;
    --ckptbench) ckptbench=${2:?--ckptbench needs a value}; shift 2 ;;
    --fio) fio_bin=${2:?--fio needs a value}; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option \`$1'" ;;
  esac
done
case "$engine" in
  psync) backend=posix; queue_depth=1 ;;
  io_uring) backend=uring; queue_depth=$iodepth ;;
  *) die "--engine: unknown engine \`$engine' (psync, io_uring)" ;;
esac
[[ $iodepth =~ ^[1-9][0-9]*$ ]] || die "--iodepth: expected a positive integer, got \`$iodepth'"
if [[ $engine == io_uring ]] && (( fio_footprint )); then die "--fio-footprint applies to --engine psync only"; fi

# JSON parsing, sizes and medians. Debian's python3, standard library only.
PY_HELPER=$(cat <<'PYEOF'
import json, glob, os, statistics, sys

GIB = float(1 << 30)

def size(text):
    t = text.strip()
    units = {"": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20,
             "G": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TIB": 1 << 40,
             "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
    i = len(t)
    while i > 0 and not t[i - 1].isdigit():
        i -= 1
    number, unit = t[:i], t[i:].strip().upper()
    if not number.isdigit() or unit not in units:
        sys.exit(f"vs_fio: error: `{text}` is not a size (e.g. 1GiB, 512M, 1048576)")
    return int(number) * units[unit]

def fio_record(mode, op, rep, path):
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON object.
    d = json.loads(text[text.index("{"):])
    job = [j for j in d["jobs"] if j["jobname"] == "vs-fio"][0]
    if job.get("error", 0) != 0:
        sys.exit(f"vs_fio: fio job failed (error {job['error']}); see {path}")
    x = job[op]
    return {"mode": mode, "op": op, "tool": "fio", "rep": rep, "bytes": x["io_bytes"],
            "seconds": x["io_bytes"] / x["bw_bytes"], "gib_per_s": x["bw_bytes"] / GIB,
            "runtime_ms": x["runtime"], "ios": x["total_ios"]}

def ck_record(mode, op, rep, out_dir, tool):
    files = glob.glob(os.path.join(out_dir, "*", "results.jsonl"))
    if len(files) != 1:
        sys.exit(f"vs_fio: expected one results.jsonl under {out_dir}, found {len(files)}")
    with open(files[0]) as f:
        r = json.loads(f.readline())
    if r["status"] != "ok":
        sys.exit(f"vs_fio: ckptbench case {r['status']}: {r['error']}")
    seconds = r[op + "_seconds"]
    phases = r["phases"][op]
    in_backend = phases["open"] + phases["transfer"] + phases["sync"] + phases["close"]
    return {"mode": mode, "op": op, "tool": tool, "rep": rep, "bytes": r["bytes_per_checkpoint"],
            "seconds": seconds, "gib_per_s": r["bytes_per_checkpoint"] / seconds / GIB,
            "reported_gib_per_s": r[op + "_gib_per_s"], "extents": r["extents_per_checkpoint"],
            "padding_bytes": r["padding_bytes"], "files": r["files_per_checkpoint"],
            "phases": phases, "outside_backend_seconds": seconds - in_backend,
            "cache_policy": r["cache_policy"], "results": files[0]}

def line(rec):
    what = "run " if rec["tool"] == "null" else "pair"
    s = f"  {rec['mode']:<8} {rec['op']:<5} {what} {rec['rep']:>2}  {rec['tool']:<15} "
    if rec["tool"] == "null":
        return s + f"{rec['seconds']*1e6:14.1f} us (no I/O)"
    s += f"{rec['gib_per_s']:8.3f} GiB/s  {rec['seconds']:9.6f} s"
    if "phases" in rec:
        p = rec["phases"]
        s += f"  (open {p['open']*1e3:.2f} ms, transfer {p['transfer']:.3f} s, sync {p['sync']:.3f} s, close {p['close']*1e3:.2f} ms)"
    return s

def record(kind, mode, op, rep, path, records, expect_bytes, expect_requests):
    rec = fio_record(mode, op, int(rep), path) if kind == "fio" else ck_record(mode, op, int(rep), path, kind)
    if rec["bytes"] != int(expect_bytes):
        sys.exit(f"vs_fio: {kind} moved {rec['bytes']} bytes, expected {expect_bytes}; see {path}")
    requests = rec["ios"] if kind == "fio" else rec["extents"]
    if requests != int(expect_requests) or rec.get("padding_bytes", 0) != 0:
        sys.exit(f"vs_fio: {kind} made {requests} requests ({rec.get('padding_bytes', 0)} padding bytes), "
                 f"expected {expect_requests} (bytes / block, no padding); see {path}")
    with open(records, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(line(rec), flush=True)

def med(values):
    return statistics.median(values) if values else float("nan")

def spread(values, fmt="{:.3f}"):
    return (fmt + " [" + fmt + ", " + fmt + "]").format(med(values), min(values), max(values))

def summary(records, out_json, write_target, null_target, meta_json):
    recs = [json.loads(l) for l in open(records) if l.strip()]
    meta = json.loads(meta_json)
    out = {"meta": meta, "comparisons": [], "null_overhead": [], "records": recs}
    print()
    print("summary: GiB/s median [min, max]; pair ratio = ckptbench / fio of the same round, median [min, max]")
    print("  (ckptbench-reuse: memory.reuse_bytes = one block, fio's footprint; write and direct-read targets apply to both)")
    print(f"  {'row':<15} {'tool':<16} {'fio GiB/s':>22} {'ckptbench GiB/s':>22} {'pair ratio':>22}  target")
    for row in meta["rows"]:
        mode, op = row.split("-")
        fio = [r for r in recs if r["mode"] == mode and r["op"] == op and r["tool"] == "fio"]
        fio_by = {r["rep"]: r for r in fio}
        for tool in meta["tools"]:
            ck = [r for r in recs if r["mode"] == mode and r["op"] == op and r["tool"] == tool]
            pairs = [r["gib_per_s"] / fio_by[r["rep"]]["gib_per_s"] for r in ck if r["rep"] in fio_by]
            if not pairs:
                continue
            targeted = op == "write" or mode == "direct"
            ratio = med(pairs)
            verdict = (f">= {write_target:.2f}: " + ("ok" if ratio >= write_target else "BELOW TARGET")) if targeted \
                else "informational"
            print(f"  {row:<15} {tool:<16} {spread([r['gib_per_s'] for r in fio]):>22} "
                  f"{spread([r['gib_per_s'] for r in ck]):>22} {spread(pairs):>22}  {verdict}")
            print(f"  {'':<15} {'':<16} pair ratios: " + " ".join(f"{p:.3f}" for p in pairs))
            out["comparisons"].append({
                "row": row, "mode": mode, "op": op, "tool": tool,
                "fio_median_gib_per_s": med([r["gib_per_s"] for r in fio]),
                "ckptbench_median_gib_per_s": med([r["gib_per_s"] for r in ck]),
                "fio_median_seconds": med([r["seconds"] for r in fio]),
                "ckptbench_median_seconds": med([r["seconds"] for r in ck]),
                "pair_ratios": pairs, "median_pair_ratio": ratio,
                "target": write_target if targeted else None,
                "below_target": (ratio < write_target) if targeted else None,
                "ckptbench_outside_backend_median_seconds": med([r["outside_backend_seconds"] for r in ck])})
    print()
    print("harness overhead: median null-backend write_seconds / median posix write_seconds")
    for mode in meta["modes"]:
        null = [r["seconds"] for r in recs if r["mode"] == mode and r["tool"] == "null"]
        posix = [r for r in recs if r["mode"] == mode and r["op"] == "write" and r["tool"] == "ckptbench"]
        if not null or not posix:
            continue
        n_med, p_med = med(null), med([r["seconds"] for r in posix])
        outside = med([r["outside_backend_seconds"] for r in posix])
        share = n_med / p_med
        verdict = f"< {null_target:.0%}: " + ("ok" if share < null_target else "BELOW TARGET")
        print(f"  {mode:<8} null {n_med*1e6:10.1f} us / backend {p_med:.4f} s = {share:.5%}  {verdict}")
        print(f"  {'':<8} (posix runs: median time in write_seconds outside the backend's open/transfer/sync/close: "
              f"{outside*1e6:.1f} us = {outside/p_med:.5%})")
        out["null_overhead"].append({"mode": mode, "null_median_seconds": n_med, "posix_median_seconds": p_med,
                                     "share": share, "target": null_target, "below_target": share >= null_target,
                                     "posix_outside_backend_median_seconds": outside})
    with open(out_json, "w") as f:
        json.dump(out, f, indent=1)
    below = [c for c in out["comparisons"] if c["below_target"]] + [n for n in out["null_overhead"] if n["below_target"]]
    print()
    if below:
        print("RESULT: BELOW TARGET in " + ", ".join(
            f"{c.get('row', c['mode'])} {c.get('tool', 'null overhead')}" for c in below))
    else:
        print("RESULT: every target met")
    print(f"summary: {out_json}")

def extents_from_dry_run(path):
    # The dry-run table: case ranks checkpoint(2 words) files extents memory(2 words) swept
    rows = [l.split() for l in open(path) if l.strip() and l.split()[0].isdigit()]
    if len(rows) != 1:
        sys.exit(f"vs_fio: cannot read the dry-run table in {path}")
    return rows[0][5]

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "size":
    print(size(args[0]))
elif cmd == "record":
    record(*args)
elif cmd == "summary":
    summary(args[0], args[1], float(args[2]), float(args[3]), args[4])
elif cmd == "layout-bytes":
    print(json.load(open(args[0]))["checkpoint_bytes"])
elif cmd == "dry-run-extents":
    print(extents_from_dry_run(args[0]))
else:
    sys.exit(f"unknown helper command {cmd}")
PYEOF
)

py() { "$PY" -c "$PY_HELPER" "$@"; }

[[ -x $PY ]] || die "$PY not found (Debian's python3 is needed for JSON parsing)"
command -v "$fio_bin" >/dev/null || die "fio not found (apt-get install fio, or --fio PATH)"
[[ -x $ckptbench ]] || die "$ckptbench is not an executable (build with cmake --build build, or --ckptbench PATH)"
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer (got $reps)"
[[ $null_reps =~ ^[1-9][0-9]*$ ]] || die "--null-reps must be a positive integer (got $null_reps)"
[[ $direct_sync == fsync || $direct_sync == none ]] || die "--direct-sync must be fsync or none"
[[ $warmup == 0 || $warmup == 1 ]] || die "--warmup must be 0 or 1 (got $warmup)"
[[ $settle =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--settle must be a number of seconds (got $settle)"
bytes=$(py size "$bytes_arg") || exit 2
block=$(py size "$block_arg") || exit 2
(( block >= 4096 && block % 4096 == 0 )) || die "--block must be a multiple of 4 KiB (got $block)"
(( bytes % block == 0 )) || die "--bytes ($bytes) must be a multiple of --block ($block)"
# The model below: 3.5 MiB of fixed matrices, three 4 KiB norms and a vocab × 4 KiB embedding.
fixed_bytes=$(( 7 * 524288 ))
(( bytes >= fixed_bytes + 4 * 4096 )) || die "--bytes must be at least 4 MiB (got $bytes)"
IFS=, read -r -a rows <<<"$rows_arg"
modes=()
for r in "${rows[@]}"; do
  case "$r" in
    direct-write|buffered-write|direct-read|buffered-read) ;;
    *) die "--rows: unknown row \`$r' (direct-write, buffered-write, direct-read, buffered-read)" ;;
  esac
  [[ " ${modes[*]} " == *" ${r%-*} "* ]] || modes+=("${r%-*}")
done
# The ckptbench variants of every round: the whole checkpoint resident, and fio's footprint.
tools=(ckptbench)
if (( reuse )); then tools+=(ckptbench-reuse); fi

can_drop=0
if [[ -w /proc/sys/vm/drop_caches ]]; then
  can_drop=1
else
  echo "vs_fio: warning: cannot write /proc/sys/vm/drop_caches (not root); relying on fio's invalidate" \
    "and ckptbench's fadvise fallback — read numbers may include cached data" >&2
fi
drop_caches() {  # [settle]: also pause for --settle seconds
  sync
  if (( can_drop )); then echo 3 >/proc/sys/vm/drop_caches; fi
  if [[ ${1:-} == settle ]]; then sleep "$settle"; fi
}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stamp=$(date +%Y%m%d-%H%M%S)
run_dir="$dir/run-$stamp"
mkdir -p "$run_dir"
data_dir="$dir/data"
mkdir -p "$data_dir"
need=$(( bytes * (1 + ${#tools[@]}) * ${#modes[@]} + bytes ))
avail=$(( $(df --output=avail -B1 "$data_dir" | tail -1) ))
(( avail > need )) || die "$data_dir has $avail bytes free; this run needs about $need"

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  if (( keep == 0 )); then rm -rf "$data_dir"; fi
}
trap cleanup EXIT

cp "$ckptbench" "$run_dir/ckptbench"
ck="$run_dir/ckptbench"

# A tiny custom model whose bf16 weights are exactly `bytes`, every tensor a multiple of 4 KiB
# (so O_DIRECT needs no padding and the shards pack back to back): hidden 2048, one layer with
# one 128-wide head and a 128-wide MLP (7 × 512 KiB), three norms (3 × 4 KiB), and a tied
# embedding of vocab × 4 KiB that makes up the rest.
vocab=$(( (bytes - fixed_bytes) / 4096 - 3 ))
model="$run_dir/vs-fio-model.toml"
cat >"$model" <<EOF
# Generated by benchmarks/vs_fio.sh: bf16 weights of exactly $bytes bytes.
name = "vs-fio-flat"
hidden_size = 2048
intermediate_size = 128
num_hidden_layers = 1
num_attention_heads = 1
num_key_value_heads = 1
head_dim = 128
vocab_size = $vocab
tie_word_embeddings = true
EOF

"$ck" layout --model "$model" --state weights --vocab-divisor 1 --json >"$run_dir/layout.json"
model_bytes=$(py layout-bytes "$run_dir/layout.json")
(( model_bytes == bytes )) || die "generated model holds $model_bytes bytes, not $bytes (see $model)"

# One campaign per mode and variant; they differ only in backend.direct, memory.reuse_bytes
# (with data.verify) and the name, hence the directory. chunk_bytes = block and a coalesce limit
# above the file size: the shards merge into one extent, then split into block-sized requests.
# cache.policy = "fadvise" before a restore: fdatasync + POSIX_FADV_DONTNEED of the file, what
# fio's invalidate=1 does; the script's own drop and settle come before both tools' runs ("drop"
# would drop the caches once more right before ckptbench's clock, with no settle after it).
sync_of() { if [[ $1 == direct ]]; then echo "$direct_sync"; else echo fsync; fi; }
campaign_of() { if [[ ${2:-ckptbench} == ckptbench-reuse ]]; then echo "$run_dir/vs-fio-$1-reuse.toml"; else echo "$run_dir/vs-fio-$1.toml"; fi; }
for m in "${modes[@]}"; do
 for t in "${tools[@]}"; do
  direct=false; [[ $m == direct ]] && direct=true
  name="vs-fio-$m" reuse_bytes=0 verify=true
  if [[ $t == ckptbench-reuse ]]; then name="vs-fio-$m-reuse" reuse_bytes=$block verify=false; fi
  cat >"$(campaign_of "$m" "$t")" <<EOF
# Generated by benchmarks/vs_fio.sh: the ckptbench side of one fio comparison.
[campaign]
name = "$name"
target = "$data_dir/ckptbench"
create_target = true
overwrite = true
keep = true
iterations = 1
warmup = $warmup

[model]
name = "$model"

[parallel]
tp = 1
pp = 1
dp = 1
vocab_divisor = 1

[state]
scope = "weights"

[strategy]
mapping = "file_per_rank"
alignment = "4 KiB"
chunk_bytes = $block
coalesce_bytes = $(( bytes * 2 ))

[backend]
name = "$backend"
direct = $direct
sync = "$(sync_of "$m")"
threads = 1
queue_depth = $queue_depth

[data]
verify = $verify

[memory]
reuse_bytes = $reuse_bytes

[cache]
policy = "fadvise"
EOF
  "$ck" run "$(campaign_of "$m" "$t")" --dry-run >"$run_dir/dry-run-$m-$t.txt"
  extents=$(py dry-run-extents "$run_dir/dry-run-$m-$t.txt")
  (( extents == bytes / block )) ||
    die "ckptbench plans $extents extents for $m, not bytes / block = $(( bytes / block )) (see $run_dir/dry-run-$m-$t.txt)"
 done
done

records="$run_dir/records.jsonl"
: >"$records"

fio_cmd=()
set_fio_cmd() {  # mode op file: fills fio_cmd
  local direct=0
  [[ $1 == direct ]] && direct=1
  fio_cmd=("$fio_bin" --ioengine="$engine" --rw="$2" --bs="$block" --size="$bytes" --direct="$direct")
  if [[ $engine == io_uring ]]; then fio_cmd+=(--iodepth="$iodepth"); fi
  if [[ $2 == write && $(sync_of "$1") == fsync ]]; then fio_cmd+=(--end_fsync=1); fi
  # fallocate=none: fio would otherwise preallocate the file before its clock starts, which
  # ckptbench (backend.fallocate = false) does not do; both then allocate while writing.
  # fadvise_hint=0: fio would otherwise call posix_fadvise(POSIX_FADV_SEQUENTIAL) on the file,
  # which doubles the kernel's readahead window for buffered reads; ckptbench gives no hint.
  fio_cmd+=(--fallocate=none --fadvise_hint=0 --numjobs=1 --output-format=json)
  # fio caps a sync engine's queue depth at 1 but still allocates and fills iodepth buffers.
  if (( fio_footprint )); then fio_cmd+=(--iodepth=$(( bytes / block ))); fi
  if (( warmup )); then
    # Like ckptbench's warm-up iteration: a write to a fresh file that is deleted when done,
    # or a read of the same file (the measured job's invalidate=1 then evicts it again).
    if [[ $2 == write ]]; then
      fio_cmd+=(--name=warmup --filename="$3.warmup" --unlink=1)
    else
      fio_cmd+=(--name=warmup --filename="$3")
    fi
    fio_cmd+=(--name=vs-fio --stonewall --filename="$3")
  else
    fio_cmd+=(--name=vs-fio --filename="$3")
  fi
}

run_fio() {  # mode op rep [unrecorded]
  local file="$data_dir/fio-$1.dat" out="$run_dir/fio-$1-$2-$3.json"
  [[ $2 == write ]] && rm -f "$file"
  set_fio_cmd "$1" "$2" "$file"
  drop_caches settle
  "${fio_cmd[@]}" --output="$out" >/dev/null || { echo "vs_fio: fio failed; see $out" >&2; exit 1; }
  [[ -n ${4:-} ]] && return 0
  py record fio "$1" "$2" "$3" "$out" "$records" "$bytes" "$(( bytes / block ))"
}

run_ckptbench() {  # mode op rep tool [extra ckptbench arguments...]
  local mode=$1 op=$2 rep=$3 tool=$4
  shift 4
  local out="$run_dir/$tool-$mode-$op-$rep" phase=checkpoint name="vs-fio-$mode"
  [[ $op == read ]] && phase=restore
  [[ $tool == ckptbench-reuse ]] && name="vs-fio-$mode-reuse"
  # ckptbench would delete the previous checkpoint itself, after the cache drop; delete it
  # first, as for fio.
  [[ $op == write ]] && rm -rf "${data_dir:?}/ckptbench/$name" "$data_dir/null/$name"
  if [[ $tool == null ]]; then drop_caches; else drop_caches settle; fi
  "$ck" run "$(campaign_of "$mode" "$tool")" --phase "$phase" --output "$out" "$@" >"$out.log" 2>&1 ||
    { echo "vs_fio: ckptbench failed:" >&2; cat "$out.log" >&2; exit 1; }
  [[ $rep == 0 ]] && return 0  # the unmeasured write before a read row
  py record "$tool" "$mode" "$op" "$rep" "$out" "$records" "$bytes" "$(( bytes / block ))"
}

# One round of a row: fio and each ckptbench variant once, the order rotated by the round so
# that none of them always runs first (drift in the machine then spreads over all of them).
run_round() {  # mode op rep
  local order=(fio "${tools[@]}") n k
  n=${#order[@]}
  for (( k = 0; k < n; ++k )); do
    local t=${order[$(( (k + $3 - 1) % n ))]}
    if [[ $t == fio ]]; then run_fio "$1" "$2" "$3"; else run_ckptbench "$1" "$2" "$3" "$t"; fi
  done
}

kernel=$(uname -r)
fs_type=$(df --output=fstype "$data_dir" | tail -1)
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "vs_fio: $bytes bytes per run ($(( bytes / block )) requests of $block bytes), $reps rounds per row (${tools[*]} against fio),"
echo "        rows ${rows[*]}, direct sync $direct_sync, settle ${settle}s, warm-up $warmup, fio footprint $fio_footprint, engine $engine (queue depth $queue_depth, ckptbench backend $backend);
        kernel $kernel, $fs_type at $data_dir;"
echo "        ckptbench $ckptbench (rev $rev), $("$fio_bin" --version); files in $run_dir"
for m in "${modes[@]}"; do
  set_fio_cmd "$m" write "$data_dir/fio-$m.dat"
  echo "  $m: ${fio_cmd[*]}"
  for t in "${tools[@]}"; do
    echo "  $m: ckptbench run $(campaign_of "$m" "$t") --phase checkpoint|restore   ($(( bytes / block )) extents planned)"
  done
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

written=" "
for r in "${rows[@]}"; do
  m=${r%-*} op=${r#*-}
  if [[ $op == read && $written != *" $m "* ]]; then
    # Each tool reads the file it wrote last in this mode: write one first, unmeasured.
    run_fio "$m" write 0 unrecorded
    for t in "${tools[@]}"; do run_ckptbench "$m" write 0 "$t"; done
  fi
  for (( i = 1; i <= reps; ++i )); do run_round "$m" "$op" "$i"; done
  [[ $op == write ]] && written+="$m "
done
for m in "${modes[@]}"; do
  for (( i = 1; i <= null_reps; ++i )); do
    run_ckptbench "$m" write "$i" null --set backend.name=null --set "campaign.target=$data_dir/null"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

meta=$("$PY" -c '
import json, sys
a = sys.argv[1:]
print(json.dumps({"bytes": int(a[0]), "block": int(a[1]), "reps": int(a[2]), "rows": a[3].split(","),
                  "direct_sync": a[4], "settle_seconds": float(a[5]), "warmup": int(a[6]), "kernel": a[7],
                  "fs_type": a[8], "ckptbench_rev": a[9], "fio": a[10], "data_dir": a[11],
                  "fio_footprint": int(a[12]), "tools": a[13].split(","),
                  "modes": a[14].split(",")}))' \
  "$bytes" "$block" "$reps" "$(IFS=,; echo "${rows[*]}")" "$direct_sync" "$settle" "$warmup" "$kernel" \
  "$fs_type" "$rev" "$("$fio_bin" --version)" "$data_dir" "$fio_footprint" "$(IFS=,; echo "${tools[*]}")" \
  "$(IFS=,; echo "${modes[*]}")")
# Target: >= 0.95x fio, psync engine (posix) and io_uring engine (uring) alike.
write_target=0.95
py summary "$records" "$run_dir/summary.json" "$write_target" 0.02 "$meta"
exit 0
