"""Writes a random case for in_subgraph.mlir and its naive reference.

usage: in_subgraph_case.py OUT_DIR SEED [BAD_ID]
A sparse graph with shuffled edges (some nodes receive nothing) and a node
list in any order with a repeat; with BAD_ID, the list also holds that id.
Reference: for listed node i (in list order), the parent's in-edges in
edge-id order (eids, src, dst = i) and attention over them (0 without
in-edges).
"""

import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

H, DK = 2, 4


def main():
    out_dir, seed = sys.argv[1], int(sys.argv[2])
    rng = random.Random(seed)
    n = rng.randint(20, 40)
    edges = [(rng.randrange(n), rng.randrange(n - 5)) for _ in range(6 * n)]
    rng.shuffle(edges)
    nodes = rng.sample(range(n), rng.randint(1, n))
    nodes.append(nodes[0])
    if len(sys.argv) > 3:
        nodes.insert(len(nodes) // 2, int(sys.argv[3]))

    def f32(xs):
        return list(struct.unpack("<%df" % len(xs),
                                  struct.pack("<%df" % len(xs), *xs)))
    feat = lambda: f32([rng.gauss(0, 1.5) for _ in range(n * H * DK)])  # noqa
    q, k, v = feat(), feat(), feat()
    eids, src, dst, out = [], [], [], []
    for i, node in enumerate(nodes):
        incoming = [e for e, (_, d) in enumerate(edges) if d == node]
        eids += incoming
        src += [edges[e][0] for e in incoming]
        dst += [i] * len(incoming)
        for h in range(H):
            ws = []
            for e in incoming:
                u = edges[e][0]
                s = sum(k[(u * H + h) * DK + j] * q[(node * H + h) * DK + j]
                        for j in range(DK)) * 0.5
                ws.append((math.exp(min(max(s, -5.0), 5.0)), u))
            z = sum(w for w, _ in ws)
            for j in range(DK):
                acc = sum(w * v[(u * H + h) * DK + j] for w, u in ws)
                out.append(acc / z if ws else 0.0)
    os.makedirs(out_dir, exist_ok=True)
    safetensors_util.write(os.path.join(out_dir, "graph.safetensors"), {
        "src": ("I64", [len(edges)], [u for u, _ in edges]),
        "dst": ("I64", [len(edges)], [d for _, d in edges]),
        "num_nodes": ("I64", [], [n]),
    })
    shape = [n, H, DK]
    safetensors_util.write(os.path.join(out_dir, "inputs.safetensors"), {
        "nodes": ("I64", [len(nodes)], nodes),
        "q": ("F32", shape, q), "k": ("F32", shape, k), "v": ("F32", shape, v)})
    safetensors_util.write(os.path.join(out_dir, "reference.safetensors"), {
        "result0": ("F64", [len(nodes), H, DK], out),
        "result1": ("I64", [len(eids)], eids),
        "result2": ("I64", [len(src)], src),
        "result3": ("I64", [len(dst)], dst)})


if __name__ == "__main__":
    main()
