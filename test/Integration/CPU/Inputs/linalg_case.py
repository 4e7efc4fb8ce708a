"""Writes inputs for linalg.mlir and its results computed in Python.

usage: linalg_case.py OUT_DIR M K N
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out, m, k, n = sys.argv[1], *map(int, sys.argv[2:5])
os.makedirs(out, exist_ok=True)
rng = random.Random(m * 10007 + k * 101 + n)
a = [[rng.uniform(-1, 1) for _ in range(k)] for _ in range(m)]
b = [[rng.uniform(-1, 1) for _ in range(n)] for _ in range(k)]
bias = [rng.uniform(-1, 1) for _ in range(n)]
prod = [[sum(a[i][l] * b[l][j] for l in range(k)) for j in range(n)]
        for i in range(m)]
relu = [[max(prod[i][j] + bias[j], 0.0) for j in range(n)] for i in range(m)]


def flat(rows):
    return [v for row in rows for v in row]


safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "a": ("F32", [m, k], flat(a)), "b": ("F32", [k, n], flat(b)),
    "bias": ("F32", [n], bias)})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [m, n], flat(prod)),
    "result1": ("F32", [n, m], flat([list(c) for c in zip(*relu)])),
    "result2": ("F32", [m], [sum(row) for row in prod])})
