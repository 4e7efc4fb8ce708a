"""Writes a graph and inputs for elementwise.mlir and its results computed
in Python (double precision).

usage: elementwise_case.py OUT_DIR NUM_SRC NUM_DST EDGES
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
ns, nd, ne = (int(a) for a in sys.argv[2:5])
os.makedirs(out, exist_ok=True)
rng = random.Random(ns * 7919 + nd * 31 + ne)
src = [rng.randrange(ns) for _ in range(ne)] if ns else []
dst = [rng.randrange(nd) for _ in range(ne)] if nd else []
H, D = 3, 5


def rand(*shape):
    count = 1
    for s in shape:
        count *= s
    return [rng.uniform(-2, 2) for _ in range(count)]


x, w, y, r = rand(ns, H, D), rand(ns, H, 1), rand(nd, H, D), rand(H, D)
n = [x[i] * w[i // D] + math.exp(x[i]) for i in range(ns * H * D)]
u, m, b = [], [], []
for s, d in zip(src, dst):
    for j in range(H * D):
        a, c = x[s * H * D + j], y[d * H * D + j]
        u.append(math.tanh(a - c))
        m.append(max(0.0, 2.0 * a * c))
for _ in range(nd):
    b.extend(r)

safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [ne], src), "dst": ("I64", [ne], dst),
    "num_src": ("I64", [], [ns]), "num_dst": ("I64", [], [nd])})
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [ns, H, D], x), "w": ("F32", [ns, H, 1], w),
    "y": ("F32", [nd, H, D], y), "r": ("F32", [H, D], r)})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [ns, H, D], n), "result1": ("F32", [ne, H, D], u),
    "result2": ("F32", [ne, H, D], m), "result3": ("F32", [nd, H, D], b)})
