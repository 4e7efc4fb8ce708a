"""Writes an input for upstream_ops.mlir and each entry's result in Python.

usage: upstream_ops_case.py OUT_DIR ROWS
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
x = [rng.uniform(-2, 2) for _ in range(rows)]
safetensors_util.write(os.path.join(out, "inputs.safetensors"),
                       {"x": ("F32", [rows], x)})
results = {
    "complex_abs": [math.sqrt(5.0) * abs(v) for v in x],
    "integer_cube": [float(int(v * 10.0) ** 3) for v in x],
    "unused_poison": x,
    "tensor_tanh": [math.tanh(2 * v) for v in x],
}
for name, values in results.items():
    safetensors_util.write(os.path.join(out, name + ".safetensors"),
                           {"result0": ("F32", [rows], values)})
safetensors_util.write(os.path.join(out, "concat.safetensors"), {
    "result0": ("F32", [2 * rows], x + [-v for v in x])})
safetensors_util.write(os.path.join(out, "tosa_ops.safetensors"), {
    "result0": ("F32", [rows], [abs(v) + v for v in x]),
    "result1": ("F32", [1], [sum(v * v for v in x)])})
