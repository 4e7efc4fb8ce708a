"""Writes a graph and inputs for elementwise.mlir and its results computed
in Python (double precision).

usage: elementwise_case.py OUT_DIR NUM_SRC NUM_DST EDGES [BAD_ID_AT...]

The gather's ids: 2 * NUM_DST + 1 entries, each a destination node; with
BAD_ID_AT, those entries are NUM_DST + 1000 + the entry (out of range).
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
bad = [int(a) for a in sys.argv[5:]]
os.makedirs(out, exist_ok=True)
rng = random.Random(ns * 7919 + nd * 31 + ne)
src = [rng.randrange(ns) for _ in range(ne)] if ns else []
dst = [rng.randrange(nd) for _ in range(ne)] if nd else []
H, D = 3, 12


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
ids = [rng.randrange(nd) if nd else 0 for _ in range(2 * nd + 1)]
for at in bad:
    ids[at] = nd + 1000 + at
k = []
for i in ids:
    k.extend(y[i * H * D:(i + 1) * H * D] if i < nd else [0.0] * (H * D))
sc = list(y)
for at, i in enumerate(ids):
    for j in range(H * D if i < nd else 0):
        sc[i * H * D + j] += k[at * H * D + j]

safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [ne], src), "dst": ("I64", [ne], dst),
    "num_src": ("I64", [], [ns]), "num_dst": ("I64", [], [nd])})
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [ns, H, D], x), "w": ("F32", [ns, H, 1], w),
    "y": ("F32", [nd, H, D], y), "r": ("F32", [H, D], r),
    "ids": ("I64", [len(ids)], ids)})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [ns, H, D], n), "result1": ("F32", [ne, H, D], u),
    "result2": ("F32", [ne, H, D], m), "result3": ("F32", [nd, H, D], b),
    "result4": ("F32", [len(ids), H, D], k),
    "result5": ("F32", [nd, H, D], sc)})
