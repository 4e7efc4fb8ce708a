"""Writes an input for sum_to.mlir and each result summed in Python.

usage: sum_to_case.py OUT_DIR ROWS [ITEMS WIDTH]

ITEMS x WIDTH is each row's shape (3 x 4 unless given): widths past the
CPU's 8 vector lanes, and not a multiple of them, take whole and partial
vectors.
"""

import itertools
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out, rows = sys.argv[1], int(sys.argv[2])
items, width = map(int, sys.argv[3:5]) if len(sys.argv) > 3 else (3, 4)
os.makedirs(out, exist_ok=True)
rng = random.Random(rows)
shape = (rows, items, width)
x = [rng.uniform(-1, 1) for _ in range(rows * items * width)]


def summed(target):
    """x summed to `target` (aligned from the right, 1 or the input's size)."""
    offset = len(shape) - len(target)
    result = {}
    for at in itertools.product(*map(range, shape)):
        key = tuple(0 if target[d - offset] == 1 else at[d]
                    for d in range(offset, len(shape)))
        value = x[(at[0] * items + at[1]) * width + at[2]]
        result[key] = result.get(key, 0.0) + value
    keys = itertools.product(*[range(n) for n in target])
    return [result.get(k, 0.0) for k in keys]


targets = [(rows, items, 1), (rows, 1, width), (items, width),
           (1, items, 1), (width,), ()]
safetensors_util.write(os.path.join(out, "inputs.safetensors"),
                       {"x": ("F32", list(shape), x)})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    f"result{i}": ("F32", list(t), summed(t)) for i, t in enumerate(targets)})
