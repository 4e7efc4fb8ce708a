"""Writes a random graph and q, k, v, w for attention_grad.mlir.

usage: attention_grad_case.py OUT_DIR NUM_SRC NUM_DST EDGES SCORE_SCALE
                              [isolated]
SCORE_SCALE multiplies q (large scores exercise the clamp and the exact
softmax's shift). Every destination gets an in-edge (the unfused
normalization divides 0 by 0 elsewhere, as DGL does), or with `isolated`
the last one gets none.
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
ns, nd, ne = (int(a) for a in sys.argv[2:5])
scale = float(sys.argv[5])
os.makedirs(out, exist_ok=True)
rng = random.Random(ns * 7919 + nd * 31 + ne)
isolated = len(sys.argv) > 6
reached = nd - 1 if isolated else nd
dst = [i % reached for i in range(ne)] if reached else []
rng.shuffle(dst)
src = [rng.randrange(ns) for _ in range(ne)]


def rand(rows, factor=1.0):
    return [factor * rng.uniform(-1, 1) for _ in range(rows * 16)]


safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [ne], src), "dst": ("I64", [ne], dst),
    "num_src": ("I64", [], [ns]), "num_dst": ("I64", [], [nd])})
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "q": ("F32", [nd, 2, 8], rand(nd, scale)),
    "k": ("F32", [ns, 2, 8], rand(ns)), "v": ("F32", [ns, 2, 8], rand(ns)),
    "w": ("F32", [nd, 2, 8], rand(nd))})
