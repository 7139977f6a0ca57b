#!/usr/bin/env python3
"""The .metadata torch.distributed.checkpoint writes, measured: the ground truth of
harness/checkpoint/dcp_metadata's fitted size (tests/unit/checkpoint/dcp_metadata_test.cpp holds
the sizes printed here).

Needs torch (a venv outside the repository); CI does not run this. A Llama-like state dict of
bf16 tensors (hidden 256, intermediate 512, 128-wide k/v, 1000 words; 2 and 8 layers: 21 and 75
tensors) is saved with dcp.save on one process, and on 2, 4 and 8 gloo processes with every
tensor sharded on dim 0 over all of them (DTensor Shard(0), what FSDP2 saves).

  measure_metadata.py        prints one JSON line per (layers, processes), as in
                             metadata_sizes.jsonl beside it
"""
import json
import os
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor


def tensors(layers, hidden=256, inter=512, vocab=1000, kv=128):
    shapes = {"model.embed_tokens.weight": (vocab, hidden)}
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes.update({p + "self_attn.q_proj.weight": (hidden, hidden), p + "self_attn.k_proj.weight": (kv, hidden),
                       p + "self_attn.v_proj.weight": (kv, hidden), p + "self_attn.o_proj.weight": (hidden, hidden),
                       p + "mlp.gate_proj.weight": (inter, hidden), p + "mlp.up_proj.weight": (inter, hidden),
                       p + "mlp.down_proj.weight": (hidden, inter), p + "input_layernorm.weight": (hidden,),
                       p + "post_attention_layernorm.weight": (hidden,)})
    shapes["model.norm.weight"] = (hidden,)
    shapes["lm_head.weight"] = (vocab, hidden)
    return shapes


def sharded_save(rank, world, layers, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(29600 + world + layers)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    mesh = init_device_mesh("cpu", (world,))
    state = {k: distribute_tensor(torch.zeros(s, dtype=torch.bfloat16), mesh, [Shard(0)])
             for k, s in tensors(layers).items()}
    dcp.save(state, checkpoint_id=out)
    dist.destroy_process_group()


def main():
    warnings.filterwarnings("ignore")
    for layers in (2, 8):
        for world in (1, 2, 4, 8):
            with tempfile.TemporaryDirectory() as d:
                if world == 1:
                    dcp.save({k: torch.zeros(s, dtype=torch.bfloat16) for k, s in tensors(layers).items()},
                             checkpoint_id=d)
                else:
                    mp.spawn(sharded_save, args=(world, layers, d), nprocs=world)
                files = sorted(f for f in os.listdir(d) if f.endswith(".distcp"))
                print(json.dumps({"torch": torch.__version__, "layers": layers, "processes": world,
                                  "tensors": len(tensors(layers)),
                                  "metadata": os.path.getsize(os.path.join(d, ".metadata")),
                                  "distcp": {f: os.path.getsize(os.path.join(d, f)) for f in files}}), flush=True)


if __name__ == "__main__":
    main()
