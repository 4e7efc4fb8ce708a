"""Writes an input for sum_to.mlir and each result summed in Python.

usage: sum_to_case.py OUT_DIR ROWS
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
rng = random.Random(rows)
shape = (rows, 3, 4)
x = [rng.uniform(-1, 1) for _ in range(rows * 12)]


def summed(target):
    """x summed to `target` (aligned from the right, 1 or the input's size)."""
    offset = len(shape) - len(target)
    result = {}
    for at in itertools.product(*map(range, shape)):
        key = tuple(0 if target[d - offset] == 1 else at[d]
                    for d in range(offset, len(shape)))
        value = x[(at[0] * 3 + at[1]) * 4 + at[2]]
        result[key] = result.get(key, 0.0) + value
    keys = itertools.product(*[range(n) for n in target])
    return [result.get(k, 0.0) for k in keys]


targets = [(rows, 3, 1), (rows, 1, 4), (3, 4), (1, 3, 1), (4,), ()]
safetensors_util.write(os.path.join(out, "inputs.safetensors"),
                       {"x": ("F32", list(shape), x)})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    f"result{i}": ("F32", list(t), summed(t)) for i, t in enumerate(targets)})
