"""Compares decoded sequences with the expected ones, line by line.

usage: accuracy.py OUTPUT EXPECTED [--min FRACTION]
Prints the fraction of exactly matching sequences and of matching tokens
(position by position, over the expected tokens); with --min, exits
non-zero when the sequence accuracy is below FRACTION.
"""

import sys


def main():
    args = sys.argv[1:]
    minimum = None
    if "--min" in args:
        i = args.index("--min")
        minimum = float(args[i + 1])
        del args[i:i + 2]
    got = open(args[0]).read().splitlines()
    want = open(args[1]).read().splitlines()
    if len(got) != len(want):
        print("error: %d output lines for %d expected" % (len(got), len(want)))
        sys.exit(1)
    exact = sum(g.split() == w.split() for g, w in zip(got, want))
    tokens = sum(len(w.split()) for w in want)
    right = sum(a == b for g, w in zip(got, want)
                for a, b in zip(g.split(), w.split()))
    print("sequences: %d/%d exact (%.2f%%), tokens: %d/%d (%.2f%%)" %
          (exact, len(want), 100.0 * exact / len(want), right, tokens,
           100.0 * right / max(tokens, 1)))
    if minimum is not None and exact < minimum * len(want):
        print("error: sequence accuracy below %.2f%%" % (100 * minimum))
        sys.exit(1)


if __name__ == "__main__":
    main()
