"""PyTorch's scaled_dot_product_attention on the GPU, on the padded form of
the batches gnn-bench-attention uses for complete (a) and causal (b)
graphs: the dense baseline for gnnc's fused attention kernel. Prints a
table; exits 0 with a note when PyTorch has no CUDA device.

    python3 bench/gpu/sdpa_bench.py [--repeats 20]
"""

import argparse
import random
import statistics
import sys

HEADS, DK = 8, 64


def batches():
    """(name, lengths, causal): gnn-bench-attention's batched workloads
    (a)-(c); the lengths of (a) are drawn from the same distribution, not
    the same generator."""
    rng = random.Random(1)
    copy = [max(1, round(rng.gauss(15, 3))) for _ in range(128)]
    return [("(a) 128 x N(15,3) complete", copy, False),
            ("(b) 16 x 256 complete", [256] * 16, False),
            ("(c) 16 x 256 causal", [256] * 16, True)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("sdpa_bench: PyTorch is not installed; skipped")
        return 0
    if not torch.cuda.is_available():
        print("sdpa_bench: PyTorch sees no CUDA device; skipped")
        return 0
    dev = torch.device("cuda")
    print("PyTorch %s on %s" % (torch.__version__,
                                torch.cuda.get_device_name(0)))
    print("%-32s %10s %12s %12s" % ("workload", "edges", "padded ms",
                                    "Medges/s"))
    for name, lengths, causal in batches():
        n, t = len(lengths), max(lengths)
        q = torch.randn(n, HEADS, t, DK, device=dev)
        k, v = torch.randn_like(q), torch.randn_like(q)
        keep = torch.zeros(n, 1, t, t, dtype=torch.bool, device=dev)
        edges = 0
        for i, length in enumerate(lengths):
            block = torch.ones(length, length, dtype=torch.bool, device=dev)
            if causal:
                block = block.tril()
            keep[i, 0, :length, :length] = block
            edges += int(block.sum())

        def run():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)

        for _ in range(3):
            run()
        times = []
        for _ in range(args.repeats):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop))
        ms = statistics.median(times)
        print("%-32s %10d %12.3f %12.1f" % (name, edges, ms,
                                           edges / ms / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
