"""Writes inputs for scatter_ids.mlir: distinct random ids of several
sizes with the scatter's result computed in Python, and bad id lists.

usage: scatter_ids_case.py OUT_DIR
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util as st  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(11)
W = 4


def rows(n):
    return [rng.randrange(-64, 64) / 8 for _ in range(n * W)]


for k, (n, m) in enumerate([(1, 1), (7, 3), (200, 150), (5, 0)]):
    dest, ids = rows(n), rng.sample(range(n), m)
    src = rows(m)
    want = list(dest)
    for i, r in enumerate(ids):
        want[r * W:(r + 1) * W] = src[i * W:(i + 1) * W]
    st.write(os.path.join(out, "ok-%d.safetensors" % k),
             {"src": ("F32", [m, W], src), "dest": ("F32", [n, W], dest),
              "ids": ("I64", [m], ids)})
    st.write(os.path.join(out, "ok-%d.want.safetensors" % k),
             {"result0": ("F32", [n, W], want)})

st.write(os.path.join(out, "repeated.safetensors"),
         {"src": ("F32", [4, W], rows(4)), "dest": ("F32", [6, W], rows(6)),
          "ids": ("I64", [4], [3, 1, 5, 1])})
# Many repeats, the first of them late: entry 6 repeats entry 2's id (7),
# and later entries repeat ids too (the report names the first repeat).
st.write(os.path.join(out, "repeated-late.safetensors"),
         {"src": ("F32", [10, W], rows(10)),
          "dest": ("F32", [12, W], rows(12)),
          "ids": ("I64", [10], [0, 4, 7, 9, 2, 11, 7, 4, 9, 9])})
st.write(os.path.join(out, "fewer-ids.safetensors"),
         {"src": ("F32", [4, W], rows(4)), "dest": ("F32", [6, W], rows(6)),
          "ids": ("I64", [2], [3, 1])})
st.write(os.path.join(out, "more-ids.safetensors"),
         {"src": ("F32", [2, W], rows(2)), "dest": ("F32", [6, W], rows(6)),
          "ids": ("I64", [5], [0, 1, 2, 3, 4])})
# An id out of range (entry 2), and ids into a destination of no rows.
st.write(os.path.join(out, "bad-id.safetensors"),
         {"src": ("F32", [4, W], rows(4)), "dest": ("F32", [6, W], rows(6)),
          "ids": ("I64", [4], [3, 1, 6, 7])})
st.write(os.path.join(out, "no-rows.safetensors"),
         {"src": ("F32", [2, W], rows(2)), "dest": ("F32", [0, W], []),
          "ids": ("I64", [2], [0, 0])})
