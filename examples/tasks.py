"""Data for the copy and sort tasks: sequences of the 26 lowercase letters
with lengths drawn from N(15, 3), one sequence per line, tokens separated by
spaces. The target of copy is the source; the target of sort is the source
in alphabetical order.

    python3 examples/tasks.py copy --count 500 --seed 1 --out examples/copy/test
writes test.src and test.ref (the expected outputs).
"""

import argparse
import random
import string

LETTERS = list(string.ascii_lowercase)


def sample(rng, max_len):
    n = max(1, min(max_len, round(rng.gauss(15, 3))))
    return [rng.choice(LETTERS) for _ in range(n)]


def target(task, seq):
    return list(seq) if task == "copy" else sorted(seq)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", choices=["copy", "sort"])
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-len", type=int, default=48,
                   help="longest sequence (leave room for <sos>/<eos>)")
    p.add_argument("--out", required=True, help="path prefix")
    a = p.parse_args()
    rng = random.Random(a.seed)
    with open(a.out + ".src", "w") as src, open(a.out + ".ref", "w") as tgt:
        for _ in range(a.count):
            s = sample(rng, a.max_len)
            src.write(" ".join(s) + "\n")
            tgt.write(" ".join(target(a.task, s)) + "\n")


if __name__ == "__main__":
    main()
