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
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import measure_zero3  # noqa: E402
from measure_zero3 import Named, config_of, megatron_tensors, tensor_bytes, zip_records  # noqa: E402

# measure_zero3's shapes and one whose element count is odd, so that DeepSpeed pads the flat
# buffer (the saved fixture holds shapes 0 to 3, 5 and 6).
SHAPES = measure_zero3.SHAPES + [(1, 35, 50, 5, 5, 128)]

STAGES = [0, 1, 2]
DP_SIZES = [1, 2, 4]


def worker(rank, world, shape, stage, save_dir, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_SIZE=str(world))
    import deepspeed

    deepspeed.init_distributed(dist_backend="gloo", auto_mpi_discovery=False)
    torch.manual_seed(0)
    ds_config = {
        "train_batch_size": world,
        "train_micro_batch_size_per_gpu": 1,
        "bf16": {"enabled": True},
        "zero_optimization": {"stage": stage},
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}},
    }
    model = Named(megatron_tensors(config_of(shape)))
    engine, _, _, _ = deepspeed.initialize(model=model, config=ds_config,
                                           model_parameters=model.parameters())
    x = torch.zeros(1, dtype=torch.bfloat16)
    loss = engine(x).float().sum()
    engine.backward(loss)
    engine.step()
    engine.save_checkpoint(save_dir, tag="global_step1")
    torch.distributed.barrier()


def measure(shape, stage, dp, port):
    cfg = config_of(shape)
    with tempfile.TemporaryDirectory() as save_dir:
        mp.spawn(worker, args=(dp, shape, stage, save_dir, port), nprocs=dp, join=True)
        rows = []
        for root, _, names in os.walk(save_dir):
            for name in sorted(names):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, save_dir)
                row = {"case": dict(cfg, dp=dp, stage=stage), "path": rel,
                       "bytes": os.path.getsize(path)}
                if name.endswith(".pt"):
                    records = zip_records(path)
                    row["pickle_bytes"] = records[0][1]
                    row["storages"] = [n for r, n in records if r.startswith("data/")]
                    sd = torch.load(path, map_location="cpu", weights_only=False)
                    row["tensor_bytes"] = tensor_bytes(sd)
                rows.append(row)
    rows.sort(key=lambda r: r["path"])
    rows[0]["parameters"] = [[n, s] for n, s in megatron_tensors(cfg)]
    return rows


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
