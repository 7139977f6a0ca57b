"""ckptbench's safetensors checkpoints, opened with the Python `safetensors` package.

safetensors_check.py CKPTBENCH PATTERN_BYTES

Writes three small checkpoints with ckptbench (a tiny model's bf16 weights split over three
Hugging Face shards with an index, its fp32 weights in one model.safetensors and no index, and a
model's FP8 block-quantized weights, model.weights = "fp8_block", at TP 2: F8_E4M3 linear weights
beside their F32 weight_scale_inv and BF16 embeddings and norms; and a small gpt-oss's MXFP4
experts, model.weights = "mxfp4", at TP 2: U8 *_blocks and *_scales beside BF16 tensors) and
checks with the official reader: every file opens, its names, shapes and dtypes are those the
manifest records, model.safetensors.index.json lists every tensor in the right file, and the
first and last bytes of every tensor are the deterministic pattern (ckpt_pattern_bytes prints
what ckptbench's fill writes). The numpy API cannot make bf16 arrays, so bf16 values are read
as raw bytes at the header's data_offsets.
"""
import json
import pathlib
import struct
import subprocess
import sys
import tempfile

import numpy
from safetensors import safe_open
from safetensors.numpy import load_file

TINY_MODEL = """name = "tiny"
hidden_size = 64
intermediate_size = 128
num_hidden_layers = 2
num_attention_heads = 4
num_key_value_heads = 2
vocab_size = 256
"""
# Two heads of 128: TP 2 keeps whole 128 x 128 blocks of every FP8 weight.
FP8_MODEL = """name = "fp8-tiny"
hidden_size = 256
intermediate_size = 512
num_hidden_layers = 1
num_attention_heads = 2
num_key_value_heads = 2
vocab_size = 1000
"""
# tests/data/hf/fixtures/small-gpt-oss: 2 layers of 4 experts, hidden 256, expert width 512.
SMALL_GPT_OSS = pathlib.Path(__file__).resolve().parents[1] / "data/hf/fixtures/small-gpt-oss/config.json"
DTYPES = {"bf16": "BF16", "fp32": "F32", "fp16": "F16", "fp8": "F8_E4M3", "fp64": "F64", "u8": "U8"}
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def expected_head_and_tail(pattern_bytes, manifest_path, index, count):
    out = subprocess.run([pattern_bytes, str(manifest_path), str(index), str(count)], check=True,
                         capture_output=True, text=True).stdout.split()
    return bytes.fromhex(out[0]), bytes.fromhex(out[1])


def write_checkpoint(ckptbench, work, name, dtype, max_shard_bytes, model="tiny.toml", more=""):
    campaign = work / f"{name}.toml"
    campaign.write_text(f"""[campaign]
name = "{name}"
target = "{work / 'target'}"
create_target = true
keep = true
iterations = 1
warmup = 0
[model]
name = "{work / model}"
{more}[state]
scope = "weights"
weight_dtype = "{dtype}"
[strategy]
format = "safetensors"
max_shard_bytes = {max_shard_bytes}
[cache]
policy = "none"
""")
    run = subprocess.run([ckptbench, "run", str(campaign), "--output", str(work / "results"), "-q"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ckptbench run {campaign} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    case = work / "target" / name / "case-0000"
    return case / (case / "latest").read_text().strip()


def stored_name(t):
    """The tensor's name in its file: a tensor-parallel slice appends "[b0:e0,b1:e1]"."""
    shape, offset, extent = t["global_shape"], t["offset"], t["extent"]
    name = t["name"]
    if any(o != 0 for o in offset) or extent != shape:
        name += "[" + ",".join(f"{o}:{o + e}" for o, e in zip(offset, extent)) + "]"
    return name


def raw_tensor_bytes(path, name):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        begin, end = header[name]["data_offsets"]
        f.seek(8 + n + begin)
        return f.read(end - begin)


def check_checkpoint(directory, pattern_bytes, files_expected):
    manifest = json.loads((directory / "ckptbench-manifest.json").read_text())
    tensors = {stored_name(t): t for t in manifest["tensors"]}
    positions = {stored_name(t): i for i, t in enumerate(manifest["tensors"])}
    files = sorted(p.name for p in directory.glob("*.safetensors"))
    check(files == files_expected, f"{directory}: files {files}, expected {files_expected}")
    index_path = directory / "model.safetensors.index.json"
    if len(files) == 1:  # save_pretrained writes no index beside one model.safetensors
        check(not index_path.exists(), f"{directory}: an index beside one file")
        index = {"metadata": {"total_size": sum(t["bytes"] for t in tensors.values())},
                 "weight_map": {name: files[0] for name in tensors}}
    else:
        index = json.loads(index_path.read_text())
    check(index["metadata"]["total_size"] == sum(t["bytes"] for t in tensors.values()),
          f"{directory}: index total_size {index['metadata']['total_size']}")
    check(sorted(index["weight_map"]) == sorted(tensors), f"{directory}: index names differ from the manifest's")
    seen = set()
    dtypes = set()
    for file in files:
        path = directory / file
        with safe_open(str(path), framework="numpy") as f:
            check(f.metadata().get("format") == "pt", f"{file}: __metadata__.format {f.metadata().get('format')}")
            for name in f.keys():
                seen.add(name)
                t = tensors.get(name)
                if t is None:
                    failures.append(f"{file}: tensor {name} is not in the manifest")
                    continue
                check(index["weight_map"].get(name) == file, f"{file}: index puts {name} in {index['weight_map'].get(name)}")
                check(t["file"] == file, f"{file}: manifest puts {name} in {t['file']}")
                piece = f.get_slice(name)
                dtype = t["dtype"]
                dtypes.add(piece.get_dtype())
                check(piece.get_dtype() == DTYPES[dtype], f"{file}: {name} dtype {piece.get_dtype()}")
                check(list(piece.get_shape()) == t["extent"], f"{file}: {name} shape {piece.get_shape()} vs {t['extent']}")
                data = f.get_tensor(name).tobytes() if dtype == "fp32" else raw_tensor_bytes(path, name)
                check(len(data) == t["bytes"], f"{file}: {name} has {len(data)} bytes, expected {t['bytes']}")
                head = min(16, len(data))
                first, last = expected_head_and_tail(pattern_bytes, directory / "ckptbench-manifest.json",
                                                     positions[name], head)
                check(data[:head] == first, f"{file}: {name}: first bytes are not the pattern")
                check(data[-head:] == last, f"{file}: {name}: last bytes are not the pattern")
        if all(t["dtype"] == "fp32" for t in tensors.values()):
            arrays = load_file(str(path))  # the whole file through the official loader
            check(all(a.dtype == numpy.float32 for a in arrays.values()), f"{file}: load_file dtypes")
    check(seen == set(tensors), f"{directory}: tensors missing from the files: {sorted(set(tensors) - seen)}")
    return len(seen), dtypes


def check_mxfp4_shapes(directory):
    """TP rank 1's experts as Mxfp4GptOssExperts holds them: gate_up's output rows and down's input
    blocks cut in two."""
    expected = {
        "gate_up_proj_blocks[0:4,512:1024,0:8,0:16]": ("U8", [4, 512, 8, 16]),
        "gate_up_proj_scales[0:4,512:1024,0:8]": ("U8", [4, 512, 8]),
        "down_proj_blocks[0:4,0:256,8:16,0:16]": ("U8", [4, 256, 8, 16]),
        "down_proj_scales[0:4,0:256,8:16]": ("U8", [4, 256, 8]),
        "gate_up_proj_bias[0:4,512:1024]": ("BF16", [4, 512]),
    }
    with safe_open(str(directory / "model-00002-of-00002.safetensors"), framework="numpy") as f:
        for suffix, (dtype, shape) in expected.items():
            name = "model.layers.1.mlp.experts." + suffix
            if name not in f.keys():
                failures.append(f"{directory}: no tensor {name}")
                continue
            piece = f.get_slice(name)
            check((piece.get_dtype(), list(piece.get_shape())) == (dtype, shape),
                  f"{name}: {piece.get_dtype()} {piece.get_shape()}, expected {dtype} {shape}")
        blocks = f.get_tensor("model.layers.1.mlp.experts.down_proj_blocks[0:4,0:256,8:16,0:16]")
        check(blocks.dtype == numpy.uint8 and blocks.shape == (4, 256, 8, 16), "down_proj_blocks as numpy")


def main():
    ckptbench, pattern_bytes = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="ckpt_safetensors_") as tmp:
        work = pathlib.Path(tmp)
        (work / "tiny.toml").write_text(TINY_MODEL)
        (work / "fp8-tiny.toml").write_text(FP8_MODEL)
        bf16 = write_checkpoint(ckptbench, work, "bf16", "bf16", 100000)
        n, _ = check_checkpoint(bf16, pattern_bytes,
                                [f"model-0000{i}-of-00003.safetensors" for i in (1, 2, 3)])
        fp32 = write_checkpoint(ckptbench, work, "fp32", "fp32", 5000000000)
        m, _ = check_checkpoint(fp32, pattern_bytes, ["model.safetensors"])
        fp8 = write_checkpoint(ckptbench, work, "fp8", "bf16", 5000000000, "fp8-tiny.toml",
                               'weights = "fp8_block"\n[parallel]\ntp = 2\n')
        q, fp8_dtypes = check_checkpoint(fp8, pattern_bytes,
                                         [f"model-0000{i}-of-00002.safetensors" for i in (1, 2)])
        # 7 linear weights and 7 scales a rank, the two vocabulary tables, and rank 0's 3 norms.
        check(q == 35, f"{fp8}: {q} tensors, expected 35")
        check(fp8_dtypes == {"F8_E4M3", "F32", "BF16"}, f"{fp8}: dtypes {sorted(fp8_dtypes)}")
        mxfp4 = write_checkpoint(ckptbench, work, "mxfp4", "bf16", 5000000000, SMALL_GPT_OSS,
                                 'weights = "mxfp4"\n[parallel]\ntp = 2\n')
        x, mxfp4_dtypes = check_checkpoint(mxfp4, pattern_bytes,
                                           [f"model-0000{i}-of-00002.safetensors" for i in (1, 2)])
        check_mxfp4_shapes(mxfp4)
        # Each rank: per layer 13 split tensors (4 expert blocks and scales, gate_up's bias, 8 of
        # attention's), and the two vocabulary tables; rank 0 also the 13 it holds alone.
        check(x == 2 * (2 * 13 + 2) + 13, f"{mxfp4}: {x} tensors, expected 69")
        check(mxfp4_dtypes == {"U8", "BF16"}, f"{mxfp4}: dtypes {sorted(mxfp4_dtypes)}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    import safetensors
    print(f"safetensors {safetensors.__version__}: {n} bf16, {m} fp32, {q} fp8-block and {x} mxfp4 tensors "
          "open with the names, shapes, dtypes and bytes ckptbench wrote")


if __name__ == "__main__":
    main()
