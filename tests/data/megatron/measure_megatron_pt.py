#!/usr/bin/env python3
"""The .pt files of Megatron's checkpoints, measured: the ground truth of harness/plan/megatron_pt_files
(tests/data/megatron/megatron_pt_files.jsonl).

Megatron-LM's save_checkpoint (megatron/training/checkpointing.py at core_v0.16.1) torch.saves
per (TP, PP) rank `mp_rank_TT[_PPP]/model_optim_rng.pt`: {args, checkpoint_version, iteration,
model, optimizer, opt_param_scheduler, rerun_state_machine, rng_state,
num_floating_point_operations_so_far}; with the distributed optimizer, DP rank 0 also saves
`distrib_optim.pt` (DistributedOptimizer.save_parameter_state: the fp32 master weights,
exp_avg and exp_avg_sq of the whole buffer, unpadded). This script builds those dicts from the
real parts where they run on a CPU and torch.saves them:
  - args: Megatron-LM's own parse_args and validate_args (a checkout at core_v0.16.1 named by
    --megatron-lm; the tokenizer packages it imports but never calls are stubbed);
  - model: megatron-core 0.16.1's GPTModel with the local layer spec (RMSNorm, SwiGLU, no biases,
    untied output) in bf16 as Float16Module holds it, state_dict_for_save_checkpoint();
  - optimizer: megatron-core's parameter groups (_get_param_groups) under torch's AdamW after one
    step, in the shape Float16OptimizerWithFloat16Params.state_dict() (no distributed optimizer:
    Adam's state per parameter and the fp32 copies) or DistributedOptimizer.state_dict() (the
    groups without parameters, the step in each group) gives it; bf16, so no grad scaler;
  - opt_param_scheduler: megatron-core's OptimizerParamScheduler.state_dict();
  - rerun_state_machine: megatron-core's RerunStateMachine state_dict, as save_checkpoint asks it;
  - rng_state: [get_rng_state()'s dict] with Python's, numpy's and torch's CPU generator states;
    the CUDA generator's state is a 16-byte uint8 tensor and the tracker's states one such
    tensor per tracker name (one, 'model-parallel-rng'), stand-ins of CUDA's sizes on a CPU.

    python3 measure_megatron_pt.py --megatron-lm PATH --out megatron_pt_files.jsonl

For --ckpt-format torch_dist it also saves the same state dict (the distributed optimizer's
dp_reshardable form: its groups and parameter state sharded) with megatron-core's
dist_checkpointing.save and records the common.pt it writes: what is left unsharded (args,
counters, the scheduler, the rerun state, the content metadata).

Needs torch, numpy and megatron-core (the venv of tests/data/dcp/measure_megatron_metadata.py).
One JSON object per file: the case (the model's shape, `distributed_optimizer`), file, bytes,
pickle_bytes (data.pkl), storages (the data/N records' sizes), args_pickle_bytes (the args
Namespace pickled alone, protocol 2), and the model's tensors (name, shape) in state-dict order.
"""
import argparse
import importlib
import io
import json
import os
import random
import sys
import types
import warnings
import zipfile
from unittest import mock

import numpy as np
import torch

warnings.filterwarnings("ignore")

# (layers, hidden, ffn, heads, kv groups, vocab)
SHAPES = [(1, 64, 128, 4, 2, 256), (2, 64, 128, 4, 2, 256), (2, 128, 256, 8, 4, 512),
          (4, 96, 200, 6, 2, 384), (12, 32, 64, 2, 1, 128)]


def megatron_arguments(checkout):
    """Megatron-LM's arguments module without the training package's heavy __init__."""
    for name in ['six', 'yaml', 'sentencepiece', 'tiktoken', 'einops', 'transformers', 'nltk', 'regex']:
        try:
            __import__(name)
        except Exception:
            sys.modules[name] = mock.MagicMock()
    sys.path.insert(0, checkout)
    import megatron
    pkg = types.ModuleType('megatron.training')
    pkg.__path__ = [os.path.join(checkout, 'megatron', 'training')]
    sys.modules['megatron.training'] = pkg
    megatron.training = pkg
    global_vars = importlib.import_module('megatron.training.global_vars')
    for name in dir(global_vars):
        if name.startswith('get_'):
            setattr(pkg, name, getattr(global_vars, name))
    utils = importlib.import_module('megatron.training.utils')
    for name in ('print_rank_0', 'is_last_rank', 'print_rank_last'):
        setattr(pkg, name, getattr(utils, name))
    return importlib.import_module('megatron.training.arguments')


def parsed_args(arguments, shape, distributed_optimizer, ckpt_format='torch'):
    layers, hidden, ffn, heads, kv, vocab = shape
    argv = ['x', '--num-layers', str(layers), '--hidden-size', str(hidden), '--ffn-hidden-size',
            str(ffn), '--num-attention-heads', str(heads), '--group-query-attention',
            '--num-query-groups', str(kv), '--seq-length', '128', '--max-position-embeddings',
            '128', '--micro-batch-size', '1', '--bf16', '--lr', '1e-4', '--tokenizer-type',
            'NullTokenizer', '--vocab-size', str(vocab), '--normalization', 'RMSNorm', '--swiglu',
            '--disable-bias-linear', '--untie-embeddings-and-output-weights',
            '--position-embedding-type', 'rope', '--ckpt-format', ckpt_format]
    if distributed_optimizer:
        argv.append('--use-distributed-optimizer')
    saved, sys.argv = sys.argv, argv
    stdout, sys.stdout = sys.stdout, io.StringIO()
    try:
        args = arguments.parse_args()
        args = arguments.validate_args(args, {})
    finally:
        sys.argv, sys.stdout = saved, stdout
    return args


def gpt_model(shape):
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.transformer.transformer_config import TransformerConfig
    layers, hidden, ffn, heads, kv, vocab = shape
    cfg = TransformerConfig(num_layers=layers, hidden_size=hidden, ffn_hidden_size=ffn,
                            num_attention_heads=heads, num_query_groups=kv,
                            use_cpu_initialization=True, bf16=True, params_dtype=torch.bfloat16,
                            gated_linear_unit=True, normalization="RMSNorm", add_bias_linear=False)
    model = GPTModel(cfg, get_gpt_layer_local_spec(normalization="RMSNorm"), vocab_size=vocab,
                     max_sequence_length=128, position_embedding_type="rope",
                     share_embeddings_and_output_weights=False)
    return model.bfloat16()  # as Megatron's Float16Module wraps it under --bf16: the norms too


def optimizer_state(model, distributed_optimizer):
    from megatron.core.optimizer import OptimizerConfig, _get_param_groups
    config = OptimizerConfig(optimizer='adam', lr=1e-4, bf16=True,
                             use_distributed_optimizer=distributed_optimizer)
    groups = _get_param_groups([model], config, None)
    masters = []
    for g in groups:
        copies = [p.detach().float().requires_grad_() for p in g['params']]
        masters.append(copies)
        g['params'] = copies
    adam = torch.optim.AdamW(groups, lr=1e-4)
    for copies in masters:
        for p in copies:
            p.grad = torch.ones_like(p)
    adam.step()
    inner = adam.state_dict()
    if not distributed_optimizer:  # Float16OptimizerWithFloat16Params.state_dict
        return {'optimizer': inner, 'fp32_from_fp16_params': masters}
    step = list({s['step'].item() for s in inner['state'].values()})[0]
    state = {'optimizer': {k: v for k, v in inner.items() if k != 'state'}}
    for g in state['optimizer']['param_groups']:
        del g['params']
        g['step'] = step
    return state


def rng_state():
    from megatron.core.rerun_state_machine import get_rerun_state_machine  # noqa: F401
    cuda_state = torch.zeros(16, dtype=torch.uint8)
    return [{'random_rng_state': random.getstate(), 'np_rng_state': np.random.get_state(),
             'torch_rng_state': torch.get_rng_state(), 'cuda_rng_state': cuda_state,
             'rng_tracker_states': {'model-parallel-rng': cuda_state.clone()}}]


def scheduler_state(model):
    from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler
    adam = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-4)
    return OptimizerParamScheduler(adam, init_lr=0.0, max_lr=1e-4, min_lr=0.0, lr_warmup_steps=0,
                                   lr_decay_steps=1000, lr_decay_style='cosine',
                                   start_wd=0.01, end_wd=0.01, wd_incr_steps=1000,
                                   wd_incr_style='constant').state_dict()


def get_rerun_state(ckpt_format='torch'):
    from megatron.core.rerun_state_machine import get_rerun_state_machine
    return get_rerun_state_machine().state_dict(data_iterator=None, ckpt_format=ckpt_format)


def saved(obj, name):
    """torch.save into a file named `name` (the archive's records are named after it)."""
    path = os.path.join(OUT_DIR, name)
    torch.save(obj, path)
    with zipfile.ZipFile(path) as z:
        records = [(i.filename.split('/', 1)[1], i.file_size) for i in z.infolist()]
    return {'bytes': os.path.getsize(path), 'pickle_bytes': records[0][1],
            'storages': [n for r, n in records if r.startswith('data/')]}


def distrib_optim_state(model):
    """DistributedOptimizer.get_parameter_state_dp_zero on DP rank 0: one buffer, unpadded."""
    numel = sum(p.numel() for p in model.parameters())
    world = {key: torch.zeros((numel,), dtype=torch.float32)
             for key in ('param', 'exp_avg', 'exp_avg_sq')}
    world['numel_unpadded'] = numel
    return {'buckets_coalesced': True, 0: {(torch.bfloat16, torch.float32): world}}


def seed():
    """Megatron's _set_random_seed with the default --seed 1234 (pipeline rank 0). Python's
    generator state pickles each of its 624 words in 5 bytes below 2^31 and in 7 above, so its
    size follows the generator's position: seeded, the measured files do not vary."""
    random.seed(1234)
    np.random.seed(1234)
    torch.manual_seed(1234)


def measure(arguments, shape, distributed_optimizer):
    seed()
    model = gpt_model(shape)
    args = parsed_args(arguments, shape, distributed_optimizer)
    model_sd = model.state_dict_for_save_checkpoint()
    state = {'args': args, 'checkpoint_version': 3.0, 'iteration': 1, 'model': model_sd,
             'optimizer': optimizer_state(model, distributed_optimizer),
             'opt_param_scheduler': scheduler_state(model)}
    rerun = get_rerun_state()
    if rerun:
        state['rerun_state_machine'] = rerun
    state['rng_state'] = rng_state()
    state['num_floating_point_operations_so_far'] = 0
    case = dict(zip(['layers', 'hidden', 'ffn', 'heads', 'kv_groups', 'vocab'], shape),
                distributed_optimizer=distributed_optimizer)
    tensors = [[k, list(v.shape)] for k, v in model_sd.items() if torch.is_tensor(v)]
    rows = [dict(case=case, file='model_optim_rng.pt', tensors=tensors,
                 args_pickle_bytes=len(__import__('pickle').dumps(args, protocol=2)),
                 **saved(state, 'model_optim_rng.pt'))]
    if distributed_optimizer:
        rows.append(dict(case=case, file='distrib_optim.pt',
                         **saved(distrib_optim_state(model), 'distrib_optim.pt')))
    return rows


def measure_common(arguments, shape):
    """common.pt of a torch_dist save with the distributed optimizer (dp_reshardable): what
    dist_checkpointing.save leaves unsharded of save_checkpoint's state dict."""
    from megatron.core import dist_checkpointing
    from megatron.core.dist_checkpointing import ShardedObject
    seed()
    model = gpt_model(shape)
    args = parsed_args(arguments, shape, True, 'torch_dist')
    state = {'args': args, 'checkpoint_version': 3.0, 'iteration': 1,
             'model': model.sharded_state_dict(),
             # DistributedOptimizer.sharded_state_dict: its groups and param_state are sharded
             'optimizer': {'param_state_sharding_type': 'dp_reshardable'},
             'opt_param_scheduler': scheduler_state(model)}
    rerun = get_rerun_state('torch_dist')
    if rerun:
        state['rerun_state_machine'] = rerun
    state['rng_state'] = ShardedObject('rng_state', rng_state(), (1, 1), (0, 0), replica_id=0)
    state['num_floating_point_operations_so_far'] = 0
    metadata = {'distrib_optim_sharding_type': 'dp_reshardable', 'singleton_local_shards': False,
                'chained_optim_avoid_prefix': True}
    save_dir = os.path.join(OUT_DIR, 'dist')
    os.makedirs(save_dir)
    # The writer waits for the GPU before it copies tensors to the host (as in
    # measure_megatron_metadata.py); here everything is on the host.
    torch.cuda.synchronize = lambda *args, **kwargs: None
    torch.cuda.current_device = lambda: 'cpu'
    dist_checkpointing.save(state, save_dir, content_metadata=metadata)
    path = os.path.join(save_dir, 'common.pt')
    with zipfile.ZipFile(path) as z:
        records = [(i.filename.split('/', 1)[1], i.file_size) for i in z.infolist()]
    case = dict(zip(['layers', 'hidden', 'ffn', 'heads', 'kv_groups', 'vocab'], shape),
                distributed_optimizer=True)
    row = dict(case=case, file='common.pt', bytes=os.path.getsize(path),
               pickle_bytes=records[0][1], storages=[n for r, n in records if r.startswith('data/')],
               args_pickle_bytes=len(__import__('pickle').dumps(args, protocol=2)))
    import shutil
    shutil.rmtree(save_dir)
    return row


OUT_DIR = None


def main():
    global OUT_DIR
    import tempfile
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--megatron-lm', required=True, help='a Megatron-LM checkout (core_v0.16.1)')
    parser.add_argument('--out', required=True, help='the JSONL file to write')
    opts = parser.parse_args()
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29811', RANK='0', WORLD_SIZE='1',
                      LOCAL_RANK='0')
    torch.distributed.init_process_group('gloo')
    from megatron.core import parallel_state
    parallel_state.initialize_model_parallel(1, 1)
    arguments = megatron_arguments(opts.megatron_lm)
    import megatron.core
    with tempfile.TemporaryDirectory() as OUT_DIR, open(opts.out, 'w') as out:
        out.write(json.dumps({'megatron_core': megatron.core.__version__,
                              'torch': torch.__version__}) + '\n')
        for shape in SHAPES:
            for distributed_optimizer in (False, True):
                for row in measure(arguments, shape, distributed_optimizer):
                    out.write(json.dumps(row, sort_keys=True) + '\n')
            out.write(json.dumps(measure_common(arguments, shape), sort_keys=True) + '\n')


if __name__ == '__main__':
    main()
