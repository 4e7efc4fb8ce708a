"""Compares the per-epoch lines of two gnn-train runs.

usage: compare_epochs.py GOT WANT TOLERANCE
Each file holds gnn-train's standard output. Every `epoch N:` line of WANT
must be in GOT with the same step, and its training and validation losses
and accuracies within TOLERANCE * max(1, |want|). Prints one line per epoch.
"""

import re
import sys

LINE = re.compile(r"epoch (\d+): train loss ([-0-9.naif]+) acc ([0-9.]+)"
                  r"(?: \| valid loss ([-0-9.naif]+) acc ([0-9.]+))?.*step (\d+)")


def epochs(path):
    found = {}
    with open(path) as f:
        for line in f:
            m = LINE.search(line)
            if m:
                found[int(m.group(1))] = m.groups()[1:]
    return found


got, want = epochs(sys.argv[1]), epochs(sys.argv[2])
tol = float(sys.argv[3])
ok = bool(want)
for epoch, values in sorted(want.items()):
    other = got.get(epoch)
    good = other is not None and other[-1] == values[-1]
    if good:
        for a, b in zip(other[:-1], values[:-1]):
            if (a is None) != (b is None):
                good = False
            elif a is not None and not abs(float(a) - float(b)) <= tol * max(
                    1.0, abs(float(b))):
                good = False
    print("epoch %d: %s" % (epoch, "ok" if good else "differs: %s vs %s" %
                            (other, values)))
    ok = ok and good
sys.exit(0 if ok else 1)
