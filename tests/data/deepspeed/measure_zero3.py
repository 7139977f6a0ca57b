#!/usr/bin/env python3
"""Save real DeepSpeed ZeRO-3 checkpoints of tiny Llama-shaped models and record their files.

The model's parameters carry the names and shapes ckptbench lays out for a Llama config under
Megatron names (`ckptbench layout --model config.json --state full`), so that ckptbench's
`deepspeed` layout of the same config can be compared file by file with what DeepSpeed wrote.
Each case runs `engine.save_checkpoint` after one AdamW step (bf16, ZeRO stage 3) on the CPU
(DS_ACCELERATOR=cpu, gloo) in `dp` processes, then lists the checkpoint: per file its name,
its size, the records of torch.save's zip archive, and for the optimizer files the bytes of the
tensors torch.load finds in it.

    python3 measure_zero3.py --out zero3_files.jsonl      # needs torch and deepspeed

The first line names the versions; then one JSON object per file: case (the config's keys and dp), path (relative to the save
directory), bytes, for *.pt records (name and size of each zip record, in order), and for
*_optim_states.pt tensor_bytes and partition_elements (the elements
of the rank's flat fp32 partition); the first object of a case also has `parameters`, the names
and shapes of the model's tensors in DeepSpeed's order.
"""

import json
import os
import tempfile
import zipfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

# (layers, hidden, intermediate, heads, kv heads, vocab); the vocabulary a multiple of 128 so
# that Megatron's padding leaves it as it is.
SHAPES = [
    (1, 64, 128, 4, 2, 256),
    (2, 64, 128, 4, 2, 256),
    (2, 128, 256, 8, 4, 512),
    (4, 96, 200, 6, 2, 384),
    (3, 160, 448, 10, 5, 1024),
    (12, 32, 64, 2, 1, 128),
]
DP_SIZES = [1, 2, 4]


def config_of(shape):
    layers, hidden, inter, heads, kv, vocab = shape
    return {
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "vocab_size": vocab,
        "tie_word_embeddings": False,
        "max_position_embeddings": 128,
        "rms_norm_eps": 1e-5,
    }


def megatron_tensors(cfg):
    """Names and shapes of a Llama config's tensors under Megatron's names."""
    h, i = cfg["hidden_size"], cfg["intermediate_size"]
    head_dim = h // cfg["num_attention_heads"]
    qkv = (cfg["num_attention_heads"] + 2 * cfg["num_key_value_heads"]) * head_dim
    out = [("embedding.word_embeddings.weight", [cfg["vocab_size"], h])]
    for n in range(cfg["num_hidden_layers"]):
        p = f"decoder.layers.{n}."
        out += [
            (p + "input_layernorm.weight", [h]),
            (p + "self_attention.linear_qkv.weight", [qkv, h]),
            (p + "self_attention.linear_proj.weight", [h, h]),
            (p + "pre_mlp_layernorm.weight", [h]),
            (p + "mlp.linear_fc1.weight", [2 * i, h]),
            (p + "mlp.linear_fc2.weight", [h, i]),
        ]
    out += [("decoder.final_layernorm.weight", [h]), ("output_layer.weight", [cfg["vocab_size"], h])]
    return out


class Leaf(torch.nn.Module):
    """One tensor; its forward touches it so that ZeRO-3 gathers it and it gets a gradient."""

    def __init__(self, shape):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(*shape) * 0.02)

    def forward(self, x):
        return x + self.weight.float().square().mean()


class Named(torch.nn.Module):
    """A module tree whose parameters carry the given dotted names."""

    def __init__(self, tensors):
        super().__init__()
        self.leaves = []
        for name, shape in tensors:
            parts = name.split(".")
            assert parts[-1] == "weight"
            node = self
            for part in parts[:-2]:
                if not hasattr(node, part):
                    node.add_module(part, torch.nn.Module())
                node = getattr(node, part)
            leaf = Leaf(shape)
            node.add_module(parts[-2], leaf)
            self.leaves.append(parts[:-1])

    def forward(self, x):
        for path in self.leaves:
            module = self
            for part in path:
                module = getattr(module, part)
            x = module(x)
        return x


def tensor_bytes(obj):
    if torch.is_tensor(obj):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def partition_elements(sd):
    groups = sd["optimizer_state_dict"]["fp32_flat_groups"]
    return sum(g.numel() for g in groups)


def zip_records(path):
    """torch.save's archive: each record's name (after the archive's folder) and size, in order."""
    with zipfile.ZipFile(path) as z:
        return [[i.filename.split("/", 1)[1], i.file_size] for i in z.infolist()]


def worker(rank, world, shape, save_dir, port, stage=3):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_SIZE=str(world))
    import contextlib

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
    # ZeRO-3 partitions the parameters as the module is built.
    init = deepspeed.zero.Init(config_dict_or_path=ds_config) if stage == 3 else contextlib.nullcontext()
    with init:
        model = Named(megatron_tensors(config_of(shape)))
    engine, _, _, _ = deepspeed.initialize(model=model, config=ds_config,
                                           model_parameters=model.parameters())
    x = torch.zeros(1, dtype=torch.bfloat16)
    loss = engine(x).float().sum()
    engine.backward(loss)
    engine.step()
    engine.save_checkpoint(save_dir, tag="global_step1")
    torch.distributed.barrier()


def saved_files(shape, dp, port, case, describe, stage=3):
    """Saves the model at `dp` and ZeRO `stage`; one row per file: case, path, bytes and what
    describe(row, name, path) adds; the first row also lists the model's parameters."""
    cfg = config_of(shape)
    with tempfile.TemporaryDirectory() as save_dir:
        mp.spawn(worker, args=(dp, shape, save_dir, port, stage), nprocs=dp, join=True)
        rows = []
        for root, _, names in os.walk(save_dir):
            for name in sorted(names):
                path = os.path.join(root, name)
                row = {"case": case, "path": os.path.relpath(path, save_dir),
                       "bytes": os.path.getsize(path)}
                describe(row, name, path)
                rows.append(row)
    rows.sort(key=lambda r: r["path"])
    rows[0]["parameters"] = [[n, s] for n, s in megatron_tensors(cfg)]
    return rows


def describe_zero3(row, name, path):
    if name.endswith(".pt"):
        row["records"] = zip_records(path)
    if name.endswith("_optim_states.pt"):
        sd = torch.load(path, map_location="cpu", weights_only=False)
        row["tensor_bytes"] = tensor_bytes(sd)
        row["partition_elements"] = partition_elements(sd)


def measure(shape, dp, port):
    return saved_files(shape, dp, port, dict(config_of(shape), dp=dp), describe_zero3)


def main():
    import argparse

    import deepspeed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, action="append", help="only SHAPES[i]")
    parser.add_argument("--dp", type=int, action="append", help="only these DP sizes")
    parser.add_argument("--out", required=True, help="the JSONL file to write")
    args = parser.parse_args()
    port = 29600
    with open(args.out, "w") as out:  # DeepSpeed logs to stdout
        out.write(json.dumps({"deepspeed": deepspeed.__version__, "torch": torch.__version__}) + "\n")
        for shape in [SHAPES[i] for i in args.shape] if args.shape else SHAPES:
            for dp in args.dp or DP_SIZES:
                port += 1
                for row in measure(shape, dp, port):
                    out.write(json.dumps(row, sort_keys=True) + "\n")
                out.flush()


if __name__ == "__main__":
    main()
