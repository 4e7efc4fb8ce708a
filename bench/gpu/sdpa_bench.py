"""The GPU baselines for gnnc's attention kernels, on the workloads of
gnn-bench-attention: PyTorch's scaled_dot_product_attention on the padded
form of the complete and causal batches (the dense baseline), and PyG's
message passing as TransformerConv does it (edge scores, softmax grouped by
destination, scatter-sum of weighted values) on the same graphs as edge
lists, the random graph (d) included (the sparse baseline, where
torch_geometric is installed). Times are of the kernels with the inputs on
the device (CUDA events), of the forward and of forward and backward
(autograd's gradients of q, k and v for a random output gradient), float32
with TF32 off. Prints tables; exits 0 with a note when PyTorch has no CUDA
device.

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


def median_ms(run, repeats):
    import torch
    for _ in range(3):
        run()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


HEADER = "%-32s %10s %12s %12s %12s"
ROW = "%-32s %10d %12.3f %12.1f %12.3f"


def timed_pair(torch, run, inputs, repeats):
    """Median ms of run() without gradients, and of run() with the backward
    of a fixed random output gradient into `inputs`."""
    with torch.no_grad():
        forward = median_ms(run, repeats)
    grad = torch.randn_like(run().detach())

    def both():
        torch.autograd.grad(run(), inputs, grad)

    return forward, median_ms(both, repeats)


def edge_lists(torch, dev):
    """(name, num_nodes, src, dst) of the workloads as edge lists."""
    out = []
    for name, lengths, causal in batches():
        src, dst, base = [], [], 0
        for length in lengths:
            ids = torch.arange(base, base + length, device=dev)
            s = ids.repeat(length)
            d = ids.repeat_interleave(length)
            if causal:
                keep = s <= d
                s, d = s[keep], d[keep]
            src.append(s)
            dst.append(d)
            base += length
        out.append((name, base, torch.cat(src), torch.cat(dst)))
    gen = torch.Generator(device=dev).manual_seed(7)
    n, m = 100000, 1600000
    out.append(("(d) 100k nodes, in-degree 16", n,
                torch.randint(n, (m,), device=dev, generator=gen),
                torch.randint(n, (m,), device=dev, generator=gen)))
    return out


def pyg_table(torch, dev, repeats):
    try:
        from torch_geometric.utils import scatter, softmax
    except ImportError:
        print("PyG (torch_geometric) is not installed; its rows are skipped")
        return
    import torch_geometric
    print("\nPyG %s message passing (TransformerConv's: scores, softmax by "
          "destination, scatter-sum)" % torch_geometric.__version__)
    print(HEADER % ("workload", "edges", "ms", "Medges/s", "f+b ms"))
    for name, n, src, dst in edge_lists(torch, dev):
        q, k, v = (torch.randn(n, HEADS, DK, device=dev, requires_grad=True)
                   for _ in range(3))

        def run():
            score = ((q[dst] * k[src]).sum(-1) / 8.0).clamp(-5.0, 5.0)
            alpha = softmax(score, dst, num_nodes=n)
            return scatter(v[src] * alpha.unsqueeze(-1), dst, dim=0,
                           dim_size=n, reduce="sum")

        ms, both = timed_pair(torch, run, (q, k, v), repeats)
        print(ROW % (name, src.numel(), ms, src.numel() / ms / 1e3, both))


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
    # float32 as gnnc computes it: no TF32 in products or convolutions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print("PyTorch %s on %s" % (torch.__version__,
                                torch.cuda.get_device_name(0)))
    print(HEADER % ("workload", "edges", "padded ms", "Medges/s",
                    "f+b ms"))
    for name, lengths, causal in batches():
        n, t = len(lengths), max(lengths)
        q, k, v = (torch.randn(n, HEADS, t, DK, device=dev,
                               requires_grad=True) for _ in range(3))
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

        ms, both = timed_pair(torch, run, (q, k, v), args.repeats)
        print(ROW % (name, edges, ms, edges / ms / 1e3, both))
    pyg_table(torch, dev, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
