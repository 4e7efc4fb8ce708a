"""Writes malformed and mismatched gnn-run inputs into OUT_DIR."""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
p = lambda name: os.path.join(out, name)
feat = lambda n: ("F32", [n, 8, 64], [0.5] * (n * 8 * 64))

safetensors_util.write(p("graph.safetensors"), {
    "src": ("I64", [4], [0, 1, 2, 0]), "dst": ("I64", [4], [0, 0, 1, 2]),
    "num_nodes": ("I64", [], [3])})
safetensors_util.write(p("bad-ids.safetensors"), {
    "src": ("I64", [2], [0, 7]), "dst": ("I64", [2], [0, 0]),
    "num_nodes": ("I64", [], [3])})
safetensors_util.write(p("no-count.safetensors"), {
    "src": ("I64", [1], [0]), "dst": ("I64", [1], [0])})
safetensors_util.write(p("inputs.safetensors"), {"q": feat(3), "k": feat(3), "v": feat(3)})
safetensors_util.write(p("missing-v.safetensors"), {"q": feat(3), "k": feat(3)})
safetensors_util.write(p("extra.safetensors"), {"q": feat(3), "k": feat(3), "v": feat(3), "w": feat(3)})
safetensors_util.write(p("short-rows.safetensors"), {"q": feat(3), "k": feat(2), "v": feat(3)})
safetensors_util.write(p("f64.safetensors"), {"q": ("F64", [3, 8, 64], [0.0] * 1536), "k": feat(3), "v": feat(3)})
good = open(p("inputs.safetensors"), "rb").read()
open(p("truncated.safetensors"), "wb").write(good[: len(good) // 2])
open(p("huge-header.safetensors"), "wb").write(struct.pack("<Q", 1 << 62) + b"{}")
open(p("not-json.safetensors"), "wb").write(struct.pack("<Q", 5) + b"{oops")

# An empty batch is valid: zero nodes, zero edges, zero rows out.
safetensors_util.write(p("empty-graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []), "num_nodes": ("I64", [], [0])})
safetensors_util.write(p("empty-inputs.safetensors"), {
    "q": ("F32", [0, 8, 64], []), "k": ("F32", [0, 8, 64], []), "v": ("F32", [0, 8, 64], [])})
