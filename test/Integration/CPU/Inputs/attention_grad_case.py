"""Writes a random graph and q, k, v, w for attention_grad.mlir.

usage: attention_grad_case.py OUT_DIR NUM_SRC NUM_DST EDGES SCORE_SCALE
                              [isolated]
       attention_grad_case.py OUT_DIR complete|causal|bipartite SCORE_SCALE
                              [tidy|shuffled] [mixed|wide]
       attention_grad_case.py OUT_DIR overlap SCORE_SCALE
SCORE_SCALE multiplies q (large scores exercise the clamp and the exact
softmax's shift). Every destination gets an in-edge (the unfused
normalization divides 0 by 0 elsewhere, as DGL does), or with `isolated`
the last one gets none.

The second form writes a batch of sequences as the models build it: per
sequence a complete, causal or bipartite block, in-edges in source order
(the block-tiled kernels' runs). Lengths span several 64-row tiles and
128-column chunks, sequences start inside tiles, one is shorter than a
run, and one sequence lists its edges out of order (the per-node kernels).
With `tidy`, no sequence is longer than 256 and none lists its edges out of
order: the graph splits into blocks that the backward computes one at a
time. `shuffled` is `tidy` with the sequences' sources in reverse order
(the last sequence's first): blocks whose sources do not follow one
another, which the backward takes in two passes. `mixed` and `wide` write
one head of q and k 24 (160) wide and of v and w 40 (136) wide instead of
two heads of 8.

`overlap` writes two stretches of destinations whose source ranges overlap
(sources [0, 60) and [30, 90) of 120): each looks like a block by itself,
and the last 30 sources have no edges.
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402



def blocks(mode, tidy, shuffled=False):
    """A batch's graph: (src, dst, num_src, num_dst)."""
    # 300 sources: more than the destination pass's kept tiles hold.
    src_lens = [150, 20, 70, 3, 33, 90, 256 if tidy else 300]
    dst_lens = ([40, 90, 17, 8, 130, 21, 12] if mode == "bipartite" else
                src_lens)
    src, dst = [], []
    s0 = d0 = 0
    for i, (ls, ld) in enumerate(zip(src_lens, dst_lens)):
        if shuffled:
            s0 = sum(src_lens[i + 1:])
        for d in range(ld):
            ends = d + 1 if mode == "causal" else ls
            row = [s0 + s for s in range(ends)]
            if i == 2 and d % 3 == 0 and not tidy:
                row.reverse()
            src += row
            dst += [d0 + d] * len(row)
        s0 += ls
        d0 += ld
    return src, dst, sum(src_lens), d0


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
if sys.argv[2] in ("complete", "causal", "bipartite"):
    flag = [a for a in sys.argv[4:] if a not in ("mixed", "wide")]
    src, dst, ns, nd = blocks(sys.argv[2], flag in (["tidy"], ["shuffled"]),
                              flag == ["shuffled"])
    ne = len(src)
    scale = float(sys.argv[3])
    rng = random.Random(ne)
elif sys.argv[2] == "overlap":
    src, dst = [], []
    for d, (lo, hi) in enumerate([(0, 60)] * 40 + [(30, 90)] * 60):
        src += range(lo, hi)
        dst += [d] * (hi - lo)
    ns, nd = 120, 100
    ne = len(src)
    scale = float(sys.argv[3])
    rng = random.Random(ne)
else:
    ns, nd, ne = (int(a) for a in sys.argv[2:5])
    scale = float(sys.argv[5])
    rng = random.Random(ns * 7919 + nd * 31 + ne)
    isolated = len(sys.argv) > 6
    reached = nd - 1 if isolated else nd
    dst = [i % reached for i in range(ne)] if reached else []
    rng.shuffle(dst)
    src = [rng.randrange(ns) for _ in range(ne)]


heads, dk, dv = {"mixed": (1, 24, 40), "wide": (1, 160, 136)}.get(
    sys.argv[-1], (2, 8, 8))


def rand(rows, width, factor=1.0):
    return [factor * rng.uniform(-1, 1) for _ in range(rows * heads * width)]


safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [ne], src), "dst": ("I64", [ne], dst),
    "num_src": ("I64", [], [ns]), "num_dst": ("I64", [], [nd])})
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "q": ("F32", [nd, heads, dk], rand(nd, dk, scale)),
    "k": ("F32", [ns, heads, dk], rand(ns, dk)),
    "v": ("F32", [ns, heads, dv], rand(ns, dv)),
    "w": ("F32", [nd, heads, dv], rand(nd, dv))})
