"""Writes inputs for coo.mlir: a good case with its reference, and bad
ones (edge lists of different lengths, negative, huge and absurd counts).

usage: coo_cases.py OUT_DIR
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def case(name, src, dst, ns, nd, rows):
    safetensors_util.write(os.path.join(out, name + ".safetensors"), {
        "src": ("I64", [len(src)], src), "dst": ("I64", [len(dst)], dst),
        "counts": ("I64", [2], [ns, nd]),
        "ones": ("F32", [rows, 1], [1.0] * rows)})


src, dst = [0, 1, 2, 0, 3], [1, 1, 0, 2, 1]
case("good", src, dst, 4, 3, 4)
deg = [float(dst.count(v)) for v in range(3)]
safetensors_util.write(os.path.join(out, "reference.safetensors"),
                       {"result0": ("F32", [3, 1], deg)})
case("longer-src", src + [1, 2, 3] * 100, dst, 4, 3, 4)
case("longer-dst", src, dst + [0] * 50, 4, 3, 4)
case("negative", src, dst, 4, -3, 4)
case("huge", src, dst, 4, 1 << 61, 4)
case("int64-max", src, dst, (1 << 63) - 1, 3, 4)
case("big", src, dst, 4, 1 << 30, 4)
# An empty graph from empty lists is fine.
case("empty", [], [], 0, 0, 0)
safetensors_util.write(os.path.join(out, "empty-reference.safetensors"),
                       {"result0": ("F32", [0, 1], [])})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
