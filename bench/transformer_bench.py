"""Times gnn-run on a model's test set: teacher-forced forward, greedy and
beam decoding, fused and unfused; prints a table (median of N runs, with
min-max) of run time without compilation and tokens per second, as gnn-run
reports them.

    python3 bench/transformer_bench.py [--example copy] [--runs 5]
        [--batch-size 64] [--threads 0]

The forward pass feeds each expected output as the decoder input
(<sos> + reference tokens).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = re.compile(r"(\d+) sequences, (\d+) \w+ tokens in ([\d.]+) s "
                     r"\(\d+ tokens/s; compiled in ([\d.]+) s")


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(args), p.stderr))
    m = SUMMARY.search(p.stderr)
    if not m:
        sys.exit("no summary in gnn-run's output:\n" + p.stderr)
    return int(m.group(2)), float(m.group(3)), float(m.group(4))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--example", default="copy")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batch-size", default="64")
    ap.add_argument("--threads", default="0")
    ap.add_argument("--gnn-run", default=os.path.join(ROOT, "build", "bin",
                                                      "gnn-run"))
    a = ap.parse_args()
    ex = os.path.join(ROOT, "examples", a.example)
    tmp = tempfile.mkdtemp()
    tgt = os.path.join(tmp, "tgt.txt")
    with open(os.path.join(ex, "test.ref")) as f, open(tgt, "w") as out:
        for line in f:
            out.write("<sos> " + line)
    base = [a.gnn_run, "--config", os.path.join(ex, "config.json"),
            "--src", os.path.join(ex, "test.src"), "--batch-size",
            a.batch_size, "--threads", a.threads]
    rows = [("forward", ["--mode", "forward", "--tgt", tgt,
                         "--out", os.path.join(tmp, "lp.safetensors")]),
            ("greedy", ["--mode", "greedy", "--out", os.path.join(tmp, "g")]),
            ("beam 4", ["--mode", "beam", "--beam-size", "4",
                        "--out", os.path.join(tmp, "b")])]
    print("| mode | kernels | tokens | run s (median, min-max) | tokens/s | "
          "compile s |")
    print("|---|---|---:|---:|---:|---:|")
    for name, extra in rows:
        for fuse in ("fused", "unfused"):
            flags = extra + (["--no-fuse"] if fuse == "unfused" else [])
            times, compiles, tokens = [], [], 0
            for _ in range(a.runs):
                tokens, t, c = run(base + flags)
                times.append(t)
                compiles.append(c)
            med = statistics.median(times)
            print("| %s | %s | %d | %.3f (%.3f-%.3f) | %.0f | %.2f |" %
                  (name, fuse, tokens, med, min(times), max(times),
                   tokens / med if med else 0, statistics.median(compiles)))


if __name__ == "__main__":
    main()
