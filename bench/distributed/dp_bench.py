"""Data-parallel training against one process on this machine: tokens/s
of `gnn-train` on the tutorial model (examples/tutorial, tied weights,
batch 128 per rank) as 1 process of T threads with --grad-accum K (the
same updates) and as K ranks of T/K threads under mpirun, with the
gradient exchange during the backward (the default) and after it
(--overlap-exchange=false), and rank 0's time in the exchange: after the
backward, and hidden during it. Prints a table; then the per-update
gradient volume, its tensors and the compute time per update, and
docs/distributed.md's scaling model from them (10 us a message).

    python3 bench/distributed/dp_bench.py [--ranks 2] [--threads 2]
        [--count 4000] [--epochs 3] [--config examples/tutorial/config.json]
        [--compute-ms C]

Tokens/s is the median over the epochs after the first (which includes
faulting in memory).
"""

import argparse
import os
import re
import shutil
import statistics
import struct
import json
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "build", "bin", "gnn-train")
EPOCH = re.compile(r"^epoch \d+: .* ([\d.]+) s, (\d+) tokens/s, step \d+",
                   re.M)
EXCHANGE = re.compile(r"([\d.]+) s of ([\d.]+) s training passing on and "
                      r"broadcasting gradient sums after the backward "
                      r"\(([\d.]+)%\), ([\d.]+) s during it \(.*?\), "
                      r"([\d.]+) s waiting")


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(args), p.stdout, p.stderr))
    return p.stdout


def tokens_per_second(out):
    rates = [int(m.group(2)) for m in EPOCH.finditer(out)]
    return statistics.median(rates[1:] if len(rates) > 1 else rates)


def exchange_seconds(volume, tensors, ranks, bandwidth, latency):
    """The chain and broadcast of docs/distributed.md: each tensor passes
    K - 1 hops, pipelined tensor by tensor, then every tensor is
    broadcast."""
    hop = volume / tensors / bandwidth + latency
    chain = (tensors + ranks - 2) * hop
    broadcast = volume / bandwidth + tensors * latency
    return chain + broadcast


def scaling_table(volume, tensors, compute):
    lines = ["| setup | bandwidth | exchange | efficiency |",
             "|---|---:|---:|---:|"]
    for name, ranks, bandwidth in (
            ("8 GPUs, one node, NVLink (NCCL p2p)", 8, 350e9),
            ("4 nodes x 8 GPUs, InfiniBand NDR", 32, 50e9),
            ("4 nodes x 8, 100 GbE", 32, 12.5e9)):
        t = exchange_seconds(volume, tensors, ranks, bandwidth, 10e-6)
        lines.append("| %s | %.0f GB/s | %.2f ms | %.0f%% |" % (
            name, bandwidth / 1e9, t * 1e3, 100 * compute / (compute + t)))
    return "\n".join(lines)


def parameter_bytes(path):
    """The bytes and the number of the float32 tensors of a safetensors
    file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    total = count = 0
    for name, t in header.items():
        if name != "__metadata__" and t["dtype"] == "F32":
            total += t["data_offsets"][1] - t["data_offsets"][0]
            count += 1
    return total, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--count", type=int, default=4000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--compute-ms", type=float, default=0.0,
                    help="compute time per rank and update for the "
                    "scaling table (default: measured here)")
    ap.add_argument("--config", default=os.path.join(
        ROOT, "examples", "tutorial", "config.json"))
    a = ap.parse_args()
    if a.threads % a.ranks:
        sys.exit("--threads must be a multiple of --ranks")
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit("mpirun not found (scripts/setup.sh installs Open MPI)")
    work = tempfile.mkdtemp()
    data = os.path.join(work, "copy")
    run([sys.executable, os.path.join(ROOT, "examples", "tasks.py"), "copy",
         "--count", str(a.count), "--seed", "101", "--out", data])
    common = ["--config", a.config, "--train-src", data + ".src",
              "--train-tgt", data + ".ref", "--epochs", str(a.epochs),
              "--lr-factor", "1", "--warmup", "400", "--tie-weights"]
    one = run([TRAIN] + common + ["--threads", str(a.threads), "--grad-accum",
                                  str(a.ranks), "--out-dir",
                                  os.path.join(work, "one")])
    env_root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    runs = {}
    for overlap in ("true", "false"):
        runs[overlap] = run(
            [mpirun] + env_root + ["-np", str(a.ranks), TRAIN] + common +
            ["--threads", str(a.threads // a.ranks), "--overlap-exchange=" +
             overlap, "--out-dir", os.path.join(work, "many-" + overlap)])
    single = tokens_per_second(one)
    print("| run | tokens/s | vs 1 process | rank 0: exchange after the "
          "backward | during it (awaiting other ranks included) | waiting "
          "for other ranks' batches |")
    print("|---|---:|---:|---:|---:|---:|")
    print("| 1 process, %d threads, --grad-accum %d | %d | 1.00x | | | |" %
          (a.threads, a.ranks, single))
    for overlap, label in (("true", "during the backward"),
                           ("false", "after the backward")):
        out = runs[overlap]
        m = EXCHANGE.search(out)
        parallel = tokens_per_second(out)
        print("| %d ranks x %d thread(s), exchange %s | %d | %.2fx | "
              "%s s of %s s (%s%%) | %s s | %s s |" %
              ((a.ranks, a.threads // a.ranks, label, parallel,
                parallel / single) + (m.groups() if m else ("?",) * 5)))
    print()
    many = runs["false"]
    m = EXCHANGE.search(many)
    volume, tensors = parameter_bytes(
        os.path.join(work, "many-false", "epoch-1.safetensors"))
    updates = int(re.findall(r"step (\d+)", many)[-1])
    compute = (float(m.group(2)) - float(m.group(1)) - float(m.group(5))) / \
        updates if m else 0.0
    print("per update: %.2f MB of gradients in %d tensors; %.1f ms of "
          "compute per rank here" % (volume / 1e6, tensors, compute * 1e3))
    print()
    print(scaling_table(volume, tensors, a.compute_ms / 1e3 if a.compute_ms
                        else compute))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
