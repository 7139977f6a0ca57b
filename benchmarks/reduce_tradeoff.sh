#!/usr/bin/env bash
# Full vs selective vs delta vs compressed checkpoints of one model, side by side.
#
# Each round runs the four strategies in a rotating order (so that none always runs first), each
# twice: under the async training engine ([training] with engine.name = "async", --phase
# checkpoint, then --phase restore of its last checkpoint, verified), for the loop's stall, time to
# durable and bytes written per checkpoint; and as
# the harness's own checkpoints (--phase checkpoint, then --phase restore of the newest), for the
# bytes each checkpoint writes, the restore's time and its read amplification (bytes read per
# byte restored; a delta reads its base's pieces whole and its changed runs over them). A
# strategy a run refuses (exit 2) is printed as refused, with the reason. Prints every run, then
# per strategy the median over the rounds [min, max]. This is a benchmark, not a test: it exits 0
# whatever the figures are, and 2 only for bad options or a missing binary.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: benchmarks/reduce_tradeoff.sh [options] [-- ckptbench run options...]

  --model NAME       model.name (a zoo name or a model file; default llama3-8b)
  --scale N          model.scale (default 256)
  --rounds N         rounds of the four strategies (default 3)
  --every N          selective_every and delta_every (default 4)
  --iterations N     checkpoints per run, loop and harness alike (default: --every, so that the
                     restore reads the last checkpoint of a full delta chain)
  --codec NAME       strategy.compression of the compressed runs (default bytegroup)
  --binary PATH      the ckptbench program (default build/bin/ckptbench)
  --dir DIR          where checkpoints and results go (default a temporary directory, removed)
  -- ARGS            more `ckptbench run` options for every run (e.g. --set backend.name=uring)
EOF
}

model=llama3-8b
scale=256
rounds=3
every=4
iterations=""
codec=bytegroup
binary=build/bin/ckptbench
dir=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --every) every="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --codec) codec="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "reduce_tradeoff.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$iterations" ] || iterations="$every"
[ -x "$binary" ] || { echo "reduce_tradeoff.sh: $binary is not an executable ckptbench (--binary PATH)" >&2; exit 2; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
[ -n "$dir" ] || dir="$scratch/work"
mkdir -p "$dir"

strategies=(full selective delta compressed)
strategy_keys() {
  case "$1" in
    full) ;;
    selective) echo "--set strategy.selective_every=$every" ;;
    delta) echo "--set strategy.delta_every=$every" ;;
    compressed) echo "--set strategy.compression=$codec" ;;
  esac
}

config="$dir/tradeoff.toml"
cat >"$config" <<EOF
[campaign]
name = "tradeoff"
target = "$dir/target"
create_target = true
keep = true
iterations = $iterations
warmup = 0
[model]
name = "$model"
scale = $scale
[state]
scope = "full"
[data]
pattern = "trained"
[cache]
policy = "drop"
EOF

# One `ckptbench run` of strategy $1 into results directory $2 with the options after them; its
# exit status, and its stderr's last line in $dir/$2.err.
run_one() {
  local strategy="$1" name="$2"
  shift 2
  local -a keys
  read -r -a keys <<<"$(strategy_keys "$strategy")"
  rm -rf "$dir/target"
  "$binary" run "$config" --output "$dir/$name" -q "${keys[@]}" "$@" "${extra[@]}" \
    >/dev/null 2>"$dir/$name.err"
}

rows="$dir/rows.jsonl"
: >"$rows"
for ((round = 0; round < rounds; round++)); do
  for ((k = 0; k < ${#strategies[@]}; k++)); do
    s=${strategies[$(((round + k) % ${#strategies[@]}))]}
    loop="r$round-$s-async"
    written="r$round-$s-write"
    loop_status=0 write_status=0 restore_status=0
    loop_keys=(--set training.iterations="$iterations" --set training.iteration_seconds=0.5
      --set engine.name=async)
    run_one "$s" "$loop" --phase checkpoint "${loop_keys[@]}" || loop_status=$?
    if [ "$loop_status" = 0 ]; then
      "$binary" run "$config" --output "$dir/$loop-restore" -q --phase restore \
        $(strategy_keys "$s") "${loop_keys[@]}" "${extra[@]}" >/dev/null \
        2>"$dir/$loop-restore.err" || loop_status=$?
    fi
    run_one "$s" "$written" --phase checkpoint || write_status=$?
    if [ "$write_status" = 0 ]; then
      "$binary" run "$config" --output "$dir/$written-restore" -q --phase restore \
        $(strategy_keys "$s") "${extra[@]}" >/dev/null 2>"$dir/$written-restore.err" ||
        restore_status=$?
    fi
    python3 - "$dir" "$round" "$s" "$loop" "$loop_status" "$written" "$write_status" \
      "$restore_status" >>"$rows" <<'PY'
import glob, json, statistics, sys
d, rnd, s, loop, loop_rc, written, write_rc, restore_rc = sys.argv[1:]
def record(name):
    paths = sorted(glob.glob(f"{d}/{name}/*/results.jsonl"))
    return json.loads(open(paths[-1]).readline()) if paths else None
def reason(name):
    import os
    for err in (f"{d}/{name}-restore.err", f"{d}/{name}.err"):
        lines = [l.strip() for l in open(err) if l.strip()] if os.path.exists(err) else []
        if lines:
            return lines[-1]
    return "no message"
def bytes_written(w):
    z, c = w.get("selective"), w.get("compression")
    if z:
        return statistics.median(z["samples"]["written_bytes"])
    if c:
        return c["stored_bytes"]
    return w["bytes_per_checkpoint"]
row = {"round": int(rnd), "strategy": s}
if loop_rc == "0" and (record(loop + "-restore") or {}).get("verified"):
    w = record(loop)
    t = w["training"]
    row["stall_s"] = t["stall_seconds"]
    row["durable_s"] = t["time_to_durable_seconds"]
    row["async_written"] = bytes_written(w) / w["bytes_per_checkpoint"]
else:
    row["async_refused"] = reason(loop)
if write_rc == "0" and restore_rc == "0":
    w, r = record(written), record(written + "-restore")
    full = w["bytes_per_checkpoint"]
    written_bytes = bytes_written(w)
    row["full_bytes"] = full
    row["written_bytes"] = written_bytes
    row["restore_s"] = r["read_seconds"]
    zr = (r.get("selective") or {}).get("restore") or {}
    row["amplification"] = zr.get("amplification") or 1.0
    row["chain"] = zr.get("chain_length", 1)
else:
    row["refused"] = reason(written if write_rc != "0" else written + "-restore")
print(json.dumps(row))
PY
    tail -n 1 "$rows"
  done
done

python3 - "$rows" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def spread(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.4g} [{min(values):.4g}, {max(values):.4g}]"
print()
print("median over rounds [min, max]; bytes written: the median checkpoint's, as a share of a full one")
for s in ["full", "selective", "delta", "compressed"]:
    mine = [r for r in rows if r["strategy"] == s]
    print(f"\n{s}:")
    refused = {r["async_refused"] for r in mine if "async_refused" in r}
    if refused:
        print(f"  async engine: refused: {sorted(refused)[0]}")
    else:
        print(f"  async stall s        {spread([r['stall_s'] for r in mine])}")
        print(f"  async to durable s   {spread([r['durable_s'] for r in mine])}")
        print(f"  async bytes written  {spread([r['async_written'] for r in mine])}")
    ok = [r for r in mine if "written_bytes" in r]
    if not ok:
        print(f"  harness checkpoints: refused: {mine[0].get('refused', '-')}")
        continue
    print(f"  bytes written        {spread([r['written_bytes'] / r['full_bytes'] for r in ok])}")
    print(f"  restore s            {spread([r['restore_s'] for r in ok])}")
    print(f"  read amplification   {spread([r['amplification'] for r in ok])}")
    print(f"  restore chain        {spread([r['chain'] for r in ok])}")
PY
