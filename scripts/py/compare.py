"""Compares tensors of two safetensors files.

usage: compare.py GOT WANT [TOLERANCE] [--zero-nan]
Passes when every tensor of WANT is in GOT with the same shape and
|got - want| <= TOLERANCE * max(1, |want|) everywhere (default 1e-5).
--zero-nan treats NaN in GOT as 0 (the unfused form divides 0 by 0 for nodes
without in-edges, as DGL does). Prints one line per tensor.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_util  # noqa: E402


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    zero_nan = "--zero-nan" in sys.argv
    got, want = safetensors_util.read(args[0]), safetensors_util.read(args[1])
    tol = float(args[2]) if len(args) > 2 else 1e-5
    ok = True
    for name, (_, shape, values) in sorted(want.items()):
        if name not in got:
            print("%s: missing" % name)
            ok = False
            continue
        _, got_shape, got_values = got[name]
        if list(got_shape) != list(shape):
            print("%s: shape %s, expected %s" % (name, got_shape, shape))
            ok = False
            continue
        worst = 0.0
        for g, w in zip(got_values, values):
            if zero_nan and math.isnan(g):
                g = 0.0
            err = abs(g - w) / max(1.0, abs(w))
            worst = err if not (err <= worst) else worst
        good = worst <= tol
        ok = ok and good
        print("%s: %s (max relative error %.3g)" % (name, "ok" if good else "MISMATCH", worst))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
