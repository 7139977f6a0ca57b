#!/usr/bin/env python3
"""Ground truth for `ckptbench layout --model config.json`, taken from transformers itself.

Needs torch, transformers and safetensors (a venv outside the repository, e.g.
`python3 -m venv /work/venv-fidelity && /work/venv-fidelity/bin/pip install torch transformers safetensors`).
CI does not run this script: it runs the C++ tests against the fixtures it wrote.

  make_fixtures.py fixtures [NAME...]  rewrite tests/data/hf/fixtures/<name>/{config,expected}.json (all, or those named)
  make_fixtures.py measure CKPTBENCH   lay out the default config of every decoder-only causal-LM
                                       type transformers knows and compare with the model
  make_fixtures.py saved [NAME...]     rewrite tests/data/hf/saved/<name>.json: the files save_pretrained
                                       writes (names, sizes, headers, index) at several max_shard_size
  make_fixtures.py split [NAME...]     rewrite tests/data/hf/saved/split.json: for each small fixture the order
                                       save_pretrained meets its tensors in and the file of every tensor
                                       in a real save at a fifth of the model's bytes
  make_fixtures.py modules              print the module-order lists of harness/models/hf_save_orders.cpp,
                                       derived from split.json
  make_fixtures.py files CKPTBENCH [NAME...]
                                       write small fixtures with save_pretrained and with ckptbench
                                       (safetensors, weights) and compare the files' headers

Each model is built on the meta device (no memory for weights). The expected tensors are the
names and shapes `save_pretrained` writes: tied copies dropped, and transformers' fused
in-memory forms (e.g. MoE experts as one 3-D parameter) turned back into the checkpoint's
per-expert tensors by the same reverse conversion save_pretrained applies (families whose
checkpoints hold the experts fused, such as gpt-oss, Llama 4 and GraniteMoE, keep them fused).
Each model is built in bfloat16; ckptbench writes one weight dtype, so a fixture records how
many tensors transformers keeps in another dtype (not_bfloat16) and one of them.
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.core_model_loading import revert_weight_conversion
from transformers.modeling_utils import remove_tied_weights_from_state_dict
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

from fixture_configs import FIXTURES, FULL_LIST

HERE = Path(__file__).resolve().parent


def saved_tensors(config):
    """name -> shape as save_pretrained writes them, and the elements they hold."""
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    # save_pretrained's own rule for tied tensors: of the names sharing one tensor it keeps the
    # one that _tied_weights_keys does not name (XLM-R keeps roberta.embeddings.*, though its
    # lm_head registers first; Zamba keeps the first layer's shared block).
    state = remove_tied_weights_from_state_dict(dict(model.state_dict()), model)
    ignored = getattr(model, "_keys_to_ignore_on_save", None) or []
    state = {k: v for k, v in state.items() if k not in ignored}
    state = revert_weight_conversion(model, state)
    # ckptbench writes every weight in one dtype; tensors a model keeps in another (DeepSeek-V3's
    # router in float32) are recorded so the tests and docs can name them.
    other = {k: str(v.dtype).removeprefix("torch.") for k, v in state.items() if v.dtype != torch.bfloat16}
    # The count is of what the checkpoint holds: parameters and persistent buffers such as
    # DeepSeek-V3's e_score_correction_bias, as ckptbench counts them.
    return {k: list(v.shape) for k, v in state.items()}, sum(v.numel() for v in state.values()), other


def build_config(model_type, keys):
    config = AutoConfig.for_model(model_type, **keys)
    if model_type == "dbrx":
        # transformers 5.24's DbrxAttentionConfig drops rope_theta, which DbrxAttention reads, so
        # no DBRX model builds from a config; the value sizes no tensor.
        config.attn_config.rope_theta = 10000.0
    return config


def digest(tensors):
    """FNV-1a 64 over "name:d0,d1\n" lines in name order (tests/unit/models/hf_fixtures_test.cpp computes the same)."""
    h = 0xCBF29CE484222325
    for name in sorted(tensors):
        for byte in f"{name}:{','.join(str(d) for d in tensors[name])}\n".encode():
            h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def config_json(config):
    return json.loads(config.to_json_string(use_diff=True))


def write_fixtures(only=()):
    root = HERE / "fixtures"
    for name, (model_type, keys) in sorted(FIXTURES.items()):
        if only and name not in only:
            continue
        config = build_config(model_type, keys)
        tensors, parameters, other_dtypes = saved_tensors(config)
        out = root / name
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(config_json(config), indent=1, sort_keys=True) + "\n")
        expected = {"transformers": transformers.__version__, "parameters": parameters,
                    "tensor_count": len(tensors), "digest": digest(tensors)}
        if other_dtypes:
            expected["not_bfloat16"] = len(other_dtypes)
            expected["not_bfloat16_example"] = min(other_dtypes.items())
        if name in FULL_LIST:
            expected["tensors"] = {k: tensors[k] for k in sorted(tensors)}
        (out / "expected.json").write_text(json.dumps(expected, indent=0, sort_keys=True) + "\n")
        print(f"{name}: {parameters} parameters, {len(tensors)} tensors")


def decoder_only_types():
    """model_type of every causal LM whose config is one plain decoder (no encoder, no sub-configs)."""
    for model_type in sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES):
        try:
            config = build_config(model_type, {})
        except Exception:  # noqa: BLE001 - a type whose default config does not build is skipped
            continue
        if getattr(config, "is_encoder_decoder", False) or getattr(config, "sub_configs", {}):
            continue
        yield model_type, config


def layout(ckptbench, config_path):
    run = subprocess.run([ckptbench, "layout", "--model", str(config_path), "--state", "weights", "--rank", "0",
                          "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        return None, (run.stderr.strip().splitlines() or ["?"])[-1]
    report = json.loads(run.stdout)
    shards = report["ranks"][0]["shards"]
    return ({s["name"]: s["global_shape"] for s in shards}, report["parameters"]), ""


def compare(ours, theirs):
    (tensors, parameters), (want, want_parameters) = ours, theirs
    problems = []
    if parameters != want_parameters:
        problems.append(f"parameters {parameters} != {want_parameters}")
    missing = sorted(set(want) - set(tensors))
    extra = sorted(set(tensors) - set(want))
    shapes = sorted(k for k in set(want) & set(tensors) if want[k] != tensors[k])
    if missing:
        problems.append(f"{len(missing)} missing e.g. {missing[0]} {want[missing[0]]}")
    if extra:
        problems.append(f"{len(extra)} extra e.g. {extra[0]} {tensors[extra[0]]}")
    if shapes:
        problems.append(f"{len(shapes)} shapes e.g. {shapes[0]} {tensors[shapes[0]]} != {want[shapes[0]]}")
    return problems


# Boolean keys that change tensors in some family; each is flipped on every accepted type.
VARIED_KEYS = ["attention_bias", "mlp_bias", "qkv_bias", "tie_word_embeddings", "use_qk_norm", "qk_layernorm",
               "use_bias", "bias", "lm_head_bias", "parallel_attn", "new_decoder_architecture", "multi_query",
               "mamba_rms_norm", "mamba_proj_bias", "mamba_conv_bias", "projectors_bias", "use_conv_bias",
               "add_bias_linear", "use_shared_attention_adapter", "is_moe", "pre_norm", "adapter_layer_norm",
               "concat_input", "enable_pronunciation", "enable_shape", "use_learned_position_embeddings",
               "layernorm_embedding"]


def variations(ckptbench, model_type, config, directory, counts):
    """Flip each boolean key: the layout must follow transformers or refuse, never differ."""
    base = {k: v for k, v in config_json(config).items() if k not in ("model_type", "transformers_version")}
    for key in VARIED_KEYS:
        value = getattr(config, key, None)
        if not isinstance(value, bool):
            continue
        try:
            changed = AutoConfig.for_model(model_type, **{**base, key: not value})
        except Exception:  # noqa: BLE001 - transformers itself rejects the variation
            continue
        path = directory / f"{key}.json"
        path.write_text(json.dumps({**config_json(changed), key: not value}))
        if getattr(changed, key, None) != (not value):
            continue  # the config class derives this key itself
        try:
            theirs = saved_tensors(changed)[:2]
        except Exception:  # noqa: BLE001 - transformers itself rejects the variation
            continue
        ours, why = layout(ckptbench, path)
        problems = compare(ours, theirs) if ours is not None else []
        kind = "variation wrong" if problems else "variation refused" if ours is None else "variation exact"
        counts[kind] = counts.get(kind, 0) + 1
        if problems:
            print(f"{model_type:24}   {key} = {not value}: WRONG: {'; '.join(problems)}")


def measure(ckptbench, only=None):
    counts = {"exact": 0, "wrong": 0, "refused": 0, "no model": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for model_type, config in decoder_only_types():
            if only and model_type not in only:
                continue
            path = Path(tmp) / model_type / "config.json"
            path.parent.mkdir()
            path.write_text(json.dumps(config_json(config)))
            try:
                theirs = saved_tensors(config)[:2]
            except Exception as e:  # noqa: BLE001
                counts["no model"] += 1
                print(f"{model_type:24} no model: {type(e).__name__}: {str(e)[:100]}")
                continue
            ours, why = layout(ckptbench, path)
            if ours is None:
                counts["refused"] += 1
                print(f"{model_type:24} refused: {why[:160]}")
                continue
            problems = compare(ours, theirs)
            counts["wrong" if problems else "exact"] += 1
            print(f"{model_type:24} {'WRONG: ' + '; '.join(problems) if problems else 'exact'}")
            if not problems:
                variations(ckptbench, model_type, config, Path(tmp) / model_type, counts)
    total = counts["exact"] + counts["wrong"] + counts["refused"]
    print(f"decoder-only causal-LM types: {total}; " + ", ".join(f"{k}: {v}" for k, v in counts.items()))


def safetensors_headers(directory):
    """name -> (dtype, shape, bytes) over every .safetensors file in `directory`."""
    tensors = {}
    for path in sorted(Path(directory).glob("*.safetensors")):
        with open(path, "rb") as f:
            length = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(length))
        header.pop("__metadata__", None)
        for name, entry in header.items():
            begin, end = entry["data_offsets"]
            tensors[name] = (entry["dtype"], entry["shape"], end - begin)
    return tensors


def differs(ours, theirs):
    """(dtype, shape, bytes) of one tensor; a tensor transformers keeps in another dtype than
    bfloat16 is compared by shape (ckptbench writes one dtype)."""
    if ours is None or theirs is None:
        return True
    return ours[1] != theirs[1] if theirs[0] != "BF16" else ours != theirs


def compare_files(ckptbench, names):
    """Write each small fixture with save_pretrained (real bf16 tensors on the CPU) and with
    ckptbench (strategy.format = "safetensors", weights, TP 1): the same names, shapes and bytes,
    and the dtypes but for the tensors transformers keeps in another dtype."""
    root = HERE / "fixtures"
    wrong = 0
    for name in names or sorted(n for n in FIXTURES if n in FULL_LIST):
        with tempfile.TemporaryDirectory() as tmp:
            config = AutoConfig.from_pretrained(root / name)
            model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
            model.save_pretrained(Path(tmp) / "hf")
            campaign = Path(tmp) / "c.toml"
            campaign.write_text(
                f'[campaign]\nname = "f"\ntarget = "{tmp}/target"\ncreate_target = true\nkeep = true\n'
                f'iterations = 1\nwarmup = 0\n[model]\nname = "{root / name / "config.json"}"\n'
                '[state]\nscope = "weights"\n[strategy]\nformat = "safetensors"\n[cache]\npolicy = "none"\n')
            run = subprocess.run([ckptbench, "run", str(campaign), "--output", f"{tmp}/out", "-q"],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{name}: ckptbench failed: {run.stderr.strip()[-200:]}")
                wrong += 1
                continue
            ours_dir = next(p.parent for p in Path(tmp, "target").rglob("*.safetensors"))
            theirs, ours = safetensors_headers(Path(tmp) / "hf"), safetensors_headers(ours_dir)
            problems = [f"{k}: ckptbench {ours.get(k)}, transformers {theirs.get(k)}"
                        for k in sorted(set(theirs) | set(ours)) if differs(ours.get(k), theirs.get(k))]
            wrong += bool(problems)
            print(f"{name}: {'exact' if not problems else 'WRONG: ' + '; '.join(problems[:3])}")
    print(f"files compared; {wrong} differ")


# Fixtures whose files save_pretrained writes are kept byte for byte (headers, sizes, index):
# name -> the max_shard_size values saved besides the default (one over the embedding's bytes
# and one under it, which gives the embedding a file of its own).
SAVED = {"small-llama": [400000, 1000000], "small-qwen3": [400000], "small-mixtral": [1000000]}


def saved_files(directory):
    """file -> {size, header (the JSON after the length word, padding included)} and the index text."""
    files, index = {}, None
    for path in sorted(Path(directory).iterdir()):
        if path.suffix == ".safetensors":
            with open(path, "rb") as f:
                length = int.from_bytes(f.read(8), "little")
                files[path.name] = {"size": path.stat().st_size, "header": f.read(length).decode()}
        elif path.name == "model.safetensors.index.json":
            index = path.read_text()
    return {"files": files, "index": index}


def write_saved(only=()):
    """tests/data/hf/saved/<name>.json: what save_pretrained writes for the fixture's config in
    bfloat16, at its default max_shard_size and at each size of SAVED."""
    out = HERE / "saved"
    out.mkdir(exist_ok=True)
    for name, limits in sorted(SAVED.items()):
        if only and name not in only:
            continue
        config = AutoConfig.from_pretrained(HERE / "fixtures" / name)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        saved = {"transformers": transformers.__version__, "max_shard_size": {}}
        for limit in [None] + limits:
            with tempfile.TemporaryDirectory() as tmp:
                model.save_pretrained(tmp, **({} if limit is None else {"max_shard_size": limit}))
                saved["max_shard_size"][str(limit or "default")] = saved_files(tmp)
        (out / f"{name}.json").write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")
        print(f"{name}: " + ", ".join(f"{k}: {len(v['files'])} files" for k, v in saved["max_shard_size"].items()))


def save_order(model):
    """The state dict save_pretrained splits, in its order, and whether weight conversions re-sorted it
    (revert_weight_conversion sorts every name naturally when a family has any conversion)."""
    from transformers.conversion_mapping import get_model_conversion_mapping
    from transformers.core_model_loading import PrefixChange
    state = remove_tied_weights_from_state_dict(dict(model.state_dict()), model)
    ignored = getattr(model, "_keys_to_ignore_on_save", None) or []
    state = {k: v for k, v in state.items() if k not in ignored}
    conversions = [c for c in get_model_conversion_mapping(model, add_legacy=False) if not isinstance(c, PrefixChange)]
    return revert_weight_conversion(model, state), bool(conversions)


def write_split(only=()):
    """tests/data/hf/saved/split.json: for each small fixture, the order in which save_pretrained's split
    (huggingface_hub's split_torch_state_dict_into_shards) meets the tensors, the tensors that share one
    storage (split as one), and the file of every tensor when a real bf16 model is saved with
    max_shard_size at a fifth of its tensor bytes. Indices are into the fixture's tensors in name order."""
    from huggingface_hub.serialization._torch import get_torch_storage_id, get_torch_storage_size
    out_path = HERE / "saved" / "split.json"
    split = json.loads(out_path.read_text()) if out_path.exists() else {}
    for name in sorted(n for n in FIXTURES if n in FULL_LIST):
        if only and name not in only:
            continue
        config = AutoConfig.from_pretrained(HERE / "fixtures" / name)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        state, resorted = save_order(model)
        names = sorted(state)
        index = {n: i for i, n in enumerate(names)}
        storages = {}
        for key, tensor in state.items():
            storages.setdefault(get_torch_storage_id(tensor), []).append(key)
        groups = [[index[k] for k in keys] + [get_torch_storage_size(state[keys[0]])]
                  for keys in storages.values() if len(keys) > 1]
        total = sum(t.numel() * t.element_size() for t in state.values())
        limit = max(1, total // 5)
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp, max_shard_size=limit)
            index_path = Path(tmp) / "model.safetensors.index.json"
            weight_map = json.loads(index_path.read_text())["weight_map"] if index_path.exists() else {}
        files = sorted(set(weight_map.values()))
        split[name] = {"resorted": resorted, "limit": limit, "order": [index[k] for k in state],
                       "groups": groups, "file": [files.index(weight_map[n]) if weight_map else 0 for n in names]}
        print(f"{name}: {len(names)} tensors, {len(files) or 1} files, {len(groups)} shared storages"
              f"{', re-sorted' if resorted else ''}")
    out_path.write_text("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                                           for k, v in sorted(split.items())) + "\n}\n")


def split_orders():
    """fixture -> (model_type, its tensors in save order) for each fixture of split.json saved in module order."""
    split = json.loads((HERE / "saved" / "split.json").read_text())
    out = {}
    for name, entry in split.items():
        if entry["resorted"]:
            continue
        names = sorted(json.loads((HERE / "fixtures" / name / "expected.json").read_text())["tensors"])
        model_type = json.loads((HERE / "fixtures" / name / "config.json").read_text())["model_type"]
        out[name] = (model_type, [names[i] for i in entry["order"]])
    return out


def sibling_pairs(order):
    """(a, b) for each two children of one module where the state dict meets a first."""
    children = {}
    for name in order:
        parts = name.split(".")
        for depth, part in enumerate(parts):
            kids = children.setdefault(".".join(parts[:depth]), [])
            if not part.isdigit() and part not in kids:
                kids.append(part)
    return {(k[i], k[j]) for k in children.values() for i in range(len(k)) for j in range(i + 1, len(k))}


def ranked(orders):
    """The child names of `orders` (tensor name lists) in one order that keeps every sibling pair, ties by first
    appearance; None where two orders disagree."""
    import heapq
    after, first = {}, {}
    for order in orders:
        for a, b in sibling_pairs(order):
            after.setdefault(a, set()).add(b)
        for name in order:
            for part in name.split("."):
                if not part.isdigit():
                    first.setdefault(part, len(first))
    before = {p: 0 for p in first}
    for a in after:
        for b in after[a]:
            before[b] += 1
    ready = [(first[p], p) for p in first if before[p] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, p = heapq.heappop(ready)
        out.append(p)
        for b in after.get(p, ()):
            before[b] -= 1
            if before[b] == 0:
                heapq.heappush(ready, (first[b], b))
    return out if len(out) == len(first) else None


def print_module_orders():
    """One list for the module-order fixtures that agree with Llama's (taken greedily, Llama first), and a list of
    its own for each model_type whose fixtures do not."""
    orders = split_orders()
    common, own = [], {}
    for name in sorted(orders, key=lambda n: (n != "small-llama", n)):
        model_type, order = orders[name]
        if ranked(common + [order]) is not None:
            common.append(order)
        else:
            own.setdefault(model_type, []).append(order)
    print(f'constexpr std::string_view kModules = "{" ".join(ranked(common))}";')
    for model_type, type_orders in sorted(own.items()):
        # A type whose configs disagree (Zamba tied and untied) keeps its first fixture's.
        names = ranked(type_orders) or ranked(type_orders[:1])
        print(f'{{"{model_type}", "{" ".join(names)}"}},')


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    if len(sys.argv) >= 2 and sys.argv[1] == "fixtures":
        write_fixtures(set(sys.argv[2:]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "saved":
        write_saved(set(sys.argv[2:]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "measure":
        measure(sys.argv[2], set(sys.argv[3:]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "split":
        write_split(set(sys.argv[2:]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "modules":
        print_module_orders()
    elif len(sys.argv) >= 3 and sys.argv[1] == "files":
        compare_files(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
