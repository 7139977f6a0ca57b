#!/usr/bin/env python3
"""What torch.save writes for one tensor, measured: the ground truth of
harness/formats/torch_save_size (tests/unit/formats/torch_save_size_test.cpp reads the lines this
prints). Needs torch (a venv outside the repository); CI does not run this.

For 40 seeded shapes of 0 to 5 dimensions (sizes from 0 to 70,000, empty tensors included) in
each of ckptbench's five dtypes, one JSON line: dtype, shape, and the bytes torch.save wrote to
a stream (archive name "archive", as torch.distributed.checkpoint writes each item).

  measure_torch_save.py > torch_save_sizes.jsonl
"""
import io
import json
import math
import random

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
          "fp64": torch.float64, "fp8": torch.float8_e4m3fn}


def main():
    rng = random.Random(25)
    for name, dtype in DTYPES.items():
        made = 0
        while made < 40:
            shape = [rng.choice([0, 1, 2, 3, 7, 64, 255, 256, 300, 1000, 70000])
                     for _ in range(rng.randint(0, 5))]
            if math.prod(shape) > 3_000_000:
                continue
            stream = io.BytesIO()
            torch.save(torch.zeros(shape, dtype=dtype), stream)
            print(json.dumps({"torch": torch.__version__, "dtype": name, "shape": shape,
                              "bytes": len(stream.getvalue())}))
            made += 1


if __name__ == "__main__":
    main()
