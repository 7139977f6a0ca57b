#!/usr/bin/env python3
"""Ground truth for model.weights = "fp8_block": the tensors of a fine-grained FP8 checkpoint.

  /work/venv-fidelity/bin/python tests/data/hf/fp8/make_fp8_fixtures.py [NAME...]

rewrites tests/data/hf/fp8/<name>.json for the models of tests/data/hf/fixtures/<name>/config.json
(small-llama and small-deepseek-v3 by default). CI does not run it: the C++ tests read its output.

Each model is built on the meta device in bfloat16 and its modules replaced as transformers does
when it loads a pre-quantized FineGrainedFP8 checkpoint (FineGrainedFP8HfQuantizer with
FineGrainedFP8Config's defaults: replace_with_fp8_linear, skipping the quantizer's
modules_to_not_convert). The state dict save_pretrained writes (tied copies dropped, fused
in-memory experts turned back into the checkpoint's per-expert tensors) gives every tensor's name,
dtype as safetensors names it, and shape. Also recorded: the quantization_config a saved
config.json carries and the modules left in bfloat16.

transformers 5.24's reverse conversion splits the fused FP8 experts' weights back into per-expert
tensors but leaves their scales fused (experts.gate_up_proj_scale_inv [E, 2f/128, h/128],
experts.down_proj_scale_inv [E, h/128, f/128]); DeepSeek-V3's published checkpoint holds them per
expert (experts.N.gate_proj.weight_scale_inv), so this script splits them as the weights are split
(the first half of gate_up's rows is gate, the second up), which needs f a multiple of 128.
"""
import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, FineGrainedFP8Config
from transformers.core_model_loading import revert_weight_conversion
from transformers.integrations.finegrained_fp8 import replace_with_fp8_linear
from transformers.modeling_utils import remove_tied_weights_from_state_dict
from transformers.quantizers.quantizer_finegrained_fp8 import FineGrainedFP8HfQuantizer

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
DEFAULT = ["small-llama", "small-deepseek-v3"]
SAFETENSORS_DTYPES = {torch.float8_e4m3fn: "F8_E4M3", torch.bfloat16: "BF16", torch.float32: "F32"}


def fp8_tensors(name):
    config = AutoConfig.from_pretrained(FIXTURES / name)
    quantization = FineGrainedFP8Config()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    quantizer = FineGrainedFP8HfQuantizer(quantization, pre_quantized=True)
    skip = quantizer.get_modules_to_not_convert(model, quantization.modules_to_not_convert,
                                                model._keep_in_fp32_modules)
    replace_with_fp8_linear(model, modules_to_not_convert=skip, quantization_config=quantization,
                            pre_quantized=True)
    state = remove_tied_weights_from_state_dict(dict(model.state_dict()), model)
    state = revert_weight_conversion(model, state)
    tensors = {k: {"dtype": SAFETENSORS_DTYPES[v.dtype], "shape": list(v.shape)}
               for k, v in sorted(state.items())}
    split_expert_scales(tensors)
    saved = quantization.to_dict()
    return {"transformers": transformers.__version__,
            "quantization_config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(saved.items())},
            "modules_not_converted": sorted(skip),
            "tensors": tensors}


def split_expert_scales(tensors):
    """Fused experts' scales -> the per-expert scales of the checkpoint (see above)."""
    for name in [k for k in tensors if k.endswith(".experts.gate_up_proj_scale_inv")]:
        prefix = name.removesuffix("gate_up_proj_scale_inv")
        experts, rows, cols = tensors.pop(name)["shape"]
        assert rows % 2 == 0, f"{name}: gate_up's scale rows do not split in two"
        for e in range(experts):
            for half in ("gate_proj", "up_proj"):
                tensors[f"{prefix}{e}.{half}.weight_scale_inv"] = {"dtype": "F32", "shape": [rows // 2, cols]}
        experts, rows, cols = tensors.pop(prefix + "down_proj_scale_inv")["shape"]
        for e in range(experts):
            tensors[f"{prefix}{e}.down_proj.weight_scale_inv"] = {"dtype": "F32", "shape": [rows, cols]}


def main():
    for name in sys.argv[1:] or DEFAULT:
        out = HERE / f"{name}.json"
        out.write_text(json.dumps(fp8_tensors(name), indent=1, sort_keys=True) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
