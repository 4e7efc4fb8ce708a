"""Writes complete blocks and the inputs of feature_slices.mlir's entries:
q, k and v inside the rows of x, at one index of qkv's second dim, and on
their own (the same values each time).

usage: feature_slices_case.py OUT_DIR
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

LENGTHS = [5, 40, 1, 33]
HEADS, WIDTH = 2, 8

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(31)
n = sum(LENGTHS)
src, dst, start = [], [], 0
for length in LENGTHS:
    nodes = list(range(start, start + length))
    for v in nodes:
        src += nodes
        dst += [v] * length
    start += length
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [len(src)], src), "dst": ("I64", [len(dst)], dst),
    "num_src": ("I64", [], [n]), "num_dst": ("I64", [], [n])})
# x[i][h] = [pad, q (8), k (8), v (8)].
x = [[[rng.uniform(-1.5, 1.5) for _ in range(25)] for _ in range(HEADS)]
     for _ in range(n)]
part = [[[x[i][h][1 + 8 * p:9 + 8 * p] for h in range(HEADS)]
         for i in range(n)] for p in range(3)]


def flat(t):
    out = []
    for e in t:
        out += flat(e) if isinstance(e, list) else [e]
    return out


safetensors_util.write(os.path.join(out, "within_rows.safetensors"), {
    "x": ("F32", [n, HEADS, 25], flat(x))})
safetensors_util.write(os.path.join(out, "rank_reduced.safetensors"), {
    "qkv": ("F32", [n, 3, HEADS, WIDTH],
            flat([[part[p][i] for p in range(3)] for i in range(n)]))})
safetensors_util.write(os.path.join(out, "separate.safetensors"), {
    name: ("F32", [n, HEADS, WIDTH], flat(part[p]))
    for p, name in enumerate(["q", "k", "v"])})
