"""Writes inputs for elementwise_chains.mlir and the expected results: every
operation rounded to float32 as the program computes it, dropout's mask
from an independent Philox-4x32-10 in Python integers.

usage: elementwise_chains_case.py OUT_DIR ROWS SEED OFFSET
"""

import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402
from dropout_mask import kept  # noqa: E402


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def dropout(values, rate, seed, offset):
    scale = f32(1.0 / (1.0 - rate))
    return [f32(v * scale) if kept(e, rate, seed, offset) else 0.0
            for e, v in enumerate(values)]


out, rows, seed, offset = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4])
os.makedirs(out, exist_ok=True)
rng = random.Random(rows * 11 + seed)
n = rows * 24
x = [f32(rng.uniform(-2, 2)) for _ in range(n)]
p = [f32(rng.uniform(-2, 2)) for _ in range(n)]
g = [f32(rng.uniform(-2, 2)) for _ in range(n)]
h = [f32(rng.uniform(-2, 2)) for _ in range(n)]
s = [f32(rng.uniform(-2, 2)) for _ in range(rows * 2)]
signed = lambda v: v - (1 << 64) if v >= 1 << 63 else v  # noqa: E731
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [rows, 24], x), "p": ("F32", [rows, 24], p),
    "g": ("F32", [rows, 2, 12], g), "h": ("F32", [rows, 2, 12], h),
    "s": ("F32", [rows, 2, 1], s),
    "rng": ("I64", [2], [signed(seed), signed(offset)])})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
d = dropout([max(v, 0.0) for v in p], 0.1, seed, offset)
y = [f32(a + b) for a, b in zip(x, d)]
# Element e of [rows, 2, 12] is row e // 24, head (e // 12) % 2.
t = [f32(f32(g[e] + h[e]) * s[e // 12]) for e in range(n)]
z = [f32(v * 0.5) for v in dropout(t, 0.25, seed, offset + n)]
q = dropout(p, 0.5, seed, offset + 2 * n)
w = [f32(f32(a * a) + c) for a, c in zip(q, x)]
k = [-v for v in x]
kd = dropout(k, 0.3, seed, offset + 3 * n)
m1 = [f32(f32(a * f32(0.9)) + f32(b * f32(0.1))) for a, b in zip(x, p)]
v1 = [f32(f32(f32(a * a) * 0.5) + f32(b * b)) for a, b in zip(x, p)]
# sqrt and division of float32 values computed in double, then rounded:
# the correctly rounded float32 results.
p1 = [f32(a - f32(f32(0.01) * f32(b / f32(f32(math.sqrt(c)) + 1.0))))
      for a, b, c in zip(p, m1, v1)]
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [rows, 24], y), "result1": ("F32", [rows, 2, 12], z),
    "result2": ("F32", [rows, 24], w), "result3": ("F32", [rows, 24], k),
    "result4": ("F32", [rows, 24], kd), "result5": ("F32", [rows, 24], p1),
    "result6": ("F32", [rows, 24], m1), "result7": ("F32", [rows, 24], v1)})
