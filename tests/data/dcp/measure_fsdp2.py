#!/usr/bin/env python3
"""What torch.distributed.checkpoint writes for an FSDP2-sharded model, measured: the ground truth
of ckptbench's `parallel.zero_sharding = "per_tensor"` (tests/unit/checkpoint/per_tensor_sharding_test.cpp
reads the fixture this prints).

Needs torch (a venv outside the repository); CI does not run this. Two Llama-shaped models with
Hugging Face's parameter names (the config.json files beside the fixture: `odd`, whose sizes do
not divide by 2 or 4 and whose k/v projections leave DP rank 3 of 4 an empty shard, and `small`,
hidden 256 as measure_metadata.py's) are built in bf16, every decoder layer and then the root
wrapped with FSDP2's fully_shard over 2 and 4 gloo processes, and their state_dict saved with
dcp.save (one .distcp file per process). For each (model, processes) one JSON line: the
.metadata's size, every file's size, and per chunk its tensor, offsets, sizes, file and the
bytes of its tensor data (elements x 2).

  measure_fsdp2.py > fsdp2/dcp_fsdp2.jsonl
"""
import json
import os
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fsdp2")


def config(name):
    with open(os.path.join(HERE, name + ".json")) as f:
        return json.load(f)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        head = c["hidden_size"] // c["num_attention_heads"]
        kv = c["num_key_value_heads"] * head
        h = c["hidden_size"]
        self.q_proj = nn.Linear(h, h, bias=False)
        self.k_proj = nn.Linear(h, kv, bias=False)
        self.v_proj = nn.Linear(h, kv, bias=False)
        self.o_proj = nn.Linear(h, h, bias=False)


class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)


class RmsNorm(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Attention(c)
        self.mlp = Mlp(c)
        self.input_layernorm = RmsNorm(c["hidden_size"])
        self.post_attention_layernorm = RmsNorm(c["hidden_size"])


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RmsNorm(c["hidden_size"])


class CausalLm(nn.Module):
    """LlamaForCausalLM's parameters and names (untied lm_head), without its forward."""

    def __init__(self, c):
        super().__init__()
        self.model = Decoder(c)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)


def save(rank, world, name, out, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    warnings.filterwarnings("ignore")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    mesh = init_device_mesh("cpu", (world,))
    model = CausalLm(config(name)).to(torch.bfloat16)
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    dcp.save(model.state_dict(), checkpoint_id=out)
    dist.destroy_process_group()


def describe(d, name, world):
    meta = dcp.FileSystemReader(d).read_metadata()
    chunks = []
    for (fqn, item) in sorted(meta.state_dict_metadata.items()):
        for chunk in item.chunks:
            index = next(k for k in meta.storage_data if k.fqn == fqn and list(k.offset) == list(chunk.offsets))
            info = meta.storage_data[index]
            numel = 1
            for s in chunk.sizes:
                numel *= s
            chunks.append({"name": fqn, "offsets": list(chunk.offsets), "sizes": list(chunk.sizes),
                           "file": info.relative_path, "data_bytes": numel * 2, "item_bytes": info.length})
    files = {f: os.path.getsize(os.path.join(d, f)) for f in sorted(os.listdir(d))}
    return {"torch": torch.__version__, "model": name, "processes": world,
            "tensors": len(meta.state_dict_metadata), "files": files, "chunks": chunks}


def main():
    warnings.filterwarnings("ignore")
    port = 29700
    for name in ("odd", "small"):
        for world in (2, 4):
            port += 1
            with tempfile.TemporaryDirectory() as d:
                mp.spawn(save, args=(world, name, d, port), nprocs=world)
                print(json.dumps(describe(d, name, world)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
