"""Writes a graph and inputs for grad.mlir and the loss, m and gradients
computed in Python (double precision) from their formulas.

usage: grad_case.py OUT_DIR NUM_SRC NUM_DST EDGES
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
rng = random.Random(ns * 1000 + nd * 10 + ne)
# The last destination receives no edge.
src = [rng.randrange(ns) for _ in range(ne)]
dst = [rng.randrange(max(1, nd - 1)) for _ in range(ne)]
x = [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(ns)]
y = [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(nd)]
m = [[0.0] * 3 for _ in range(nd)]
for u, v in zip(src, dst):
    for j in range(3):
        m[v][j] += x[u][j] * y[v][j]
loss = sum(math.tanh(a) for row in m for a in row)
dm = [[1 - math.tanh(a) ** 2 for a in row] for row in m]
dx = [[0.0] * 3 for _ in range(ns)]
dy = [[0.0] * 3 for _ in range(nd)]
for u, v in zip(src, dst):
    for j in range(3):
        dx[u][j] += dm[v][j] * y[v][j]
        dy[v][j] += dm[v][j] * x[u][j]


def flat(rows):
    return [a for row in rows for a in row]


safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [ne], src), "dst": ("I64", [ne], dst),
    "num_src": ("I64", [], [ns]), "num_dst": ("I64", [], [nd])})
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [ns, 3], flat(x)), "y": ("F32", [nd, 3], flat(y)),
    "ids": ("I64", [2], [0, 0])})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [], [loss]), "result1": ("F32", [nd, 3], flat(m)),
    "grad.x": ("F32", [ns, 3], flat(dx)), "grad.y": ("F32", [nd, 3], flat(dy))})
