"""Writes a random attention case: graph, q/k/v and a naive reference.

usage: attention_case.py OUT_DIR KIND SEED [HEADS DK CLAMP]
KIND: complete (a batch of complete blocks), causal, sparse (random edges,
some nodes receive nothing), single (one node).
The reference is the tutorial's attention: softmax over in-edges of
clamp(k_src . q_dst / sqrt(dk)), weighted sum of v_src; 0 for nodes without
in-edges.
"""

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_util  # noqa: E402


def edges_of(kind, rng):
    if kind == "single":
        return 1, [(0, 0)]
    if kind == "sparse":
        n = 37
        return n, [(rng.randrange(n), rng.randrange(n - 7)) for _ in range(150)]
    sizes = [max(1, int(rng.gauss(15, 3))) for _ in range(rng.randint(2, 6))]
    edges, base = [], 0
    for s in sizes:
        for j in range(s):
            for i in range(s):
                if kind == "complete" or i <= j:
                    edges.append((base + i, base + j))
        base += s
    rng.shuffle(edges)  # edge ids in any order
    return base, edges


def main():
    out_dir, kind, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    heads = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    dk = int(sys.argv[5]) if len(sys.argv) > 5 else 64
    clamp = float(sys.argv[6]) if len(sys.argv) > 6 else 5.0
    rng = random.Random(seed)
    n, edges = edges_of(kind, rng)
    feat = lambda: [rng.gauss(0, 1.5) for _ in range(n * heads * dk)]
    q, k, v = feat(), feat(), feat()
    # Round to float32 so the reference sees what the program sees.
    import struct
    f32 = lambda xs: list(struct.unpack("<%df" % len(xs), struct.pack("<%df" % len(xs), *xs)))
    q, k, v = f32(q), f32(k), f32(v)
    scale = 1.0 / math.sqrt(dk)
    out = [0.0] * (n * heads * dk)
    incoming = [[] for _ in range(n)]
    for u, d in edges:
        incoming[d].append(u)
    for d in range(n):
        for h in range(heads):
            ws, srcs = [], []
            for u in incoming[d]:
                s = sum(k[(u * heads + h) * dk + i] * q[(d * heads + h) * dk + i]
                        for i in range(dk)) * scale
                ws.append(math.exp(min(max(s, -clamp), clamp)))
                srcs.append(u)
            z = sum(ws)
            for i in range(dk):
                acc = sum(w * v[(u * heads + h) * dk + i] for w, u in zip(ws, srcs))
                out[(d * heads + h) * dk + i] = acc / z if ws else 0.0
    os.makedirs(out_dir, exist_ok=True)
    safetensors_util.write(os.path.join(out_dir, "graph.safetensors"), {
        "src": ("I64", [len(edges)], [u for u, _ in edges]),
        "dst": ("I64", [len(edges)], [d for _, d in edges]),
        "num_nodes": ("I64", [], [n]),
    })
    shape = [n, heads, dk]
    safetensors_util.write(os.path.join(out_dir, "inputs.safetensors"), {
        "q": ("F32", shape, q), "k": ("F32", shape, k), "v": ("F32", shape, v)})
    safetensors_util.write(os.path.join(out_dir, "reference.safetensors"), {
        "result0": ("F64", shape, out)})


if __name__ == "__main__":
    main()
