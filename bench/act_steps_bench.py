"""Time per ACT step of a Universal Transformer against the number of active
nodes and edges, on an example's test set (teacher-forced forward).

    python3 bench/act_steps_bench.py [--example sort-ut] [--runs 3]
        [--batch-size 64] [--threads 0]

The ACT loop runs inside one compiled call, so a step is timed as the
difference between runs whose config stops the loop after t + 1 and after
t steps (the nodes active at step t do not depend on max_depth; only the
last step's halting does). Active edges per step: an active encoder node
receives one edge per token of its source (ee), an active decoder node at
position p receives p + 1 (dd) plus one per source token (ed).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
import safetensors_util  # noqa: E402

SUMMARY = re.compile(r"tokens in ([\d.]+) s")


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(args), p.stderr))
    return float(SUMMARY.search(p.stderr).group(1))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--example", default="sort-ut",
                    help="an example's name or directory")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch-size", default="64")
    ap.add_argument("--threads", default="0")
    ap.add_argument("--gnn-run", default=os.path.join(ROOT, "build", "bin",
                                                      "gnn-run"))
    a = ap.parse_args()
    ex = (a.example if os.path.isdir(a.example) else
          os.path.join(ROOT, "examples", a.example))
    config = json.load(open(os.path.join(ex, "config.json")))
    depth = config.get("max_depth", 8)
    tmp = tempfile.mkdtemp()
    src = os.path.join(ex, "test.src")
    tgt = os.path.join(tmp, "tgt.txt")
    with open(os.path.join(ex, "test.ref")) as f, open(tgt, "w") as out:
        for line in f:
            out.write("<sos> " + line)
    src_lens = [len(l.split()) for l in open(src)]
    tgt_lens = [len(l.split()) for l in open(tgt)]

    def forward(d, out):
        c = dict(config, max_depth=d,
                 weights=os.path.join(ex, config["weights"]),
                 vocab=os.path.join(ex, config["vocab"]))
        path = os.path.join(tmp, "config%d.json" % d)
        with open(path, "w") as f:
            json.dump(c, f)
        return [run([a.gnn_run, "--config", path, "--src", src, "--tgt", tgt,
                     "--mode", "forward", "--out", out, "--batch-size",
                     a.batch_size, "--threads", a.threads])
                for _ in range(a.runs)]

    full = os.path.join(tmp, "full.safetensors")
    times = {0: [0.0]}
    for d in range(1, depth + 1):
        times[d] = forward(d, full)
    results = safetensors_util.read(full)
    enc = list(results["enc_steps"][2])
    dec = list(results["dec_steps"][2])
    enc_in = [n for n in src_lens for _ in range(n)]
    dec_in = [p + 1 + n for n, m in zip(src_lens, tgt_lens) for p in range(m)]

    print("%s: %d sequences (%d source, %d target tokens), max_depth %d, "
          "batches of %s; median of %d runs" %
          (a.example, len(src_lens), len(enc), len(dec), depth,
           a.batch_size, a.runs))
    print("| step | active enc nodes | active dec nodes | active edges | "
          "step ms | ns per active edge |")
    print("|---:|---:|---:|---:|---:|---:|")
    for t in range(depth):
        nodes_e = sum(1 for s in enc if s > t)
        nodes_d = sum(1 for s in dec if s > t)
        edges = (sum(e for s, e in zip(enc, enc_in) if s > t) +
                 sum(e for s, e in zip(dec, dec_in) if s > t))
        ms = (statistics.median(times[t + 1]) -
              statistics.median(times[t])) * 1e3
        print("| %d | %d | %d | %d | %.1f | %s |" %
              (t, nodes_e, nodes_d, edges, ms,
               "%.0f" % (ms * 1e6 / edges) if edges else "-"))
    print("total forward (max_depth %d): %.3f s" %
          (depth, statistics.median(times[depth])))


if __name__ == "__main__":
    main()
