#!/usr/bin/env python3
"""What torch.distributed.checkpoint writes for a model sharded in two dimensions, FSDP2 over
tensor parallelism as torchtitan applies them, measured: the ground truth of ckptbench's
`parallel.zero_sharding = "per_tensor"` at tp > 1 (tests/unit/checkpoint/per_tensor_sharding_test.cpp
reads the fixture this prints).

Needs torch (a venv outside the repository); CI does not run this. The Llama-shaped models of
measure_fsdp2.py (Hugging Face's parameter names; `small` and `uneven`, the config.json files
beside the fixture: `uneven`'s sizes leave DP chunks of unequal rows inside a TP slice, and an
empty one) are built in bf16 on a ("dp", "tp") device mesh of gloo processes, rank = dp × tp +
tp rank. TP first, torchtitan's plan: the embedding row-parallel (its vocabulary rows split),
q/k/v, gate and up column-parallel (dim 0), o and down row-parallel (dim 1), lm_head
column-parallel, the norms sequence-parallel (replicated over TP). Then FSDP2's fully_shard on
the "dp" sub-mesh, every decoder layer and the root, which shards each TP slice's dim 0 over DP
(a strided shard where TP also cut dim 0), and dcp.save of the state_dict. For each (model, dp,
tp) one JSON line as measure_fsdp2.py prints it, with "dp" and "tp" besides.

  measure_fsdp2_tp.py > fsdp2/dcp_fsdp2_tp.jsonl
"""
import json
import os
import sys
import tempfile
import warnings

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                               parallelize_module)

from measure_fsdp2 import CausalLm, config, describe

# (model, dp, tp): 4 and 8 processes.
RUNS = (("uneven", 2, 2), ("uneven", 4, 2), ("uneven", 2, 4), ("small", 2, 2), ("small", 4, 2))

LAYER_PLAN = {
    "input_layernorm": SequenceParallel(),
    "self_attn.q_proj": ColwiseParallel(),
    "self_attn.k_proj": ColwiseParallel(),
    "self_attn.v_proj": ColwiseParallel(),
    "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1)),
    "post_attention_layernorm": SequenceParallel(),
    "mlp.gate_proj": ColwiseParallel(),
    "mlp.up_proj": ColwiseParallel(),
    "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1)),
}


def save(rank, world, name, dp, tp, out, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    warnings.filterwarnings("ignore")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    mesh = init_device_mesh("cpu", (dp, tp), mesh_dim_names=("dp", "tp"))
    model = CausalLm(config(name)).to(torch.bfloat16)
    parallelize_module(model, mesh["tp"], {
        "model.embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "model.norm": SequenceParallel(),
        "lm_head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()),
    })
    for layer in model.model.layers:
        parallelize_module(layer, mesh["tp"], LAYER_PLAN)
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])
    if rank == 0:
        placements = {k: str(v.placements) for k, v in model.state_dict().items()}
        with open(os.path.join(out, "..", "placements.json"), "w") as f:
            json.dump(placements, f)
    dcp.save(model.state_dict(), checkpoint_id=out)
    dist.destroy_process_group()


def main():
    warnings.filterwarnings("ignore")
    port = 29800
    for (name, dp, tp) in RUNS:
        port += 1
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "ckpt")
            os.mkdir(out)
            mp.spawn(save, args=(dp * tp, name, dp, tp, out, port), nprocs=dp * tp)
            line = describe(out, name, dp * tp)
            line.update({"dp": dp, "tp": tp})
            with open(os.path.join(d, "placements.json")) as f:
                print(json.dumps(json.load(f)), file=sys.stderr)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
