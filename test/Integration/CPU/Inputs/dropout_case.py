"""Writes inputs for dropout.mlir and the expected results, with the mask
computed by an independent Philox-4x32-10 in Python integers.

usage: dropout_case.py OUT_DIR ROWS SEED OFFSET
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402
from dropout_mask import kept  # noqa: E402


def dropout(values, rate, seed, offset):
    scale = 1.0 / (1.0 - rate)
    return [v * scale if kept(e, rate, seed, offset) else 0.0
            for e, v in enumerate(values)]


out, rows, seed, offset = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4])
os.makedirs(out, exist_ok=True)
rng = random.Random(rows * 7 + seed)
x = [rng.uniform(-2, 2) for _ in range(rows * 15)]
w = [rng.uniform(-2, 2) for _ in range(rows * 7)]
u = [rng.uniform(-2, 2) for _ in range(rows * 70)]
s = [rng.uniform(-2, 2) for _ in range(rows)]
signed = lambda v: v - (1 << 64) if v >= 1 << 63 else v  # noqa: E731
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [rows, 3, 5], x), "w": ("F32", [rows, 7], w),
    "u": ("F32", [rows, 70], u), "s": ("F32", [rows], s),
    "rng": ("I64", [2], [signed(seed), signed(offset)])})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
a = dropout(x, 0.3, seed, offset)
b = dropout(w, 0.75, seed, offset + rows * 15)
c = dropout(u, 0.1, seed, offset + rows * 22)
d = dropout(s, 0.5, seed, offset + rows * 92)
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [rows, 3, 5], a), "result1": ("F32", [rows, 7], b),
    "result2": ("F32", [rows, 70], c), "result3": ("F32", [rows], d)})
share = sum(v != 0 for v in a) / max(len(a), 1)
print("kept %.2f of x" % share)
