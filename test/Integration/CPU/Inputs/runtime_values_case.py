"""Writes inputs for runtime_values.mlir: valid random cases of several
sizes with their results computed in Python (exact integers, float32
values copied), and hostile ones.

usage: runtime_values_case.py OUT_DIR

Valid cases: OUT_DIR/<entry>-<k>.safetensors and their results in
OUT_DIR/<entry>-<k>.want.safetensors. Hostile ones: OUT_DIR/bad-<what>.
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util as st  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(20261129)
MIN, MAX = -2**63, 2**63 - 1
U64 = 2**64


def write(name, tensors, want=None):
    st.write(os.path.join(out, name + ".safetensors"), tensors)
    if want is not None:
        st.write(os.path.join(out, name + ".want.safetensors"), want)


def signed(v):
    v %= U64
    return v - U64 if v >= 2**63 else v


def trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def division_row(x, y):
    q = trunc_div(x, y)
    floor = x // y
    ceil = -((-x) // y)
    ux, uy = x % U64, y % U64
    return [q, x - q * y, floor, ceil, signed(ux // uy), signed(ux % uy)]


def floats(n):
    # Multiples of 1/8: exact in float32, so results compare exactly.
    return [rng.randrange(-800, 800) / 8 for _ in range(n)]


# Divisions: random signs and magnitudes, small and near the limits.
for k, n in enumerate([1, 7, 50]):
    a = [rng.choice([rng.randrange(-100, 100), rng.randrange(MIN + 1, MAX)])
         for _ in range(n)]
    b = [rng.choice([rng.randrange(1, 9), -rng.randrange(1, 9),
                     rng.randrange(MIN + 1, MAX) | 1]) for _ in range(n)]
    rows = [v for x, y in zip(a, b) for v in division_row(x, y)]
    write("divide-%d" % k, {"a": ("I64", [n], a), "b": ("I64", [n], b)},
          {"result0": ("I64", [n, 6], rows)})
# The smallest dividend against divisors of both signs and sizes (the
# ceiling's upstream expansion negated it: ceildivsi(MIN, 2^62 + 3) was 1).
edge_a = [MIN, MIN, MIN, MIN, MIN, MIN + 1, MAX, MAX, -7, 7]
edge_b = [2**62 + 3, 3, -3, MAX, 2, -1, MIN, -MAX, 2, -2]
write("divide-3", {"a": ("I64", [10], edge_a), "b": ("I64", [10], edge_b)},
      {"result0": ("I64", [10, 6],
                   [v for x, y in zip(edge_a, edge_b)
                    for v in division_row(x, y)])})
write("bad-zero", {"a": ("I64", [3], [5, 6, 7]), "b": ("I64", [3], [1, 0, 2])})
write("bad-overflow", {"a": ("I64", [2], [MIN, 1]), "b": ("I64", [2], [-1, 1])})

# Gathers at random indices in range, then past the end and negative.
for k, (n, m) in enumerate([(1, 1), (9, 20), (300, 1000)]):
    x = floats(n)
    at = [rng.randrange(n) for _ in range(m)]
    write("gather-%d" % k, {"x": ("F32", [n], x), "at": ("I64", [m], at)},
          {"result0": ("F32", [m], [x[i] for i in at])})
write("bad-gather-past", {"x": ("F32", [4], floats(4)),
                          "at": ("I64", [3], [0, 4, 1])})
write("bad-gather-negative", {"x": ("F32", [4], floats(4)),
                              "at": ("I64", [2], [1, -1])})
write("bad-gather-empty", {"x": ("F32", [0], []), "at": ("I64", [1], [0])})
write("bad-gather-huge", {"x": ("F32", [4], floats(4)),
                          "at": ("I64", [1], [2**62])})

# Inserts.
x = floats(5)
write("scatter-0", {"x": ("F32", [5], x), "at": ("I64", [1], [4]),
                    "v": ("F32", [1], [0.5])},
      {"result0": ("F32", [5], x[:4] + [0.5])})
write("bad-scatter", {"x": ("F32", [5], x), "at": ("I64", [1], [5]),
                      "v": ("F32", [1], [0.5])})

# Slices of rows with random offsets, counts and strides that fit.
for k, (rows, cols) in enumerate([(1, 1), (6, 3), (40, 5)]):
    x = floats(rows * cols)
    stride = rng.randrange(1, 4)
    o = rng.randrange(rows)
    n = rng.randrange(0, (rows - 1 - o) // stride + 2)
    y = floats(n * cols)
    picked = [x[(o + i * stride) * cols + j] for i in range(n)
              for j in range(cols)]
    put = list(x)
    for i in range(n):
        for j in range(cols):
            put[(o + i * stride) * cols + j] = y[i * cols + j]
    write("slice-%d" % k,
          {"x": ("F32", [rows, cols], x), "y": ("F32", [n, cols], y),
           "p": ("I64", [3], [o, n, stride])},
          {"result0": ("F32", [n, cols], picked),
           "result1": ("F32", [rows, cols], put)})
x6 = floats(12)
for name, p, yrows in [("bad-slice-long", [4, 3, 1], 3),
                       ("bad-slice-stride", [0, 3, 3], 3),
                       ("bad-slice-negative", [-1, 1, 1], 1),
                       ("bad-slice-huge", [1, 2**62, 2**62], 1),
                       ("bad-slice-source", [0, 2, 1], 3)]:
    write(name, {"x": ("F32", [6, 2], x6),
                 "y": ("F32", [yrows, 2], floats(yrows * 2)),
                 "p": ("I64", [3], p)})

# Reshapes.
for k, (r, c) in enumerate([(1, 1), (3, 4), (0, 7), (25, 8)]):
    x = floats(r * c)
    write("reshape-%d" % k, {"x": ("F32", [r * c], x),
                             "shape": ("I64", [2], [r, c])},
          {"result0": ("F32", [r, c], x)})
for name, shape in [("bad-reshape-large", [100, 100]),
                    ("bad-reshape-negative", [-1, 6]),
                    ("bad-reshape-overflow", [2**32, 2**32])]:
    write(name, {"x": ("F32", [6], floats(6)), "shape": ("I64", [2], shape)})

# New tensors.
for k, (a, b) in enumerate([(0, 0), (3, 5), (1000, 3)]):
    write("fill-%d" % k, {"n": ("I64", [2], [a, b])},
          {"result0": ("F32", [a], [1.5] * a),
           "result1": ("F64", [a, b], [0.0] * (a * b))})
# (Sizes far beyond any machine's memory: one that fits would be filled.)
for name, n in [("bad-fill-splat", [2**40, 1]),
                ("bad-fill-large", [1, 2**50]),
                ("bad-fill-overflow", [4, 2**62]),
                ("bad-fill-negative", [3, -1])]:
    write(name, {"n": ("I64", [2], n)})

# Dimension queries.
write("size-0", {"x": ("F32", [2, 3], floats(6)), "d": ("I64", [1], [1])},
      {"result0": ("I64", [1], [3])})
write("bad-size", {"x": ("F32", [2, 3], floats(6)), "d": ("I64", [1], [2])})

# Divisions of vectors of 8 i32 lanes (the result's rows are the six ops).
U32 = 2**32


def signed32(v):
    v %= U32
    return v - U32 if v >= 2**31 else v


def division_row32(x, y):
    q = trunc_div(x, y)
    ux, uy = x % U32, y % U32
    return [q, x - q * y, x // y, -((-x) // y), signed32(ux // uy),
            signed32(ux % uy)]


for k in range(4):
    a = [rng.choice([rng.randrange(-100, 100),
                     rng.randrange(-2**31 + 1, 2**31)]) for _ in range(8)]
    if k == 3:
        a = [-2**31] * 8
    b = [rng.choice([rng.randrange(1, 9), -rng.randrange(1, 9),
                     rng.randrange(-2**31 + 1, 2**31) | 1]) for _ in range(8)]
    if k == 3:
        # The smallest dividend in every lane (the floor and the ceiling of
        # lanes 2 and 3 went wrong in upstream's expansion).
        b = [3, -3, 2**30 + 3, -(2**30 + 3), 2, 7, -2, 2**31 - 1]
    columns = [division_row32(x, y) for x, y in zip(a, b)]
    write("vdivide-%d" % k, {"a": ("I32", [8], a), "b": ("I32", [8], b)},
          {"result0": ("I32", [6, 8],
                       [columns[j][i] for i in range(6) for j in range(8)])})
# Zero in lanes 3 and 6 (lane 3's dividend is reported); the smallest value
# by -1 in lane 5 only.
write("bad-vzero", {"a": ("I32", [8], [1, 2, 3, 40, 5, 6, 70, 8]),
                    "b": ("I32", [8], [1, 1, 1, 0, 1, 1, 0, 1])})
write("bad-voverflow", {"a": ("I32", [8], [1, 2, 3, 4, 5, -2**31, 7, -2**31]),
                        "b": ("I32", [8], [1, 1, 1, 1, 1, -1, 1, 1])})

# Values in range by construction (clamps, remainders, odd or positive
# divisors): extreme inputs are valid and read or divide what they say.
for k, n in enumerate([1, 12, 200]):
    x = floats(10)
    at = [rng.choice([rng.randrange(-20, 20), rng.randrange(MIN, MAX),
                      MIN, MAX, -1]) for _ in range(n)]
    a = [rng.choice([rng.randrange(-100, 100), rng.randrange(MIN, MAX), MIN,
                     MAX]) for _ in range(n)]
    b = [rng.choice([0, -1, 1, rng.randrange(-9, 9), rng.randrange(MIN, MAX),
                     MIN]) for _ in range(n)]
    reads = [v for j in at for v in (x[min(max(j, 0), 9)], x[(j % U64) % 10])]
    quotients = [v for p, d in zip(a, b)
                 for v in (signed((p % U64) // ((d | 1) % U64)),
                           trunc_div(p, max(d, 1)))]
    write("proven-%d" % k, {"x": ("F32", [10], x), "at": ("I64", [n], at),
                            "a": ("I64", [n], a), "b": ("I64", [n], b)},
          {"result0": ("F32", [n, 2], reads),
           "result1": ("I64", [n, 2], quotients)})
