#!/usr/bin/env python3
"""Save real DeepSpeed ZeRO stage 0, 1 and 2 checkpoints of tiny Llama-shaped models and record their files.

The models, the training step and the listing are measure_zero3.py's (the same tensor names and
shapes as ckptbench's `deepspeed` layout of the config); only `zero_optimization.stage` differs.
Under stages 0 to 2 DeepSpeed saves the module's bf16 weights whole in
mp_rank_00_model_states.pt (every DP rank holds them; DP rank 0 writes the file) and each DP
rank's partition of the fp32 master weights and Adam moments in
bf16_zero_pp_rank_{dp}_mp_rank_00_optim_states.pt.

    python3 measure_zero012.py --out zero012_files.jsonl      # needs torch and deepspeed

One JSON object per file, as measure_zero3.py writes them, with the case's `stage` beside `dp`;
for *.pt files also `pickle_bytes` (data.pkl's size) and `storages` (the data/N records' sizes).
"""

import json
import os

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import torch  # noqa: E402

import measure_zero3  # noqa: E402
from measure_zero3 import config_of, saved_files, tensor_bytes, zip_records  # noqa: E402

# measure_zero3's shapes and one whose element count is odd, so that DeepSpeed pads the flat
# buffer (the saved fixture holds shapes 0 to 3, 5 and 6).
SHAPES = measure_zero3.SHAPES + [(1, 35, 50, 5, 5, 128)]

STAGES = [0, 1, 2]
DP_SIZES = [1, 2, 4]


def describe(row, name, path):
    if name.endswith(".pt"):
        records = zip_records(path)
        row["pickle_bytes"] = records[0][1]
        row["storages"] = [n for r, n in records if r.startswith("data/")]
        sd = torch.load(path, map_location="cpu", weights_only=False)
        row["tensor_bytes"] = tensor_bytes(sd)


def measure(shape, stage, dp, port):
    case = dict(config_of(shape), dp=dp, stage=stage)
    return saved_files(shape, dp, port, case, describe, stage)


def main():
    import argparse

    import deepspeed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, action="append", help="only SHAPES[i]")
    parser.add_argument("--stage", type=int, action="append", help="only these ZeRO stages")
    parser.add_argument("--dp", type=int, action="append", help="only these DP sizes")
    parser.add_argument("--out", required=True, help="the JSONL file to write")
    args = parser.parse_args()
    port = 29700 + 100 * (args.shape[0] if args.shape else 0)
    with open(args.out, "w") as out:  # DeepSpeed logs to stdout
        out.write(json.dumps({"deepspeed": deepspeed.__version__, "torch": torch.__version__}) + "\n")
        for shape in [SHAPES[i] for i in args.shape] if args.shape else SHAPES:
            for stage in args.stage or STAGES:
                for dp in args.dp or DP_SIZES:
                    port += 1
                    for row in measure(shape, stage, dp, port):
                        out.write(json.dumps(row, sort_keys=True) + "\n")
                    out.flush()


if __name__ == "__main__":
    main()
