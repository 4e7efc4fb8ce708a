"""Trains the copy or sort model with the reference PyTorch implementation
(scripts/py/torch_reference.py, the same math gnn-run executes) and writes
its weights as safetensors. Not needed by the build or the tests.

    /usr/bin/python3 examples/train.py examples/copy --task copy --steps 1500
    /usr/bin/python3 examples/train.py examples/sort-ut --task sort --steps 3000

The model class follows the config's architecture; a Universal Transformer
learns its halting through the loss alone (no ponder cost).
"""

import argparse
import json
import os
import random
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts", "py"))
sys.path.insert(0, HERE)

import tasks  # noqa: E402
from torch_reference import (EOS, SOS, Transformer,  # noqa: E402
                             UniversalTransformer, pad_batch)
from safetensors_util import save_torch as save  # noqa: E402


def batch(rng, task, size, vocab, max_len):
    srcs, tgts, outs = [], [], []
    for _ in range(size):
        s = tasks.sample(rng, max_len - 2)
        ids = [vocab[t] for t in s]
        t = [vocab[x] for x in tasks.target(task, s)]
        srcs.append(ids)
        tgts.append([SOS] + t)
        outs.append(t + [EOS])
    return srcs, tgts, outs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir", help="example directory with config.json, vocab.txt")
    p.add_argument("--task", choices=["copy", "sort"], required=True)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init", help="start from these weights (safetensors)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads (default: all cores)")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    if a.threads:
        torch.set_num_threads(a.threads)
    rng = random.Random(a.seed + 1000)
    config = json.load(open(os.path.join(a.dir, "config.json")))
    tokens = open(os.path.join(a.dir, config["vocab"])).read().split()
    vocab = {t: i + 3 for i, t in enumerate(tokens)}
    universal = config["architecture"] == "universal_transformer"
    model = (UniversalTransformer if universal else Transformer)(config,
                                                                 bias=True)
    if a.init:
        import safetensors_util
        state = {k: torch.tensor(v).reshape(shape)
                 for k, (_, shape, v) in safetensors_util.read(a.init).items()}
        model.load_state_dict(state)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.98))
    warmup = max(1, a.steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, 1.0) *
        max(0.05, 1 - s / max(1, a.steps)))
    start = time.time()
    for step in range(a.steps):
        srcs, tgts, outs = batch(rng, a.task, a.batch, vocab, config["max_len"])
        src, src_len = pad_batch(srcs)
        tgt, tgt_len = pad_batch(tgts)
        gold, _ = pad_batch(outs, pad=-100)
        model.train()
        lp = model(src, src_len, tgt, tgt_len)
        loss = torch.nn.functional.nll_loss(lp.flatten(0, 1), gold.flatten(),
                                            ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == a.steps - 1:
            print(f"step {step} loss {loss.item():.4f} "
                  f"{time.time() - start:.0f}s", flush=True)
    state = {k: v for k, v in model.state_dict().items()}
    save(os.path.join(a.dir, config["weights"]), state)


if __name__ == "__main__":
    main()
