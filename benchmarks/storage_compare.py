#!/usr/bin/env python3
"""Side by side: posix, mpiio and hdf5 on the same node-share workload (issue-5 targets).

Runs configs/storage-compare.toml (or --campaign) --reps times under mpirun, each repetition
every case of the pairs below in alternating order, and prints per-case medians of write and
read GiB/s, the HDF5 metadata phases (open = create + dataset definitions, close) and the
ratios the targets name:
  mpiio file_per_rank / posix file_per_rank   (target >= 0.9)
  hdf5 shared_file    / mpiio shared_file     (target >= 0.8; contiguous datasets)
A benchmark, not a test: it exits 0 and says BELOW TARGET when a ratio misses.

  benchmarks/storage_compare.py --np 4 --reps 3 --scale 64
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [("posix", "file_per_rank"), ("mpiio", "file_per_rank"), ("mpiio", "shared_file"), ("hdf5", "shared_file")]
# File per rank is independent I/O (as posix); shared files use each backend's --collective.
TARGETS = [(("mpiio", "file_per_rank"), ("posix", "file_per_rank"), 0.9),
           (("hdf5", "shared_file"), ("mpiio", "shared_file"), 0.8)]


def run_case(args, backend, mapping, rep, work):
    out = os.path.join(work, f"results-{backend}-{mapping}-{rep}")
    cmd = []
    if args.np > 0:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
               "--mca", "btl_vader_single_copy_mechanism", "none", "-np", str(args.np)]
    cmd += [args.ckptbench, "run", args.campaign, "--output", out,
            "--set", f"backend.name={backend}", "--set", f"strategy.mapping={mapping}",
            "--set", f"model.scale={args.scale}", "--set", f"campaign.iterations={args.iterations}",
            "--set", f"campaign.target={os.path.join(work, 'target')}",
            "--set", f"backend.mpiio.collective={'false' if mapping == 'file_per_rank' else args.collective}",
            "--set", f"backend.hdf5.collective={args.collective}"]
    if args.mpi_io:
        cmd += ["--set", f"campaign.mpi_io={args.mpi_io}"]
    for override in args.set:
        cmd += ["--set", override]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"storage_compare: {backend} {mapping} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    run_dir = os.path.join(out, os.listdir(out)[0])
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        return json.loads(f.readline())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", type=int, default=4, help="MPI processes (0: no mpirun)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--scale", type=int, default=64, help="model.scale (64: 1.3 GiB per checkpoint)")
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--mpi-io", choices=["default", "romio", "ompio"],
                   help="campaign.mpi_io for both mpiio and hdf5: Open MPI's ROMIO or OMPIO, or the library default "
                        "(without it: the campaign's; storage-compare.toml says romio)")
    p.add_argument("--collective", choices=["true", "false"], default="true",
                   help="transfer mode of the shared-file cases (mpiio and hdf5 alike)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="one more campaign override for every case (repeatable), e.g. "
                        "backend.hdf5.collective_opt=individual_io")
    p.add_argument("--campaign", default=os.path.join(REPO, "configs", "storage-compare.toml"))
    p.add_argument("--ckptbench", default=os.path.join(REPO, "build", "bin", "ckptbench"))
    p.add_argument("--dir", default=os.path.join(REPO, "build"), help="scratch parent directory")
    args = p.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    samples = {case: [] for case in CASES}
    with tempfile.TemporaryDirectory(prefix="storage-compare-", dir=args.dir) as work:
        for rep in range(args.reps):
            order = CASES if rep % 2 == 0 else list(reversed(CASES))
            for backend, mapping in order:
                r = run_case(args, backend, mapping, rep, work)
                samples[(backend, mapping)].append(r)
                print(f"rep {rep + 1}: {backend:6} {mapping:14} write {r['write_gib_per_s']:.3f} "
                      f"read {r['read_gib_per_s']:.3f} GiB/s", flush=True)

    def med(case, direction):
        return statistics.median(r[f"{direction}_gib_per_s"] for r in samples[case])

    def phase(case, direction, name):
        return statistics.median(r["phases"][direction][name] for r in samples[case])

    first = samples[CASES[0]][0]
    print(f"\n{first['model']} node share: {first['modeled_ranks']} ranks, "
          f"{first['bytes_per_checkpoint'] / 2**30:.2f} GiB per checkpoint, {first['ranks']} processes, "
          f"{args.reps} reps x {args.iterations} iterations, shared files collective={args.collective}, MPI-IO {args.mpi_io or 'as the campaign says'}"
          f"{''.join(' --set ' + o for o in args.set)}; medians")
    print(f"{'backend':8} {'mapping':14} {'write GiB/s':>11} {'read GiB/s':>10} {'open s':>8} {'transfer s':>10} "
          f"{'close s':>8}")
    for case in CASES:
        print(f"{case[0]:8} {case[1]:14} {med(case, 'write'):11.3f} {med(case, 'read'):10.3f} "
              f"{phase(case, 'write', 'open'):8.4f} {phase(case, 'write', 'transfer'):10.4f} "
              f"{phase(case, 'write', 'close'):8.4f}")
    print()
    for ours, peer, target in TARGETS:
        for direction in ("write", "read"):
            ratio = med(ours, direction) / med(peer, direction)
            verdict = "" if ratio >= target else "  BELOW TARGET"
            print(f"{ours[0]} {ours[1]} / {peer[0]} {peer[1]} {direction}: {ratio:.2f}x (target >= {target}){verdict}")


if __name__ == "__main__":
    main()
