#!/usr/bin/env bash
# The GPU checks, run on a machine with an NVIDIA GPU and driver (an H200 with CUDA 13) but no
# compiler, no Debian packages and no network: it runs what ci/build-device.sh built here.
#
#   ci/build-device.sh                    # here: build-device/bin, build-device/lib
#   ci/device-check.sh [OUT]              # there, from the repository root (OUT: default $OUT)
#
# Carry build-device/bin, build-device/lib and .deps/cufile to the GPU machine. Steps, each
# with its own timeout and recorded in OUT/device-check.json whatever happens to the others:
#   gpu          nvidia-smi: GPU name, driver, memory
#   cufile       finds libcufile (the machine's nvidia-cufile wheel first, else the carried
#                one), exports CKPT_CUFILE_LIBRARY; without a cufile.json of the user's, writes
#                one allowing compatibility mode, logging into OUT
#   backends     ckptbench backends --json: is gds available, and if not, why
#   gds_tests    the gds backend's GoogleTest cases (round trips of cudaMalloc'd memory)
#   cuda_tests   the CUDA memory-space cases of every test program that has them
#   campaign     ckptbench run configs/device-check.toml: cuda memory through posix and null
#                (staged through pinned host buffers) and through gds (compatibility mode)
#   engines      the same state in a training loop with training.compute = "gpu" (the busy
#                kernel beside the copies): engine async and lazy over posix
#   load_cuda    ckptbench load --memory cuda --method pipelined of a safetensors checkpoint, then
#                ckptbench run --phase load of it into device memory at inference TP 2
#   memory_bench D2H/H2D staging against plain cudaMemcpy, when a memory benchmark was built
# The whole check stays under 8 minutes: a step that would overrun is cut short or skipped.
set -uo pipefail  # no -e: a failing step is recorded, and the next one runs

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${OUT:-$root/device-check-out}}"
build="${CKPT_DEVICE_BUILD:-$root/build-device}"
bin="$build/bin"
mkdir -p "$out/logs"
steps="$out/steps.tsv"
: >"$steps"
start=$(date +%s)
budget=450  # seconds for all steps: 7.5 minutes, leaving time for the summary
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# step NAME TIMEOUT COMMAND...: runs COMMAND with a timeout cut to what is left of the budget,
# its output in OUT/logs/NAME.log; records name, status, exit code and seconds.
step() {
  local name="$1" limit="$2"
  shift 2
  local left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt 10 ]; then
    printf '%s\tskipped\t\t0\tout of time\n' "$name" >>"$steps"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit="$left"
  local began rc status
  began=$(date +%s%N)
  timeout --kill-after=5 "$limit" "$@" >"$out/logs/$name.log" 2>&1
  rc=$?
  case "$rc" in
    0) status=ok ;;
    124 | 137) status=timeout ;;
    *) status=failed ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$((($(date +%s%N) - began) / 1000000))e-3" \
    "timeout ${limit}s" >>"$steps"
  echo "device-check: $name: $status (exit $rc)"
  return 0
}

# skip NAME WHY: records a step that could not run.
skip() { printf '%s\tskipped\t\t0\t%s\n' "$1" "$2" >>"$steps"; echo "device-check: $1: skipped ($2)"; }

# The programs' C++ runtime: the machine's own libstdc++, or the carried one (lib/compat) when
# the machine's is too old for them.
cxx_runtime="system"
if [ -x "$bin/ckptbench" ] && ! "$bin/ckptbench" --help >/dev/null 2>"$out/logs/startup.log"; then
  export LD_LIBRARY_PATH="$build/lib/compat:$LD_LIBRARY_PATH"
  cxx_runtime="carried (lib/compat)"
  "$bin/ckptbench" --help >/dev/null 2>>"$out/logs/startup.log" || cxx_runtime="neither starts: see logs/startup.log"
fi
echo "device-check: C++ runtime: $cxx_runtime"

# The first libcufile.so.0 found: $CKPT_CUFILE_LIBRARY, the Python wheels (nvidia-cufile for
# CUDA 13 installs nvidia/cu13/lib, nvidia-cufile-cu12 nvidia/cufile/lib), the usual prefixes,
# then the copy ci/setup.sh put into .deps/cufile and the device check carried along.
find_cufile() {
  if [ -n "${CKPT_CUFILE_LIBRARY:-}" ] && [ -e "$CKPT_CUFILE_LIBRARY" ]; then
    echo "$CKPT_CUFILE_LIBRARY environment"
    return
  fi
  local found
  found="$(python3 - 2>/dev/null <<'EOF'
import glob, os, site, sys
roots = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
for root in roots:
    for sub in ("nvidia/cu13/lib", "nvidia/cufile/lib"):
        path = os.path.join(root, sub, "libcufile.so.0")
        if os.path.exists(path):
            print(path)
            sys.exit(0)
EOF
)"
  if [ -n "$found" ]; then echo "$found python-wheel"; return; fi
  found="$(find /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/lib/x86_64-linux-gnu /usr/local/lib \
    /opt /root/.local -maxdepth 6 -name 'libcufile.so.0' 2>/dev/null | head -n 1)"
  if [ -n "$found" ]; then echo "$found system"; return; fi
  for carried in "$root/.deps/cufile/nvidia/cu13/lib/libcufile.so.0" "$root/.deps/cufile/nvidia/cufile/lib/libcufile.so.0"; do
    if [ -e "$carried" ]; then echo "$carried carried"; return; fi
  done
}

# gpu
step gpu 30 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader

# cufile
read -r cufile_path cufile_origin < <(find_cufile)
if [ -n "$cufile_path" ]; then
  export CKPT_CUFILE_LIBRARY="$cufile_path"
  printf 'cufile\tok\t0\t0\t%s (%s)\n' "$cufile_path" "$cufile_origin" >>"$steps"
  echo "device-check: cufile: $cufile_path ($cufile_origin)"
else
  printf 'cufile\tfailed\t1\t0\tno libcufile.so.0 found\n' >>"$steps"
  echo "device-check: cufile: no libcufile.so.0 found"
fi
if [ -z "${CUFILE_ENV_PATH_JSON:-}" ] && [ ! -e /etc/cufile.json ]; then
  cat >"$out/cufile.json" <<EOF
{
  "logging": { "dir": "$out", "level": "ERROR" },
  "properties": { "allow_compat_mode": true }
}
EOF
  export CUFILE_ENV_PATH_JSON="$out/cufile.json"
fi
export CUFILE_LOGFILE_PATH="$out/cufile.log"

# backends
if [ -x "$bin/ckptbench" ]; then
  step backends 30 "$bin/ckptbench" backends --json
else
  skip backends "no $bin/ckptbench (run ci/build-device.sh and carry build-device/bin)"
fi

# gds_tests: the gds cases and the conformance suite's gds instances.
if [ -x "$bin/ckpt_backend_tests" ]; then
  step gds_tests 120 "$bin/ckpt_backend_tests" '--gtest_filter=Gds*:*gds*' --gtest_color=no \
    "--gtest_output=json:$out/gds_tests.json"
else
  skip gds_tests "no $bin/ckpt_backend_tests"
fi

# cuda_tests: the CUDA memory cases of every test program besides the backend one.
cuda_filter='--gtest_filter=*Cuda*:*cuda*:*Pinned*:*pinned*:*Stag*:*Device*'
cuda_ran=0
for program in "$bin"/ckpt_*tests; do
  [ -x "$program" ] || continue
  name="$(basename "$program")"
  [ "$name" = ckpt_backend_tests ] && continue
  if "$program" --gtest_list_tests "$cuda_filter" 2>/dev/null |
    grep -q '^  '; then
    step "cuda_tests_${name#ckpt_}" 90 "$program" "$cuda_filter" \
      --gtest_color=no "--gtest_output=json:$out/cuda_tests_${name#ckpt_}.json"
    cuda_ran=1
  fi
done
[ "$cuda_ran" = 1 ] || skip cuda_tests "no test program lists CUDA memory cases"

# campaign
if [ -x "$bin/ckptbench" ]; then
  mkdir -p "$out/results"
  step campaign 150 "$bin/ckptbench" run "$root/configs/device-check.toml" --output "$out/results" \
    --set "campaign.target=${CKPT_DEVICE_TARGET:-/tmp/ckptbench-device-check}"
else
  skip campaign "no $bin/ckptbench"
fi

# engines: async and lazy snapshots of device memory into the pinned pool while the GPU load
# kernel runs (configs/device-check.toml's header has the command).
if [ -x "$bin/ckptbench" ]; then
  step engines 120 "$bin/ckptbench" run "$root/configs/device-check.toml" --output "$out/results" \
    --set "campaign.target=${CKPT_DEVICE_TARGET:-/tmp/ckptbench-device-check}-engines" --set backend.name=posix \
    --set training.iterations=6 --set training.iteration_seconds=0.5 --set training.checkpoint_every=2 \
    --set training.compute=gpu --set 'engine.name=["async", "lazy"]'
else
  skip engines "no $bin/ckptbench"
fi

# load_cuda: inference weight loading into device memory: configs/device-check.toml's weights
# written once as safetensors from host memory (kept), then `ckptbench load` pipelined (4 O_DIRECT
# readers, 32 MiB chunks through pinned memory, each chunk's host -> device copy overlapping the
# next reads), verified by device kernels, three loads; then the campaign phase (--phase load)
# of the same checkpoint into device memory at inference TP 2 (two ranks' slices, planned from
# the manifest), pipelined with O_DIRECT, two timed loads, each verified.
load_cuda() {
  local target="${CKPT_DEVICE_TARGET:-/tmp/ckptbench-device-check}-load"
  "$bin/ckptbench" run "$root/configs/device-check.toml" --output "$out/results-load" -q \
    --set "campaign.target=$target" --set campaign.keep=true --set campaign.iterations=1 --set campaign.warmup=0 \
    --set backend.name=posix --set memory.space=host --set strategy.format=safetensors || return 1
  local case_dir="$target/device-check/case-0000"
  "$bin/ckptbench" load "$case_dir/$(cat "$case_dir/latest")" --memory cuda --method pipelined --direct --repeat 3
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    "$bin/ckptbench" run "$root/configs/device-check.toml" --output "$out/results-load" --phase load \
      --set "campaign.target=$target" --set backend.name=posix --set strategy.format=safetensors --set memory.space=cuda \
      --set load.method=pipelined --set load.direct=true --set load.tp=2
    rc=$?
  fi
  rm -rf "$target"
  return "$rc"
}
if [ -x "$bin/ckptbench" ]; then
  step load_cuda 90 bash -c "$(declare -f load_cuda); bin='$bin' root='$root' out='$out' load_cuda"
else
  skip load_cuda "no $bin/ckptbench"
fi

# memory_bench: staging bandwidth against plain cudaMemcpy.
bench=""
for candidate in ckpt_bench_memory ckpt_memory_bench; do
  if [ -x "$bin/$candidate" ]; then bench="$bin/$candidate"; break; fi
done
if [ -n "$bench" ]; then
  step memory_bench 90 "$bench" '--benchmark_filter=^staging/(d2h|h2d)|^space/(cuda|pinned)' \
    --benchmark_min_time=0.2 --benchmark_format=console \
    --benchmark_out_format=json "--benchmark_out=$out/memory_bench.json"
else
  skip memory_bench "no memory benchmark program in $bin"
fi

# The summary: OUT/device-check.json, from the step list, the logs, the GoogleTest and
# benchmark JSON files and the campaign's results.jsonl.
summarize() {
  DEVICE_CHECK_OUT="$out" DEVICE_CHECK_SECONDS="$(($(date +%s) - start))" DEVICE_CHECK_CXX_RUNTIME="$cxx_runtime" \
    python3 - <<'EOF'
import glob, json, os

out = os.environ["DEVICE_CHECK_OUT"]

def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

steps = []
for line in read(os.path.join(out, "steps.tsv")).splitlines():
    name, status, code, seconds, detail = (line.split("\t") + [""] * 5)[:5]
    log = read(os.path.join(out, "logs", name + ".log"))
    steps.append({"name": name, "status": status, "exit_code": int(code) if code else None,
                  "seconds": float(seconds or 0), "detail": detail, "log_tail": log[-2000:]})

gpu = {}
fields = [f.strip() for f in read(os.path.join(out, "logs", "gpu.log")).split("\n")[0].split(",")]
if len(fields) == 4:
    gpu = dict(zip(["name", "driver", "memory", "compute_capability"], fields))

cufile = {"library": os.environ.get("CKPT_CUFILE_LIBRARY"), "config": os.environ.get("CUFILE_ENV_PATH_JSON"),
          "notes": sorted({l[len("[ note ] "):] for n in glob.glob(os.path.join(out, "logs", "*.log"))
                           for l in read(n).splitlines() if l.startswith("[ note ] ")})}
cufile["mode"] = next((n for n in cufile["notes"] if n.startswith(("cuFile compatibility", "cuFile GPUDirect"))), None)
backends = {}
for line in read(os.path.join(out, "logs", "backends.log")).splitlines():
    if line.startswith("["):
        try:
            backends = {b["name"]: {"available": b["available"], "reason": b.get("reason")} for b in json.loads(line)}
        except ValueError:
            pass

tests = {}
for path in sorted(glob.glob(os.path.join(out, "*_tests*.json"))):
    report = load(path) or {}
    cases = [t for s in report.get("testsuites", []) for t in s.get("testsuite", [])]
    tests[os.path.basename(path)[:-5]] = {
        "tests": report.get("tests"), "failures": report.get("failures"),
        "skipped": sum(1 for t in cases if t.get("result") == "SKIPPED"),
        "failed": {t["name"]: [f.get("failure", "")[:500] for f in t.get("failures", [])] for t in cases if t.get("failures")}}

campaign = []
for path in glob.glob(os.path.join(out, "results", "*", "results.jsonl")):
    for line in read(path).splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        campaign.append({k: r.get(k) for k in ("case_index", "case", "backend", "status", "error", "write_gib_per_s",
                                               "read_gib_per_s", "bytes_per_checkpoint", "verified", "notes")})
        campaign[-1]["memory"] = (r.get("config") or {}).get("memory")
        if r.get("training"):
            campaign[-1]["training"] = {k: r["training"].get(k) for k in (
                "engine", "stall_seconds", "time_to_durable_seconds", "snapshot_seconds", "flush_gib_s",
                "iteration_inflation", "pool_high_water_bytes", "host_pool_bytes")}

# Each benchmark's time, rate, error and own counters (staging/*/plain is plain cudaMemcpy).
structural = {"family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
              "repetition_index", "threads", "iterations", "cpu_time", "aggregate_name", "aggregate_unit"}
bench = [{k: v for k, v in b.items() if k not in structural}
         for b in (load(os.path.join(out, "memory_bench.json")) or {}).get("benchmarks", [])]

summary = {"seconds": int(os.environ["DEVICE_CHECK_SECONDS"]), "cxx_runtime": os.environ["DEVICE_CHECK_CXX_RUNTIME"], "gpu": gpu, "cufile": cufile, "backends": backends,
           "steps": steps, "tests": tests, "campaign": campaign, "memory_bench": bench,
           "ok": all(s["status"] in ("ok", "skipped") for s in steps)}
with open(os.path.join(out, "device-check.json"), "w") as f:
    json.dump(summary, f, indent=2)
EOF
}
if ! summarize >"$out/summary.log" 2>&1; then
  echo "device-check: python3 summary failed; writing the bare step list" >&2
  {
    echo '{"steps": ['
    sep=""
    while IFS=$'\t' read -r name status rc seconds detail; do
      printf '%s{"name": "%s", "status": "%s", "exit_code": "%s", "seconds": "%s"}' "$sep" "$name" "$status" "$rc" "$seconds"
      sep=$',\n'
    done <"$steps"
    echo ']}'
  } >"$out/device-check.json"
fi
echo "device-check: $out/device-check.json written after $(($(date +%s) - start)) s"
