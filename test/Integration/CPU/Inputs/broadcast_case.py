"""Writes inputs for broadcast.mlir and each result broadcast in Python.

usage: broadcast_case.py OUT_DIR ROWS [bad]

With `bad`: only c (one row too many) and x, for @rows.
"""

import itertools
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out, rows = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
rng = random.Random(rows + 5)
shape = (rows, 3, 4)
inputs = {"s": [], "r": [4], "c": [rows, 3, 1], "o": [1, 3, 1]}
values = {}
for name, dims in inputs.items():
    count = 1
    for d in dims:
        count *= d
    values[name] = [rng.uniform(-1, 1) for _ in range(count)]


def broadcast(name):
    dims = inputs[name]
    offset = len(shape) - len(dims)
    result = []
    for at in itertools.product(*map(range, shape)):
        flat = 0
        for j, d in enumerate(dims):
            flat = flat * d + (0 if d == 1 else at[offset + j])
        result.append(values[name][flat])
    return result


tensors = {n: ("F32", d, values[n]) for n, d in inputs.items()}
tensors["x"] = ("I32", list(shape), [0] * (rows * 12))
if len(sys.argv) > 3:
    tensors = {"c": ("F32", [rows + 1, 3, 1], [0.0] * ((rows + 1) * 3)),
               "x": tensors["x"]}
safetensors_util.write(os.path.join(out, "inputs.safetensors"), tensors)
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    f"result{i}": ("F32", list(shape), broadcast(n))
    for i, n in enumerate(inputs)})
