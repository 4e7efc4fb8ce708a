"""Writes inputs for row_ops.mlir and its results computed in Python
(double precision).

usage: row_ops_case.py OUT_DIR ROWS WIDTH [SPREAD] [--long-weight]

Inputs are uniform in [-SPREAD, SPREAD] (default 3) around a per-row
offset, so that log-softmax's maximum matters and layer norm's mean is not
zero. --long-weight gives the weight one element more than a row (an
error).
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

long_weight = "--long-weight" in sys.argv
args = [a for a in sys.argv[1:] if not a.startswith("--")]
out = args[0]
rows, width = int(args[1]), int(args[2])
spread = float(args[3]) if len(args) > 3 else 3.0
os.makedirs(out, exist_ok=True)
rng = random.Random(rows * 7919 + width)
EPS = 1e-5


def f32(v):
    """v rounded to float32, as the program reads it."""
    import struct
    return struct.unpack("f", struct.pack("f", v))[0]


def uniform(count, lo, hi):
    return [f32(rng.uniform(lo, hi)) for _ in range(count)]


x = []
for _ in range(rows):
    offset = rng.uniform(-20, 20)
    x.extend(f32(offset + rng.uniform(-spread, spread)) for _ in range(width))
w, b = uniform(width, 0.5, 1.5), uniform(width, -1, 1)
dy, a = uniform(rows * width, -1, 1), uniform(rows * width, -1, 1)
h = uniform(rows * 3 * width, -1, 1)

n, dx, dxh, dxa, ls = [], [], [], [], []
for r in range(rows):
    row = x[r * width:(r + 1) * width]
    g_row = dy[r * width:(r + 1) * width]
    mean = sum(row) / width
    var = sum((v - mean) ** 2 for v in row) / width
    inv = 1.0 / math.sqrt(var + EPS)
    xh = [(v - mean) * inv for v in row]
    n.extend(h * w[j] + b[j] for j, h in enumerate(xh))
    g = [g_row[j] * w[j] for j in range(width)]
    mean_g = sum(g) / width
    mean_gx = sum(g[j] * xh[j] for j in range(width)) / width
    d = [inv * (g[j] - mean_g - xh[j] * mean_gx) for j in range(width)]
    dx.extend(d)
    dxa.extend(d[j] + a[r * width + j] for j in range(width))
    dxh.extend(g_row[j] * xh[j] for j in range(width))
    top = max(row)
    shift = top + math.log(sum(math.exp(v - top) for v in row))
    ls.extend(v - shift for v in row)
sums = [sum(x[r * width:(r + 1) * width]) for r in range(rows)]
sums3 = [sum(h[i * width:(i + 1) * width]) for i in range(rows * 3)]

shape = [rows, width]
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", shape, x),
    "w": ("F32", [width + long_weight], w + [1.0] * long_weight),
    "b": ("F32", [width], b),
    "dy": ("F32", shape, dy), "a": ("F32", shape, a),
    "x64": ("F64", shape, x), "h": ("F32", [rows, 3, width], h)})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", shape, n), "result1": ("F32", shape, dx),
    "result2": ("F32", shape, dxh), "result3": ("F32", shape, dxa),
    "result4": ("F32", shape, dxh), "result5": ("F32", shape, ls),
    "result6": ("F64", shape, ls), "result7": ("F32", [rows, 1], sums),
    "result8": ("F32", [rows, 3, 1], sums3)})
