"""Writes inputs for coo_weighted.mlir and the expected results, computed
here edge by edge: random edge lists (repeated edges, self loops, nodes
without in-edges, more nodes than edges and the reverse) and the reversed
batches of sequences that differentiation builds (complete, causal,
bipartite blocks). Features and weights are small integers, so every sum is
exact whatever its order.

usage: coo_weighted_cases.py OUT_DIR
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(5)


def case(name, src, dst, ns, nd):
    x = [float(rng.randint(-9, 9)) for _ in range(ns)]
    w = [float(rng.randint(1, 9)) for _ in src]
    sums, maxima = [0.0] * nd, [None] * nd
    for s, d, weight in zip(src, dst, w):
        sums[d] += x[s] * weight
        maxima[d] = x[s] if maxima[d] is None else max(maxima[d], x[s])
    # A destination without in-edges gets 0 from max, as from sum.
    maxima = [0.0 if m is None else m for m in maxima]
    safetensors_util.write(os.path.join(out, name + ".safetensors"), {
        "src": ("I64", [len(src)], src), "dst": ("I64", [len(dst)], dst),
        "counts": ("I64", [2], [ns, nd]), "x": ("F32", [ns, 1], x),
        "w": ("F32", [len(w), 1], w)})
    safetensors_util.write(os.path.join(out, name + "-reference.safetensors"), {
        "result0": ("F32", [nd, 1], sums), "result1": ("F32", [nd, 1], maxima)})


def random_case(name, ns, nd, edges):
    case(name, [rng.randrange(ns) for _ in range(edges)],
         [rng.randrange(nd) for _ in range(edges)], ns, nd)


def batch_case(name, kind, lengths):
    src, dst, offset, offset2 = [], [], 0, 0
    for n, m in lengths:
        rows = m if kind == "bipartite" else n
        for d in range(rows):
            last = d + 1 if kind == "causal" else n
            for s in range(last):
                src.append(offset + s)
                dst.append((offset2 if kind == "bipartite" else offset) + d)
        offset += n
        offset2 += m
    nd = offset2 if kind == "bipartite" else offset
    # Reversed: the sources become destinations.
    case(name, dst, src, nd, offset)


random_case("sparse", 300, 500, 700)
random_case("dense", 7, 5, 4000)
random_case("one-destination", 50, 1, 3000)
case("self-loops", list(range(40)) * 3, list(range(40)) * 3, 40, 40)
random_case("no-edges", 9, 6, 0)
lengths = [(rng.randint(1, 40), rng.randint(1, 40)) for _ in range(12)]
for kind in ("complete", "causal", "bipartite"):
    batch_case(kind, kind, lengths)
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
