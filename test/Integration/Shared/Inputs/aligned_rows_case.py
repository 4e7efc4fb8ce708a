"""Writes a batch of complete blocks, x and d for aligned_rows.mlir and the
reference results in double precision.

usage: aligned_rows_case.py OUT_DIR

x holds a float of padding, then q, k and v ([n, 2, 8] each) one after
another; @offset reads them from there, @aligned from x[0:] (the same
values: @aligned's reference is written for x shifted by one). The
reference is normalized attention with score scale 0.35 (out) and its
gradients for the upstream gradient d (dq, dk, dv), as result0-3.
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

HEADS, WIDTH, SCALE = 2, 8, 0.35
# Blocks shorter and longer than a warp's 32 nodes, one of a single node.
LENGTHS = [5, 40, 1, 33, 12]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(25)
    n = sum(LENGTHS)
    src, dst, blocks, start = [], [], [], 0
    for length in LENGTHS:
        nodes = range(start, start + length)
        blocks.append(nodes)
        for v in nodes:
            src += nodes
            dst += [v] * length
        start += length
    qkv = [[[[rng.uniform(-1.5, 1.5) for _ in range(WIDTH)]
             for _ in range(HEADS)] for _ in range(n)] for _ in range(3)]
    d = [[[rng.uniform(-1, 1) for _ in range(WIDTH)] for _ in range(HEADS)]
         for _ in range(n)]

    def part(i, h, first):
        return qkv[{1: 0, 9: 1, 17: 2}[first]][i][h]

    def dot(a, b):
        return sum(p * q for p, q in zip(a, b))

    zeros = [[[0.0] * WIDTH for _ in range(HEADS)] for _ in range(n)]
    o, dq, dk, dv = ([[row[:] for row in node] for node in zeros]
                     for _ in range(4))
    for nodes in blocks:
        for h in range(HEADS):
            for i in nodes:
                q = part(i, h, 1)
                s = [SCALE * dot(q, part(j, h, 9)) for j in nodes]
                top = max(s)
                w = [math.exp(t - top) for t in s]
                total = sum(w)
                p = [t / total for t in w]
                dp = [dot(d[i][h], part(j, h, 17)) for j in nodes]
                big_d = sum(a * b for a, b in zip(p, dp))
                for pj, dpj, j in zip(p, dp, nodes):
                    ds = pj * (dpj - big_d) * SCALE
                    for c in range(WIDTH):
                        o[i][h][c] += pj * part(j, h, 17)[c]
                        dv[j][h][c] += pj * d[i][h][c]
                        dq[i][h][c] += ds * part(j, h, 9)[c]
                        dk[j][h][c] += ds * q[c]

    def flat(t):
        return [e for node in t for row in node for e in row]

    safetensors_util.write(os.path.join(out, "graph.safetensors"), {
        "src": ("I64", [len(src)], src), "dst": ("I64", [len(dst)], dst),
        "num_src": ("I64", [], [n]), "num_dst": ("I64", [], [n])})
    x = [0.5] + [e for t in qkv for e in flat(t)]
    safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
        "x": ("F32", [len(x)], x),
        "d": ("F32", [n, HEADS, WIDTH], flat(d))})
    # @aligned reads x[0:]: the same rows with the padding first.
    safetensors_util.write(os.path.join(out, "shifted.safetensors"), {
        "x": ("F32", [len(x)], x[1:] + [0.5]),
        "d": ("F32", [n, HEADS, WIDTH], flat(d))})
    safetensors_util.write(os.path.join(out, "reference.safetensors"), {
        "result%d" % i: ("F32", [n, HEADS, WIDTH], flat(t))
        for i, t in enumerate([o, dq, dk, dv])})


if __name__ == "__main__":
    main()
