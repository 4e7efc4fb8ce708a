"""Writes a batch of many complete blocks (sequences) and random features:
enough destination tiles that a kernel which kept each tile's stack buffers
until it returned would overflow a small stack.

usage: many_blocks_case.py OUT_DIR BLOCKS SIZE SEED
Writes graph.safetensors, attention.safetensors (q, k, v: [N, 8, 64], the
shapes of examples/attention.mlir) and grad.safetensors (q, k, v, w:
[N, 2, 8], those of Inputs/attention_grad.mlir).
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "scripts", "py"))
import safetensors_util  # noqa: E402


def main():
    out_dir, blocks, size, seed = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    n = blocks * size
    src, dst = [], []
    for b in range(blocks):
        for j in range(size):
            for i in range(size):
                src.append(b * size + i)
                dst.append(b * size + j)
    os.makedirs(out_dir, exist_ok=True)
    safetensors_util.write(os.path.join(out_dir, "graph.safetensors"), {
        "src": ("I64", [len(src)], src),
        "dst": ("I64", [len(dst)], dst),
        "num_nodes": ("I64", [], [n]),
    })

    def features(names, heads, dk):
        shape = [n, heads, dk]
        return {name: ("F32", shape,
                       [rng.gauss(0, 1) for _ in range(n * heads * dk)])
                for name in names}

    safetensors_util.write(os.path.join(out_dir, "attention.safetensors"),
                           features("qkv", 8, 64))
    safetensors_util.write(os.path.join(out_dir, "grad.safetensors"),
                           features("qkvw", 2, 8))


if __name__ == "__main__":
    main()
