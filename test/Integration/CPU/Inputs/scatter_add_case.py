"""Writes inputs for scatter_add.mlir and scatter_add_table.mlir (ids that
repeat, rows never named; with --distinct, ids that do not repeat) and the
expected sums.

usage: scatter_add_case.py OUT_DIR ROWS TABLE [--bad ID] [--distinct]
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("rows", type=int)
parser.add_argument("table", type=int)
parser.add_argument("--bad", type=int)
parser.add_argument("--distinct", action="store_true")
args = parser.parse_args()
out, rows, table = args.out, args.rows, args.table
os.makedirs(out, exist_ok=True)
rng = random.Random(rows * 31 + table)
item = 6
d = [rng.uniform(-1, 1) for _ in range(rows * item)]
t = [rng.uniform(-1, 1) for _ in range(table * item)]
if args.distinct:
    ids = rng.sample(range(table), rows)
else:
    # Few distinct ids, so most repeat.
    ids = [rng.randrange(max(1, table // 2)) for _ in range(rows)]
if args.bad is not None:
    ids[rows // 2] = args.bad
want = list(t)
for i, r in enumerate(ids):
    for j in range(item):
        if 0 <= r < table:
            want[r * item + j] += d[i * item + j]
safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
    "d": ("F32", [rows, 3, 2], d), "table": ("F32", [table, 3, 2], t),
    "ids": ("I64", [rows], ids)})
safetensors_util.write(os.path.join(out, "graph.safetensors"), {
    "src": ("I64", [0], []), "dst": ("I64", [0], []),
    "num_nodes": ("I64", [], [0])})
if args.bad is None:
    safetensors_util.write(os.path.join(out, "reference.safetensors"),
                           {"result0": ("F32", [table, 3, 2], want)})
