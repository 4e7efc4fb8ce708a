"""Writes inputs x and w for named_args.mlir and the loss and gradients
computed in Python (double precision): reference.safetensors, and the loss
alone in reference-loss.safetensors.

usage: named_args_case.py OUT_DIR ROWS
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
rows = int(sys.argv[2])
os.makedirs(out, exist_ok=True)
rng = random.Random(rows)
x = [rng.uniform(-1, 1) for _ in range(rows * 4)]
w = [rng.uniform(-1, 1) for _ in range(rows * 4)]
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [rows, 4], x), "w": ("F32", [rows, 4], w)})
loss = ("F32", [], [sum(a * b for a, b in zip(x, w))])
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": loss, "grad.x": ("F32", [rows, 4], w),
    "grad.w": ("F32", [rows, 4], x)})
safetensors_util.write(os.path.join(out, "reference-loss.safetensors"),
                       {"result0": loss})
