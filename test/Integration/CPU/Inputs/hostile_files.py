"""Writes hostile gnn-run inputs into OUT_DIR: graph counts that would
overflow or allocate gigabytes, deeply nested and duplicate-key JSON, a
text file with lone CR line endings, a program that gnn-opt cannot parse.
"""

import json
import os
import shutil
import struct
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
import safetensors_util  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
p = lambda name: os.path.join(out, name)


def graph(name, **counts):
    t = {"src": ("I64", [2], [0, 1]), "dst": ("I64", [2], [1, 0])}
    for k, v in counts.items():
        t[k] = ("I64", [], [v])
    safetensors_util.write(p(name), t)


graph("count-2e61.safetensors", num_nodes=1 << 61)
graph("count-max.safetensors", num_src=3, num_dst=(1 << 63) - 1)
graph("count-2e28.safetensors", num_nodes=1 << 28)

# JSON 50,000 levels deep, as a config and as a safetensors header.
deep = "[" * 50000 + "]" * 50000
open(p("deep.json"), "w").write(deep)
header = ('{"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "m": '
          + deep + "}").encode()
header += b" " * ((8 - len(header) % 8) % 8)
open(p("deep.safetensors"), "wb").write(
    struct.pack("<Q", len(header)) + header + b"\0\0\0\0")

# A config with a key given twice.
copy = os.path.join(ROOT, "examples", "copy")
text = open(os.path.join(copy, "config.json")).read()
text = text.replace('"layers": 2,', '"layers": 2, "layers": 3,')
assert '"layers": 3' in text
for f in ("weights.safetensors", "vocab.txt"):
    shutil.copy(os.path.join(copy, f), p(f))
open(p("twice.json"), "w").write(text)

# Sources with old-Mac line endings: three sequences, not one.
open(p("cr.src"), "w", newline="").write("a b c\rd e\rf g h i\r")

# A program that does not parse.
open(p("bad.mlir"), "w").write("func.func @f( {\n")
open(p("existing.mlir"), "w").write("// keep me\n")

# Programs of 10,000 nested scf.if (MLIR's parser overflowed its stack on
# them), and of 200, which parse.
def nested_ifs(n):
    lines = ["func.func @main(%c: i1) -> i32 {"]
    lines += ["%%r%d = scf.if %%c -> i32 {" % i for i in range(n)]
    lines += ["%v = arith.constant 1 : i32", "scf.yield %v : i32"]
    for i in reversed(range(n)):
        lines += ["} else {", "%%w%d = arith.constant 0 : i32" % i,
                  "scf.yield %%w%d : i32" % i, "}"]
        if i > 0:
            lines.append("scf.yield %%r%d : i32" % i)
    lines += ["return %r0 : i32", "}"]
    return "\n".join(lines) + "\n"


open(p("nested-10000.mlir"), "w").write(nested_ifs(10000))
open(p("nested-200.mlir"), "w").write(nested_ifs(200))


# A straight-line chain of scalar ops one past the bound on a program's
# operations (250,000): the function, 249,999 ops, and its return.
def chain(n):
    lines = ["func.func @main(%x: f32) -> f32 {", "%v0 = arith.addf %x, %x : f32"]
    lines += ["%%v%d = arith.mulf %%v%d, %%x : f32" % (i, i - 1)
              for i in range(1, n)]
    lines += ["return %%v%d : f32" % (n - 1), "}"]
    return "\n".join(lines) + "\n"


open(p("chain-250000.mlir"), "w").write(chain(249999))
