#!/usr/bin/env python3
"""ckptbench's DCP checkpoint against torch.distributed.checkpoint saving the same tensors.

One process, a Llama-shaped model's bf16 weights in Hugging Face's names (the shapes come from
`ckptbench layout --json` of the config this script writes, so both sides hold the same
tensors). Each pair, in alternating order: torch's `dcp.save` (FileSystemWriter: one file, one
thread, fsync) of tensors already in memory, timed around the call; and `ckptbench run` of the
same model (strategy.layout = "dcp", posix, fsync), its write_seconds plus its `.metadata`
step. The page cache is dropped before each. Prints each pair's seconds and the ratio
(torch / ckptbench: how much longer the framework takes to put the same bytes on the same
disk), the medians [min, max], and the two checkpoints' file sizes side by side (the data file
must match to the byte: strategy.framing writes each item as torch.save's archive).

Needs torch (CPU is enough) in the Python that runs it; CI does not run this.

  benchmarks/vs_dcp.py [--layers 8] [--hidden 2048] [--pairs 5] [--ckptbench PATH] [--dir DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def drop_caches():
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as e:
        sys.exit(f"vs_dcp: cannot drop the page cache ({e}): run as root")


def model_config(layers, hidden):
    return {"model_type": "llama", "hidden_size": hidden, "intermediate_size": hidden * 11 // 4,
            "num_attention_heads": hidden // 128, "num_key_value_heads": max(1, hidden // 512),
            "head_dim": 128, "vocab_size": 32000, "num_hidden_layers": layers,
            "tie_word_embeddings": False, "rms_norm_eps": 1e-5, "max_position_embeddings": 4096}


def shapes(ckptbench, config):
    out = subprocess.run([ckptbench, "layout", "--model", str(config), "--state", "weights",
                          "--rank", "0", "--json"], check=True, capture_output=True, text=True)
    return [(s["name"], s["global_shape"]) for s in json.loads(out.stdout)["ranks"][0]["shards"]]


def torch_save(state, path):
    import torch.distributed.checkpoint as dcp
    shutil.rmtree(path, ignore_errors=True)
    drop_caches()
    start = time.perf_counter()
    dcp.save(state, storage_writer=dcp.FileSystemWriter(str(path), thread_count=1,
                                                          sync_files=True), no_dist=True)
    return time.perf_counter() - start


def ckptbench_save(ckptbench, config, work):
    campaign = work / "c.toml"
    target = work / "target"
    campaign.write_text(f"""[campaign]
name = "vsdcp"
target = "{target}"
create_target = true
overwrite = true
keep = true
iterations = 1
warmup = 0
phase = "checkpoint"
[model]
name = "{config}"
[state]
scope = "weights"
[backend]
name = "posix"
sync = "fsync"
[cache]
policy = "none"
""")
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    drop_caches()
    run = subprocess.run([ckptbench, "-q", "run", str(campaign), "--output", str(out)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"vs_dcp: ckptbench run failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    results = next(out.glob("*/results.jsonl")).read_text().splitlines()
    r = json.loads(results[0])
    if r["status"] != "ok":
        sys.exit(f"vs_dcp: ckptbench's case failed: {r['error']}")
    seconds = r["write_seconds"] + r["phases"]["write"]["metadata"]
    step = next((target / "vsdcp" / "case-0000").glob("step_*"))
    return seconds, step


def sizes(directory):
    return {p.name: p.stat().st_size for p in sorted(directory.iterdir())
            if p.name.endswith(".distcp") or p.name == ".metadata"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--ckptbench", default=str(REPO / "build/bin/ckptbench"))
    parser.add_argument("--dir", default=str(REPO / "build/vs_dcp"))
    a = parser.parse_args()
    warnings.filterwarnings("ignore")  # dcp.save's notes on saving without a process group
    try:
        import torch
    except ImportError:
        sys.exit("vs_dcp: needs torch in this Python (e.g. a venv with torch for CPU)")
    work = Path(a.dir)
    work.mkdir(parents=True, exist_ok=True)
    config = work / "config.json"
    config.write_text(json.dumps(model_config(a.layers, a.hidden)))
    state = {name: torch.randn(shape).to(torch.bfloat16) for name, shape in shapes(a.ckptbench,
                                                                                    config)}
    total = sum(t.numel() * t.element_size() for t in state.values())
    print(f"{len(state)} tensors, {total} B of bf16 weights, torch {torch.__version__}")
    ratios, theirs, ours = [], [], []
    for pair in range(a.pairs):
        order = ["torch", "ckptbench"] if pair % 2 == 0 else ["ckptbench", "torch"]
        for tool in order:
            if tool == "torch":
                theirs.append(torch_save(state, work / "torch"))
            else:
                seconds, step = ckptbench_save(a.ckptbench, config, work)
                ours.append(seconds)
        ratios.append(theirs[-1] / ours[-1])
        print(f"pair {pair + 1}: torch {theirs[-1]:.3f} s ({total / theirs[-1] / 2**30:.3f} GiB/s), "
              f"ckptbench {ours[-1]:.3f} s ({total / ours[-1] / 2**30:.3f} GiB/s), "
              f"torch / ckptbench {ratios[-1]:.3f}")

    def summary(values):
        return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"

    print(f"median seconds: torch {summary(theirs)}, ckptbench {summary(ours)}; "
          f"torch / ckptbench {summary(ratios)}")
    real, modeled = sizes(work / "torch"), sizes(step)
    for name in sorted(set(real) | set(modeled)):
        print(f"{name}: torch {real.get(name)} B, ckptbench {modeled.get(name)} B")


if __name__ == "__main__":
    main()
