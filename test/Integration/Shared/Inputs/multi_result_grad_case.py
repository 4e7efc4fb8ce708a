"""Writes inputs for multi_result_grad.mlir and, per entry, the results
and gradients from their formulas in Python (double precision).

usage: multi_result_grad_case.py OUT_DIR ROWS
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out, rows = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
rng = random.Random(rows)
n = rows * 5
x = [rng.uniform(-2, 2) for _ in range(n)]
w = [rng.uniform(-2, 2) for _ in range(n)]
shape = [rows, 5]
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", shape, x), "w": ("F32", shape, w)})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
s = [math.sin(a) * b for a, b in zip(x, w)]
c = [a * a for a in x]
# main: loss = sum(s c + c); d/dx = cos(x) w x^2 + 2 x sin(x) w + 2 x,
# d/dw = sin(x) x^2.
safetensors_util.write(os.path.join(out, "main.safetensors"), {
    "result0": ("F32", [], [sum(a * b + b for a, b in zip(s, c))]),
    "result1": ("F32", shape, s), "result2": ("F32", shape, c),
    "grad.x": ("F32", shape, [math.cos(a) * b * a * a +
                              2 * a * math.sin(a) * b + 2 * a
                              for a, b in zip(x, w)]),
    "grad.w": ("F32", shape, [math.sin(a) * a * a for a in x])})
# one_term: loss = sum(s); d/dx = cos(x) w, d/dw = sin(x).
safetensors_util.write(os.path.join(out, "one_term.safetensors"), {
    "result0": ("F32", [], [sum(s)]), "result1": ("F32", shape, c),
    "grad.x": ("F32", shape, [math.cos(a) * b for a, b in zip(x, w)]),
    "grad.w": ("F32", shape, [math.sin(a) for a in x])})
