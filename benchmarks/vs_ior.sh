#!/usr/bin/env bash
# ckptbench against IOR under mpirun: the same bytes (4 processes × 256 MiB = 1 GiB), 1 MiB
# transfers, fsync inside the timing, caches dropped (and a settle pause) before every run. Each
# round runs IOR, ckptbench and ckptbench with IOR's footprint (memory.reuse_bytes = 1 MiB) once,
# in rotating order; prints every run, each pair's ratio and medians [min, max]. See
# benchmarks/README.md, "vs_ior.sh".
set -euo pipefail

usage() {
  cat <<'EOF'
usage: IOR=/path/to/ior benchmarks/vs_ior.sh [options]   (root: it drops the page cache)
  --pairs N          rounds per row (default 5; --reps: the same)
  --rows LIST        comma-separated rows (default mpiio-shared-collective; all: every row):
                     posix-fpp-buffered, posix-shared-buffered, posix-fpp-direct,
                     posix-shared-direct, mpiio-fpp-independent, mpiio-shared-independent,
                     mpiio-shared-collective
  --no-footprint     skip the ckptbench runs with IOR's footprint (memory.reuse_bytes = 1 MiB,
                     data.verify = false: one reused buffer per process, as IOR)
  --settle SECONDS   pause after each cache drop (default 3; see benchmarks/README.md)
  --ior-footprint    give IOR as much touched memory per process as ckptbench holds
                     (IOR -O memoryPerTask=256m; IOR still writes from its one 1 MiB buffer)
  --no-reads         writes only
  --dir DIR          data and results (default build/vs_ior)
  --ckptbench PATH   default build/bin/ckptbench
Without IOR= it prints how to build IOR and exits 0.
EOF
}

die() { echo "vs_ior.sh: $*" >&2; exit 2; }

reps=5 rows_arg="mpiio-shared-collective" settle=3 footprint=0 reuse=1 reads=1 dir="build/vs_ior" ck="build/bin/ckptbench"
while (( $# )); do
  case $1 in
    --pairs|--reps) reps=$2; shift 2 ;;
    --rows) rows_arg=$2; shift 2 ;;
    --no-footprint) reuse=0; shift ;;
    --settle) settle=$2; shift 2 ;;
    --ior-footprint) footprint=1; shift ;;
    --no-reads) reads=0; shift ;;
    --dir) dir=$2; shift 2 ;;
    --ckptbench) ck=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option \`$1'" ;;
  esac
done

if [[ -z ${IOR:-} ]]; then
  cat <<'EOF'
vs_ior.sh: IOR= is not set, so nothing was run. IOR is not a Debian package; build it from its
public source (https://github.com/hpc/ior) outside this repository, then run again:

  git clone https://github.com/hpc/ior /tmp/ior && cd /tmp/ior
  ./bootstrap && ./configure && make -j2        # needs autoconf, automake, libtool, mpicc
  IOR=/tmp/ior/src/ior sudo -E benchmarks/vs_ior.sh
EOF
  exit 0
fi
[[ -x $IOR ]] || die "IOR=$IOR is not an executable file (build IOR: run without IOR= for how)"
[[ -x $ck ]] || die "$ck not found: build ckptbench first (cmake --build --preset default)"
command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin)"
[[ $(id -u) == 0 ]] || die "must run as root: every run drops the page cache (/proc/sys/vm/drop_caches)"
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer (got $reps)"
[[ $settle =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--settle must be a number of seconds (got $settle)"

repo=$(cd "$(dirname "$0")/.." && pwd)
campaign="$repo/configs/vs-ior.toml"
[[ -f $campaign ]] || die "$campaign not found"

# row -> "ior-api ior-flags | ckptbench --set overrides"
declare -A IOR_FLAGS CK_SETS
IOR_FLAGS[posix-fpp-buffered]="-a POSIX -F";           CK_SETS[posix-fpp-buffered]="backend.name=posix strategy.mapping=file_per_rank backend.direct=false"
IOR_FLAGS[posix-shared-buffered]="-a POSIX";           CK_SETS[posix-shared-buffered]="backend.name=posix strategy.mapping=shared_file backend.direct=false"
IOR_FLAGS[posix-fpp-direct]="-a POSIX -F --posix.odirect"; CK_SETS[posix-fpp-direct]="backend.name=posix strategy.mapping=file_per_rank backend.direct=true"
IOR_FLAGS[posix-shared-direct]="-a POSIX --posix.odirect"; CK_SETS[posix-shared-direct]="backend.name=posix strategy.mapping=shared_file backend.direct=true"
IOR_FLAGS[mpiio-fpp-independent]="-a MPIIO -F";        CK_SETS[mpiio-fpp-independent]="backend.name=mpiio strategy.mapping=file_per_rank backend.mpiio.collective=false"
IOR_FLAGS[mpiio-shared-independent]="-a MPIIO";        CK_SETS[mpiio-shared-independent]="backend.name=mpiio strategy.mapping=shared_file backend.mpiio.collective=false"
IOR_FLAGS[mpiio-shared-collective]="-a MPIIO -c";      CK_SETS[mpiio-shared-collective]="backend.name=mpiio strategy.mapping=shared_file backend.mpiio.collective=true"
all_rows=(posix-fpp-buffered posix-shared-buffered posix-fpp-direct posix-shared-direct
          mpiio-fpp-independent mpiio-shared-independent mpiio-shared-collective)
if [[ $rows_arg == all ]]; then rows=("${all_rows[@]}"); else IFS=, read -r -a rows <<<"$rows_arg"; fi
for r in "${rows[@]}"; do [[ -n ${IOR_FLAGS[$r]:-} ]] || die "--rows: unknown row \`$r' (see --help)"; done

procs=4 block="256m" transfer="1m" bytes=$(( 1 << 30 ))
mpi=(mpirun --allow-run-as-root --oversubscribe -np "$procs")

run_dir="$dir/run-$(date -u +%Y%m%d-%H%M%S)"
data="$dir/data"
mkdir -p "$run_dir" "$data"
run_dir=$(cd "$run_dir" && pwd) data=$(cd "$data" && pwd)
cp "$ck" "$run_dir/ckptbench"   # a rebuild during the run cannot change it
ck="$run_dir/ckptbench"
records="$run_dir/records.jsonl"
: >"$records"
cleanup() { rm -rf "$data"; }
trap cleanup EXIT

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; sleep "$settle"; }

# One ckptbench campaign for all rows: configs/vs-ior.toml with the data under $data.
# cache.policy = "fadvise" before a restore: the script's drop and settle come first, as for
# IOR; "drop" would drop the caches once more right before ckptbench's clock, unsettled.
ck_campaign="$run_dir/vs-ior.toml"
sed -e "s|^target = .*|target = \"$data/ckptbench\"|" -e 's|^mapping = .*|mapping = "file_per_rank"|' \
    -e "s|^name = \"configs/models/vs-ior-1gib.toml\"|name = \"$repo/configs/models/vs-ior-1gib.toml\"|" \
    -e 's|^policy = "drop"|policy = "fadvise"|' \
    -e 's|^\[campaign\]|[campaign]\nkeep = true|' "$campaign" >"$ck_campaign"
tools=(ior ckptbench)
(( reuse )) && tools+=(ckptbench-reuse)
# IOR's footprint for ckptbench: one 1 MiB buffer per process that every transfer reuses.
reuse_sets=(--set memory.reuse_bytes=1MiB --set data.verify=false --set campaign.name=vs-ior-reuse)
sets_of() { local s; for s in ${CK_SETS[$1]}; do printf -- '--set\n%s\n' "$s"; done; }
for r in "${rows[@]}"; do
  mapfile -t sets < <(sets_of "$r")
  "$ck" run "$ck_campaign" "${sets[@]}" --dry-run >"$run_dir/dry-run-$r.txt" 2>&1 ||
    die "ckptbench --dry-run failed for $r (see $run_dir/dry-run-$r.txt)"
done

py() { python3 - "$@" <<'PYEOF'
import glob, json, os, statistics, sys
cmd, args = sys.argv[1], sys.argv[2:]
GIB = float(1 << 30)
if cmd == "ior":   # row op rep json-file expected-bytes
    row, op, rep, path, expect = args
    res = json.load(open(path))["tests"][0]["Results"]
    res = [x for x in (res[0] if isinstance(res[0], list) else res) if x["access"] == op][0]
    s = [x for x in json.load(open(path))["summary"] if x["operation"] == op][0]
    moved = int(round(s["xsizeMiB"] * (1 << 20)))
    if moved != int(expect): sys.exit(f"IOR moved {moved} bytes, not {expect} ({path})")
    print(json.dumps({"row": row, "op": op, "rep": int(rep), "tool": "ior", "gib_per_s": res["bwMiB"] / 1024,
                      "seconds": res["totalTime"], "open": res["openTime"], "transfer": res["wrRdTime"],
                      "close": res["closeTime"]}))
elif cmd == "ck":  # row op rep out-dir expected-bytes tool
    row, op, rep, out, expect, tool = args
    files = glob.glob(os.path.join(out, "*", "results.jsonl"))
    if len(files) != 1: sys.exit(f"expected one results.jsonl under {out}, found {len(files)}")
    r = json.loads(open(files[0]).readline())
    if r["status"] != "ok": sys.exit(f"ckptbench run failed: {r.get('error')} ({files[0]})")
    if r["bytes_per_checkpoint"] != int(expect): sys.exit(f"ckptbench moved {r['bytes_per_checkpoint']} bytes ({files[0]})")
    ph = r["phases"][op]
    print(json.dumps({"row": row, "op": op, "rep": int(rep), "tool": tool, "gib_per_s": r[op + "_gib_per_s"],
                      "seconds": r[op + "_seconds"], "mkdir": ph.get("mkdir", 0), "open": ph["open"],
                      "transfer": ph["transfer"], "sync": ph["sync"], "close": ph["close"],
                      "process_seconds": r["per_process"][op + "_seconds"]}))
elif cmd == "line":
    x = json.loads(args[0])
    s = f"  {x['row']:<26} {x['op']:<5} round {x['rep']:>2} {x['tool']:<15} {x['gib_per_s']:7.3f} GiB/s {x['seconds']:7.3f} s"
    if "sync" in x:
        s += f"  (mkdir {x['mkdir']*1e3:.1f} ms, open {x['open']*1e3:.1f} ms, transfer {x['transfer']:.3f} s, sync {x['sync']:.3f} s, close {x['close']*1e3:.1f} ms)"
    else:
        s += f"  (open {x['open']*1e3:.1f} ms, transfer {x['transfer']:.3f} s, close {x['close']*1e3:.1f} ms)"
    print(s)
elif cmd == "summary":
    records, meta = args
    recs = [json.loads(l) for l in open(records) if l.strip()]
    rows = list(dict.fromkeys(r["row"] for r in recs))
    out = {"meta": json.loads(meta), "rows": [], "records": recs}
    print("\nsummary: GiB/s median [min, max]; pair ratio = ckptbench / IOR of the same round, median [min, max]")
    print("  (ckptbench-reuse: memory.reuse_bytes = 1 MiB, IOR's footprint)")
    print(f"  {'row':<26} {'op':<5} {'tool':<15} {'IOR':>22} {'ckptbench':>22} {'pair ratio':>24}")
    for row in rows:
        for op in ("write", "read"):
            ior = {r["rep"]: r["gib_per_s"] for r in recs if r["row"] == row and r["op"] == op and r["tool"] == "ior"}
            for tool in ("ckptbench", "ckptbench-reuse"):
                ck = {r["rep"]: r["gib_per_s"] for r in recs if r["row"] == row and r["op"] == op and r["tool"] == tool}
                pairs = [ck[k] / ior[k] for k in ior if k in ck and ior[k] > 0]
                if not pairs: continue
                f = lambda v: f"{statistics.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"
                verdict = "" if op == "read" else ("  ok" if statistics.median(pairs) >= 0.95 else "  BELOW 0.95")
                print(f"  {row:<26} {op:<5} {tool:<15} {f(list(ior.values())):>22} {f(list(ck.values())):>22} "
                      f"{f(pairs):>24}{verdict}")
                print(f"  {'':<26} {'':<5} {'':<15} pair ratios: " + " ".join(f"{p:.3f}" for p in pairs))
                out["rows"].append({"row": row, "op": op, "tool": tool, "ior": list(ior.values()),
                                    "ckptbench": list(ck.values()), "pair_ratios": pairs,
                                    "median_ratio": statistics.median(pairs)})
    json.dump(out, open(os.path.join(os.path.dirname(records), "summary.json"), "w"), indent=1)
PYEOF
}

footprint_flag=()
(( footprint )) && footprint_flag=(-O "memoryPerTask=$block")
echo "vs_ior.sh: $procs processes x $block, transfer $transfer, $reps pairs per row, settle ${settle}s; results in $run_dir"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run_ior() {  # row rep
  local r=$1 rep=$2 tag="$run_dir/$1-$2" iflags base
  read -r -a iflags <<<"${IOR_FLAGS[$r]}"
  rm -rf "$data/ior"; mkdir -p "$data/ior"
  base=(-t "$transfer" -b "$block" -i 1 -k -o "$data/ior/file" "${iflags[@]}")
  # IOR: write (kept), then, after a drop, read of what it wrote.
  drop
  "${mpi[@]}" "$IOR" -w -e "${base[@]}" "${footprint_flag[@]}" -O summaryFormat=JSON -O summaryFile="$tag-ior-write.json" \
    >"$tag-ior-write.log" 2>&1 || { echo "IOR write failed: $tag-ior-write.log" >&2; exit 1; }
  rec=$(py ior "$r" write "$rep" "$tag-ior-write.json" "$bytes") || exit 1
  echo "$rec" >>"$records"; py line "$rec"
  if (( reads )); then
    drop
    "${mpi[@]}" "$IOR" -r "${base[@]}" "${footprint_flag[@]}" -O summaryFormat=JSON -O summaryFile="$tag-ior-read.json" \
      >"$tag-ior-read.log" 2>&1 || { echo "IOR read failed: $tag-ior-read.log" >&2; exit 1; }
    rec=$(py ior "$r" read "$rep" "$tag-ior-read.json" "$bytes") || exit 1
    echo "$rec" >>"$records"; py line "$rec"
  fi
  rm -rf "$data/ior"
}

run_ck() {  # row rep tool: the checkpoint (kept), then, after a drop, its restore
  local r=$1 rep=$2 tool=$3 tag="$run_dir/$1-$2-$3" sets extra=()
  mapfile -t sets < <(sets_of "$r")
  [[ $tool == ckptbench-reuse ]] && extra=("${reuse_sets[@]}")
  rm -rf "$data/ckptbench"
  drop
  "${mpi[@]}" "$ck" run "$ck_campaign" "${sets[@]}" "${extra[@]}" --phase checkpoint --output "$tag-write" \
    >"$tag-write.log" 2>&1 || { echo "ckptbench write failed: $tag-write.log" >&2; exit 1; }
  rec=$(py ck "$r" write "$rep" "$tag-write" "$bytes" "$tool") || exit 1
  echo "$rec" >>"$records"; py line "$rec"
  if (( reads )); then
    drop
    "${mpi[@]}" "$ck" run "$ck_campaign" "${sets[@]}" "${extra[@]}" --phase restore --output "$tag-read" \
      >"$tag-read.log" 2>&1 || { echo "ckptbench read failed: $tag-read.log" >&2; exit 1; }
    rec=$(py ck "$r" read "$rep" "$tag-read" "$bytes" "$tool") || exit 1
    echo "$rec" >>"$records"; py line "$rec"
  fi
  rm -rf "$data/ckptbench"
}

for r in "${rows[@]}"; do
  for (( rep = 1; rep <= reps; ++rep )); do
    # The order rotates by round, so that no tool always runs first.
    n=${#tools[@]}
    for (( k = 0; k < n; ++k )); do
      t=${tools[$(( (k + rep - 1) % n ))]}
      if [[ $t == ior ]]; then run_ior "$r" "$rep"; else run_ck "$r" "$rep" "$t"; fi
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
py summary "$records" "{\"reps\": $reps, \"settle\": $settle, \"ior_footprint\": $footprint, \"reuse\": $reuse, \"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
