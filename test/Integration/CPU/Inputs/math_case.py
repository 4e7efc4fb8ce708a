"""Writes math.mlir (one gnn.apply_nodes per math op, each a result) and
inputs and a reference computed with Python's math module.

usage: math_case.py OUT_DIR
x lies in (-0.95, 0.95) (the domain of asin, acos and atanh), p in
(0.05, 3) (log, sqrt, powf, acosh after adding 1); the reference is
computed in double precision and rounded to float32.
"""

import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

ROWS, WIDTH = 37, 5

# name: (math op, operands ("x", "p"), reference)
UNARY_X = {
    "tanh": math.tanh, "erf": math.erf, "atan": math.atan,
    "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atanh": math.atanh,
    "sinh": math.sinh, "cosh": math.cosh, "asinh": math.asinh,
    "exp": math.exp, "exp2": lambda v: 2.0 ** v, "expm1": math.expm1,
    "absf": abs, "floor": math.floor, "ceil": math.ceil,
    "trunc": math.trunc, "log1p": math.log1p,
    "round": lambda v: math.copysign(math.floor(abs(v) + 0.5), v),
    "cbrt": lambda v: math.copysign(abs(v) ** (1.0 / 3.0), v),
}
UNARY_P = {
    "log": math.log, "log2": math.log2, "log10": math.log10,
    "sqrt": math.sqrt, "rsqrt": lambda v: 1.0 / math.sqrt(v),
}
BINARY = {
    "powf": lambda a, b: b ** a, "atan2": math.atan2,
    "copysign": math.copysign,
}


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(11)
    n = ROWS * WIDTH
    x = [f32(rng.uniform(-0.95, 0.95)) for _ in range(n)]
    p = [f32(rng.uniform(0.05, 3.0)) for _ in range(n)]
    t = "tensor<?x%dxf32>" % WIDTH
    body, results, ref = [], [], {}
    ops = ([(k, ["x"], v) for k, v in UNARY_X.items()] +
           [(k, ["p"], v) for k, v in UNARY_P.items()] +
           [(k, ["x", "p"], v) for k, v in BINARY.items()] +
           [("acosh", ["p"], lambda v: math.acosh(v + 1.0))])
    for i, (name, args, fn) in enumerate(ops):
        params = ", ".join("%%%s%d: f32" % (a, i) for a in args)
        operands = ", ".join("%%%s" % a for a in args)
        types = ", ".join(t for _ in args)
        values = ", ".join("%%%s%d" % (a, i) for a in args)
        if name == "acosh":
            inner = ("    %%one%d = arith.constant 1.0 : f32\n"
                     "    %%q%d = arith.addf %%p%d, %%one%d : f32\n"
                     "    %%r%d = math.acosh %%q%d : f32\n") % (i, i, i, i, i, i)
        elif name == "powf":
            inner = "    %%r%d = math.powf %%p%d, %%x%d : f32\n" % (i, i, i)
        else:
            inner = "    %%r%d = math.%s %s : f32\n" % (i, name, values)
        body.append(
            "  %%%s = gnn.apply_nodes(%s) {\n  ^bb0(%s):\n%s"
            "    gnn.yield %%r%d : f32\n  } : (%s) -> %s\n"
            % (name, operands, params, inner, i, types, t))
        results.append(name)
        cols = [x if a == "x" else p for a in args]
        ref[name] = ("F32", [ROWS, WIDTH],
                     [f32(fn(*[c[j] for c in cols])) for j in range(n)])
    with open(os.path.join(out, "math.mlir"), "w") as f:
        f.write("func.func @main(%%x: %s, %%p: %s) -> (%s) {\n" %
                (t, t, ", ".join("%s {gnn.name = \"%s\"}" % (t, r)
                                 for r in results)))
        f.write("".join(body))
        f.write("  return %s : %s\n}\n" %
                (", ".join("%" + r for r in results),
                 ", ".join(t for _ in results)))
    safetensors_util.write(os.path.join(out, "inputs.safetensors"), {
        "x": ("F32", [ROWS, WIDTH], x), "p": ("F32", [ROWS, WIDTH], p)})
    safetensors_util.write(os.path.join(out, "reference.safetensors"), ref)
    # A graph file is required by gnn-run; this program has no graph.
    safetensors_util.write(os.path.join(out, "graph.safetensors"), {
        "src": ("I64", [0], []), "dst": ("I64", [0], []),
        "num_nodes": ("I64", [], [0])})


if __name__ == "__main__":
    main()
