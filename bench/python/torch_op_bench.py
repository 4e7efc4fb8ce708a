#!/usr/bin/env python3
"""gnnc.torch.fused_attention inside PyTorch against PyTorch's attention.

Forward and forward+backward (the loss sum(o * go), as a training step
takes it) on the attention benchmark's workloads, 8 heads of 64:

  (a) 128 sequences of N(15, 3) tokens, complete blocks (the copy task)
  (b) 16 sequences of 256 tokens, complete
  (c) 16 sequences of 256 tokens, causal
  (d) a random graph of 100k nodes with in-degree 16

PyTorch's side runs what a PyTorch user would: scaled_dot_product_attention
(PyTorch 2) or the plain matmul-softmax-matmul (older) over the sequences
padded to the longest, with a mask where they are ragged or causal; on (d)
the edge softmax written with index_add/scatter_reduce, as PyG does. Both
sides get the same float32 tensors; the table prints medians of --repeats
runs after a warm-up and the largest difference of the outputs.

  PYTHONPATH=build/python python3 bench/python/torch_op_bench.py \
      [--repeats N] [--quick] [--workloads abcd] [--threads T]

PyTorch runs on as many threads as gnnc (all cores) unless --threads says
otherwise (some builds default to one).
"""

import argparse
import os
import warnings
import math
import platform
import statistics
import sys
import time

# gnnc first: it loads OpenBLAS with its kernels for this CPU, which numpy
# would otherwise load with OpenBLAS's own choice (docs/python.md).
import gnnc  # isort: skip
import numpy as np
import torch

import gnnc.torch

HEADS, DK = 8, 64


def blocks(lengths, causal):
    """COO edges of complete (or causal) blocks: every key u to query v."""
    src, dst, offset = [], [], 0
    for n in lengths:
        i = np.arange(n)
        u, v = np.meshgrid(i, i, indexing="ij")
        keep = (u <= v) if causal else np.ones_like(u, dtype=bool)
        src.append(offset + u[keep])
        dst.append(offset + v[keep])
        offset += n
    return np.concatenate(src), np.concatenate(dst), offset


def workloads(quick, letters):
    rng = np.random.default_rng(7)
    out = []
    if "a" in letters:
        lengths = np.maximum(1, np.rint(rng.normal(15, 3, 16 if quick else 128)))
        out.append(("(a) 128 x N(15,3) complete", lengths.astype(int), False))
    if "b" in letters:
        out.append(("(b) 16 x 256 complete", [256] * (2 if quick else 16), False))
    if "c" in letters:
        out.append(("(c) 16 x 256 causal", [256] * (2 if quick else 16), True))
    if "d" in letters:
        n = 10000 if quick else 100000
        m = n * 16
        out.append(("(d) 100k nodes, in-degree 16",
                    (rng.integers(0, n, m), rng.integers(0, n, m), n), None))
    return out


def padded_attention(lengths, causal):
    """PyTorch's attention over the sequences padded to the longest."""
    lengths = list(lengths)
    b, longest = len(lengths), max(lengths)
    index = torch.cat([torch.arange(n) for n in lengths])
    rows = torch.cat([torch.full((n,), i) for i, n in enumerate(lengths)])
    valid = torch.zeros(b, longest, dtype=torch.bool)
    valid[rows, index] = True
    mask = valid[:, None, None, :] & valid[:, None, :, None]
    if causal:
        mask = mask & torch.ones(longest, longest, dtype=torch.bool).tril()
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)

    def run(q, k, v):
        def pad(t):
            out = t.new_zeros(b, longest, HEADS, DK)
            out[rows, index] = t
            return out.transpose(1, 2)  # [b, heads, longest, dk]

        qp, kp, vp = pad(q), pad(k), pad(v)
        if sdpa is not None:
            o = sdpa(qp, kp, vp, attn_mask=mask)
        else:
            scores = qp @ kp.transpose(-1, -2) / math.sqrt(DK)
            scores = scores.masked_fill(~mask, float("-inf"))
            o = torch.softmax(scores, -1).nan_to_num(0.0) @ vp
        return o.transpose(1, 2)[rows, index]

    return run, ("scaled_dot_product_attention" if sdpa is not None
                 else "matmul-softmax-matmul")


def edge_attention(src, dst, n):
    """Attention over edges with PyTorch's scatter ops (PyG's way)."""
    src, dst = torch.as_tensor(src), torch.as_tensor(dst)

    def run(q, k, v):
        score = (q[dst] * k[src]).sum(-1) / math.sqrt(DK)  # [m, heads]
        top = torch.full((n, HEADS), float("-inf")).scatter_reduce(
            0, dst[:, None].expand(-1, HEADS), score, "amax")
        weight = torch.exp(score - top[dst])
        total = torch.zeros(n, HEADS).index_add(0, dst, weight)
        o = torch.zeros(n, HEADS, DK).index_add(0, dst, weight[..., None] * v[src])
        return o / total.clamp_min(1e-30)[..., None]

    return run, "edge softmax (index_add, scatter_reduce)"


def median_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workloads", default="abcd")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="PyTorch's intra-op threads (default: all "
                        "cores, as gnnc runs)")
    args = parser.parse_args()
    if args.repeats < 1:
        sys.exit("torch_op_bench: --repeats must be at least 1")
    if not set(args.workloads) <= set("abcd") or not args.workloads:
        sys.exit("torch_op_bench: --workloads takes letters among a, b, c, d")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message="scatter_reduce")
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"gnnc {gnnc.__file__}, {platform.processor() or platform.machine()}"
          f"; {HEADS} heads of {DK}; median of {args.repeats} runs\n")
    print(f"{'workload':<30} {'edges':>9} | {'gnnc fwd':>9} {'torch fwd':>10}"
          f" {'ratio':>6} | {'gnnc f+b':>9} {'torch f+b':>10} {'ratio':>6}"
          f" | {'max diff':>8}  torch's attention")
    torch.manual_seed(0)
    for name, shape, causal in workloads(args.quick, args.workloads):
        if causal is None:
            src, dst, n = shape
            reference, how = edge_attention(src, dst, n)
        else:
            src, dst, n = blocks(shape, causal)
            reference, how = padded_attention(shape, causal)
        graph = gnnc.Graph.from_coo(src, dst, num_src=n, num_dst=n)
        q, k, v = (torch.randn(n, HEADS, DK) for _ in range(3))
        go = torch.randn(n, HEADS, DK)

        def step(attend):
            def forward():
                with torch.no_grad():
                    return attend(q, k, v)

            def both():
                leaves = [t.detach().requires_grad_() for t in (q, k, v)]
                (attend(*leaves) * go).sum().backward()

            return forward, both

        ours = lambda a, b, c: gnnc.torch.fused_attention(graph, a, b, c,
                                                          clamp=None)
        ours_fwd, ours_both = step(ours)
        ref_fwd, ref_both = step(reference)
        diff = (ours_fwd() - ref_fwd()).abs().max().item()
        times = [median_ms(f, args.repeats)
                 for f in (ours_fwd, ref_fwd, ours_both, ref_both)]
        print(f"{name:<30} {len(src):>9} | {times[0]:>7.2f}ms {times[1]:>8.2f}ms"
              f" {times[1] / times[0]:>5.2f}x | {times[2]:>7.2f}ms"
              f" {times[3]:>8.2f}ms {times[3] / times[2]:>5.2f}x |"
              f" {diff:>8.1e}  {how}")


if __name__ == "__main__":
    main()
