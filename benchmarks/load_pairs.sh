#!/usr/bin/env bash
# Two ckptbench binaries (e.g. before and after a loader change) on the load part of
# restore_scenarios.sh: the same-layout TP 8 load against the TP 8 -> inference TP 4 load (Llama 3
# 8B or 70B weights, safetensors, caches dropped, 5 timed loads after 1 warm-up a run), PAIRS
# pairs, the binaries' order swapped every pair; prints each run and the medians and ratios.
#   benchmarks/load_pairs.sh BEFORE_BIN AFTER_BIN OUT [8b|70b] [PAIRS]     # from the repository root
set -euo pipefail
before=$1 after=$2 out=$3 model=${4:-8b} pairs=${5:-5}
config=configs/restore-scenarios.toml
args=(--set campaign.name=load-llama3-$model --set state.scope=weights --set parallel.pp=1 --set ranks.select=all
      --set strategy.format=safetensors)
[ "$model" = 70b ] && args+=(--set model.name=llama3-70b --set model.scale=128)
mkdir -p "$out"
"$after" run "$config" --phase checkpoint --output "$out/write" "${args[@]}" --set campaign.iterations=1 --set campaign.warmup=0 >/dev/null
one() {  # label bin extra...
  local label=$1 bin=$2
  shift 2
  "$bin" run "$config" --phase load --output "$out/$label" "${args[@]}" "$@" -q >/dev/null
  python3 - "$label" "$out/$label" <<'PY' | tee -a "$out/lines.txt"
import glob, json, sys
label, folder = sys.argv[1], sys.argv[2]
r = json.loads(open(sorted(glob.glob(folder + "/*/results.jsonl"))[-1]).readline())
l = r["load"]
print(f"{label} {r['status']} {r['verified']} {l['gib_per_s']:.4f} requests={l['requests']} reads={l.get('reads', '-')} "
      f"samples={','.join(f'{x:.3f}' for x in l['samples']['gib_per_s'])}")
PY
}
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for b in $order; do
    bin=$before; [ "$b" = after ] && bin=$after
    one "$b-same-$i" "$bin"
    one "$b-tp4-$i" "$bin" --set load.tp=4
  done
done
python3 - "$out/lines.txt" <<'PY'
import statistics as st, sys, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    b, kind, _ = f[0].split("-")
    v[(b, kind)].append(float(f[3]))
for b in ("before", "after"):
    s, t = v[(b, "same")], v[(b, "tp4")]
    ratios = [x / y for x, y in zip(t, s)]
    print(f"{b}: same-layout median {st.median(s):.3f} GiB/s {s}; TP4 median {st.median(t):.3f} GiB/s {t}; "
          f"ratio of medians {st.median(t) / st.median(s):.2f}; median of pair ratios {st.median(ratios):.2f}")
print(f"after/before TP4: {st.median(v[('after','tp4')]) / st.median(v[('before','tp4')]):.2f}; "
      f"same: {st.median(v[('after','same')]) / st.median(v[('before','same')]):.2f}")
PY
