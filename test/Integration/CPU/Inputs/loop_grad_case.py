"""Writes inputs for loop_grad.mlir and its loss, final state and gradients
in double precision: the gradients by central differences of the loss.

usage: loop_grad_case.py OUT_DIR ROWS STEPS SEED
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
rows, steps, seed = (int(a) for a in sys.argv[2:5])
os.makedirs(out, exist_ok=True)
rng = random.Random(seed)
x = [rng.uniform(-1, 1) for _ in range(rows * 3)]
w = [rng.uniform(-1, 1) for _ in range(9)]


def forward(x, w):
    s = [x[3 * r:3 * r + 3] for r in range(rows)]
    i = 0
    while i < steps and len(s) > 1:
        t = [[math.tanh(sum(row[k] * w[3 * j + k] for k in range(3)))
              for j in range(3)] for row in s]
        s = t[:-1]
        i += 1
    return sum(a * a for row in s for a in row), s


def central(values, index, eps=1e-6):
    def at(delta):
        moved = list(values[0]), list(values[1])
        moved[index[0]][index[1]] += delta
        return forward(*moved)[0]
    return (at(eps) - at(-eps)) / (2 * eps)


loss, final = forward(x, w)
grad_x = [central((x, w), (0, i)) for i in range(len(x))]
grad_w = [central((x, w), (1, i)) for i in range(len(w))]
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "x": ("F32", [rows, 3], x), "w": ("F32", [3, 3], w),
    "ids": ("I64", [rows], list(range(rows))), "steps": ("I64", [1], [steps])})
safetensors_util.write(os.path.join(out, "reference.safetensors"), {
    "result0": ("F32", [], [loss]),
    "result1": ("F32", [len(final), 3], [a for row in final for a in row]),
    "grad.x": ("F32", [rows, 3], grad_x), "grad.w": ("F32", [3, 3], grad_w)})
