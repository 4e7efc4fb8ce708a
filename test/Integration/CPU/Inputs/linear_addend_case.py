"""Writes random inputs for Inputs/linear_addend.mlir and its results and
gradients computed here in double precision:
    r = h W^T + b + x,  t = r V + h,  loss = sum(tanh(t))
    dt = 1 - tanh(t)^2, dr = dt V^T, dV = r^T dt, dx = dr,
    dW = dr^T h, db = sum over rows of dr, dh = dr W + dt.

usage: linear_addend_case.py OUT_DIR ROWS SEED [short-addend]
short-addend: also writes short.safetensors, whose x has a row fewer.
"""

import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402

D = 24


def f32(xs):
    return list(struct.unpack("<%df" % len(xs), struct.pack("<%df" % len(xs),
                                                            *xs)))


def main():
    out_dir, rows, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    rand = lambda n, s: f32([rng.gauss(0, s) for _ in range(n)])
    x, h = rand(rows * D, 1.0), rand(rows * D, 1.0)
    w, v = rand(D * D, 0.2), rand(D * D, 0.2)
    b = rand(D, 0.5)
    m = lambda a, i, j: a[i * D + j]
    r = [sum(m(h, n, k) * m(w, o, k) for k in range(D)) + b[o] + m(x, n, o)
         for n in range(rows) for o in range(D)]
    t = [sum(m(r, n, k) * m(v, k, o) for k in range(D)) + m(h, n, o)
         for n in range(rows) for o in range(D)]
    loss = sum(math.tanh(e) for e in t)
    dt = [1 - math.tanh(e) ** 2 for e in t]
    dr = [sum(m(dt, n, o) * m(v, k, o) for o in range(D))
          for n in range(rows) for k in range(D)]
    dv = [sum(m(r, n, k) * m(dt, n, o) for n in range(rows))
          for k in range(D) for o in range(D)]
    dw = [sum(m(dr, n, o) * m(h, n, k) for n in range(rows))
          for o in range(D) for k in range(D)]
    db = [sum(m(dr, n, o) for n in range(rows)) for o in range(D)]
    dh = [sum(m(dr, n, o) * m(w, o, k) for o in range(D)) + m(dt, n, k)
          for n in range(rows) for k in range(D)]
    os.makedirs(out_dir, exist_ok=True)
    safetensors_util.write(os.path.join(out_dir, "inputs.safetensors"), {
        "x": ("F32", [rows, D], x), "h": ("F32", [rows, D], h),
        "w": ("F32", [D, D], w), "b": ("F32", [D], b),
        "v": ("F32", [D, D], v)})
    safetensors_util.write(os.path.join(out_dir, "reference.safetensors"), {
        "result0": ("F64", [], [loss]), "result1": ("F64", [rows, D], t),
        "grad.x": ("F64", [rows, D], dr), "grad.h": ("F64", [rows, D], dh),
        "grad.w": ("F64", [D, D], dw), "grad.b": ("F64", [D], db),
        "grad.v": ("F64", [D, D], dv)})
    if "short-addend" in sys.argv[4:]:
        safetensors_util.write(os.path.join(out_dir, "short.safetensors"), {
            "x": ("F32", [rows - 1, D], x[D:]), "h": ("F32", [rows, D], h),
            "w": ("F32", [D, D], w), "b": ("F32", [D], b),
            "v": ("F32", [D, D], v)})


if __name__ == "__main__":
    main()
