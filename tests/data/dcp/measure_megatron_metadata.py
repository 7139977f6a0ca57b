#!/usr/bin/env python3
"""The .metadata of Megatron-core's torch_dist checkpoints, measured: the ground truth of
harness/checkpoint/dcp_metadata's megatron_dist size (tests/unit/checkpoint/dcp_metadata_test.cpp
holds the sizes printed here).

Needs torch, megatron-core and psutil (a venv outside the repository: `pip install --no-deps
megatron-core psutil`; megatron-core 0.16.1 is the newest for Python 3.11); CI does not run this. A GPT's weights in Megatron-core's names (hidden 256, ffn
512, 128-wide k/v, 1024 words, 2, 8 or 32 layers) are saved with
megatron.core.dist_checkpointing.save and the torch_dist strategy wrapped for a fully parallel
save, as Megatron's training saves them: each layer's tensor one chunk of a tensor stacked over
the layers (prepend_axis_num = 1), on 1 process and on 2, 4 and 8 gloo processes as data-parallel
replicas (the save spreads the replicated chunks over them), and on 2 processes at TP 2.

  measure_megatron_metadata.py [LAYERS:TP:DP ...]
                                 prints one JSON line per (layers, tp, dp), as in
                                 megatron_metadata_sizes.jsonl beside it: the points named, or
                                 2 and 8 layers at TP 1 and DP 1, 2, 4, 8 and at TP 2 and DP 1,
                                 2. The file holds 2 layers at TP 1 (DP 1, 2, 4, 8) and TP 2
                                 (DP 1, 2), 8 layers at DP 1 and 2, and `32:1:1 32:1:4`; on a
                                 quiet 2-core machine all of them take about 3 minutes, on a
                                 loaded one DP 8 took longer than 20.

The .metadata holds the checkpoint directory's path (StorageMeta.checkpoint_id): the sizes are
those of tempfile's /tmp/tmpXXXXXXXX, 16 characters.
"""
import json
import os
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HIDDEN, FFN, KV, VOCAB = 256, 512, 128, 1024


def layer_tensors():
    """name -> (shape, the dim TP splits or None) of one layer, as Megatron-core's GPT names it."""
    return {"self_attention.linear_qkv.layer_norm_weight": ((HIDDEN,), None),
            "self_attention.linear_qkv.weight": ((HIDDEN + 2 * KV, HIDDEN), 0),
            "self_attention.linear_proj.weight": ((HIDDEN, HIDDEN), 1),
            "mlp.linear_fc1.layer_norm_weight": ((HIDDEN,), None),
            "mlp.linear_fc1.weight": ((2 * FFN, HIDDEN), 0),
            "mlp.linear_fc2.weight": ((HIDDEN, FFN), 1)}


def other_tensors():
    return {"embedding.word_embeddings.weight": ((VOCAB, HIDDEN), 0),
            "decoder.final_layernorm.weight": ((HIDDEN,), None),
            "output_layer.weight": ((VOCAB, HIDDEN), 0)}


def sharded_state_dict(layers, tp, rank):
    from megatron.core.dist_checkpointing import ShardedTensor
    tp_rank, dp_rank = rank % tp, rank // tp

    def local(shape, split):
        shape = list(shape)
        if split is not None:
            shape[split] //= tp
        return torch.zeros(shape, dtype=torch.bfloat16)

    state = {}
    for name, (shape, split) in other_tensors().items():
        offsets = [] if split is None else [(split, tp_rank, tp)]
        replica = (0 if split is not None or tp_rank == 0 else 1, 0, dp_rank)
        state[name] = ShardedTensor.from_rank_offsets(name, local(shape, split), *offsets, replica_id=replica)
    for i in range(layers):
        for name, (shape, split) in layer_tensors().items():
            key = "decoder.layers." + name
            offsets = [(0, i, layers)] + ([] if split is None else [(split + 1, tp_rank, tp)])
            replica = (0 if split is not None or tp_rank == 0 else 1, 0, dp_rank)
            state[f"decoder.layers.{i}.{name}"] = ShardedTensor.from_rank_offsets(
                key, local(shape, split), *offsets, replica_id=replica, prepend_axis_num=1)
    return state


def save(rank, world, tp, layers, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(29700 + world * 10 + tp + layers)
    warnings.filterwarnings("ignore")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    # The writer waits for the GPU before it copies tensors to the host, and the savers agree on
    # failures through a GPU tensor; here everything is on the host.
    torch.cuda.synchronize = lambda *args, **kwargs: None
    torch.cuda.current_device = lambda: "cpu"
    from megatron.core import dist_checkpointing
    from megatron.core.dist_checkpointing.strategies.fully_parallel import FullyParallelSaveStrategyWrapper
    from megatron.core.dist_checkpointing.strategies.torch import TorchDistSaveShardedStrategy
    strategy = FullyParallelSaveStrategyWrapper(TorchDistSaveShardedStrategy("torch_dist", 1))
    dist_checkpointing.save(sharded_state_dict(layers, tp, rank), out, sharded_strategy=strategy)
    dist.destroy_process_group()


def points(args):
    if not args:
        return [(layers, tp, dp) for layers in (2, 8)
                for tp, dp in ((1, 1), (1, 2), (1, 4), (1, 8), (2, 1), (2, 2))]
    return [tuple(int(n) for n in arg.split(":")) for arg in args]


def main():
    warnings.filterwarnings("ignore")
    from importlib.metadata import version
    for layers, tp, dp in points(sys.argv[1:]):
        with tempfile.TemporaryDirectory() as d:
            mp.spawn(save, args=(tp * dp, tp, layers, d), nprocs=tp * dp)
            files = sorted(os.listdir(d))
            print(json.dumps({"torch": torch.__version__, "megatron_core": version("megatron-core"),
                              "layers": layers, "tp": tp, "dp": dp,
                              "tensors": len(other_tensors()) + layers * len(layer_tensors()),
                              "files": {f: os.path.getsize(os.path.join(d, f)) for f in files}}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
