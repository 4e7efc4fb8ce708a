"""Learning side by side: gnnc and DGL train the tutorial's copy model from
the same initial weights on the same batches, and this prints each epoch's
validation loss and token accuracy for both (the definitions of
docs/training.md). The data are docs/gnn-train.md's: 9000 training and 1000
validation sequences of the copy task (examples/tasks.py, seeds 101 and
102). Batches of 128 in the files' order, label smoothing 0.1, Adam with the
Noam rate (factor 1, warmup 400), no dropout and untied weights for both
(the DGL peer has no dropout). Each system runs in a process of its own.

    bench/peers/.venv/bin/python bench/peers/accuracy.py [--epochs 10]

Systems:
  gnnc   build/bin/gnn-train --valid-src/--valid-tgt (its epoch lines)
  DGL    bench/peers/dgl_transformer.py: propagate_attention with DGL's
         built-ins on one batched graph per batch, PyTorch autograd
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
sys.path.insert(0, HERE)
from torch_reference import EOS, SOS, noam_rate, smoothed_kl  # noqa: E402
from training import load_with_adam, write_initial_weights  # noqa: E402

GNN_TRAIN = os.path.join(ROOT, "build", "bin", "gnn-train")
TASKS = os.path.join(ROOT, "examples", "tasks.py")
VOCAB_FILE = os.path.join(ROOT, "examples", "copy", "vocab.txt")
CONFIG = dict(architecture="transformer", layers=1, d_model=128, heads=1,
              d_ff=128, src_vocab=29, tgt_vocab=29, max_len=50,
              score_clamp=10, cross_attention="dgl", vocab=VOCAB_FILE)
BATCH, EPS, FACTOR, WARMUP = 128, 0.1, 1.0, 400


def read_pairs(work, name, vocab):
    with open(os.path.join(work, name + ".src")) as src, \
            open(os.path.join(work, name + ".ref")) as tgt:
        return [([vocab[t] for t in s.split()], [vocab[t] for t in t.split()])
                for s, t in zip(src, tgt)]


def batches(pairs):
    for i in range(0, len(pairs), BATCH):
        batch = pairs[i:i + BATCH]
        srcs = [s for s, _ in batch]
        decs = [[SOS] + t for _, t in batch]
        labels = torch.tensor(sum([t + [EOS] for _, t in batch], []))
        yield srcs, decs, labels


def dgl_worker(work, epochs):
    """Trains the DGL peer; prints one line per epoch."""
    from dgl_transformer import DGLTransformer
    vocab = {t: i for i, t in enumerate(
        ["<sos>", "<eos>", "<pad>"] + open(VOCAB_FILE).read().split())}
    train = read_pairs(work, "train", vocab)
    valid = read_pairs(work, "valid", vocab)
    model = DGLTransformer(CONFIG, bias=False)
    opt = load_with_adam(model, os.path.join(work, "init.safetensors"))
    step = 0
    for epoch in range(1, epochs + 1):
        for srcs, decs, labels in batches(train):
            step += 1
            loss = smoothed_kl(model.forward_rows(srcs, decs), labels, EPS)
            loss.backward()
            for g in opt.param_groups:
                g["lr"] = noam_rate(step, CONFIG["d_model"], FACTOR, WARMUP)
            opt.step()
            opt.zero_grad()
        total = correct = tokens = 0
        with torch.no_grad():
            for srcs, decs, labels in batches(valid):
                lp = model.forward_rows(srcs, decs)
                total += float(smoothed_kl(lp, labels, EPS)) * len(labels)
                correct += int((lp.argmax(1) == labels).sum())
                tokens += len(labels)
        print("epoch %d valid loss %.4f acc %.4f" %
              (epoch, total / tokens, correct / tokens), flush=True)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.worker:
        return dgl_worker(a.work, a.epochs)
    if not os.path.exists(GNN_TRAIN):
        sys.exit("build gnnc first (scripts/setup.sh)")
    work = tempfile.mkdtemp(prefix="gnnc-accuracy-")
    for name, count, seed in (("train", 9000, 101), ("valid", 1000, 102)):
        subprocess.run([sys.executable, TASKS, "copy", "--count", str(count),
                        "--seed", str(seed), "--out",
                        os.path.join(work, name)], check=True)
    config = os.path.join(work, "config.json")
    json.dump(CONFIG, open(config, "w"))
    init = os.path.join(work, "init.safetensors")
    write_initial_weights(CONFIG, init)

    out = subprocess.run([
        GNN_TRAIN, "--config", config,
        "--train-src", os.path.join(work, "train.src"),
        "--train-tgt", os.path.join(work, "train.ref"),
        "--valid-src", os.path.join(work, "valid.src"),
        "--valid-tgt", os.path.join(work, "valid.ref"),
        "--init", init, "--out-dir", os.path.join(work, "out"),
        "--epochs", str(a.epochs), "--batch-size", str(BATCH),
        "--dropout", "0", "--shuffle=false", "--lr-factor", str(FACTOR),
        "--warmup", str(WARMUP)], capture_output=True, text=True, check=True)
    ours = re.findall(r"valid loss ([0-9.]+) acc ([0-9.]+)", out.stdout)
    print("done: gnnc", file=sys.stderr, flush=True)
    out = subprocess.run([sys.executable, __file__, "--worker", "--work", work,
                          "--epochs", str(a.epochs)], capture_output=True,
                         text=True, check=True)
    theirs = re.findall(r"valid loss ([0-9.]+) acc ([0-9.]+)", out.stdout)
    if len(ours) != a.epochs or len(theirs) != a.epochs:
        sys.exit("accuracy.py: expected %d epochs, got %d (gnnc) and %d (DGL)"
                 % (a.epochs, len(ours), len(theirs)))
    print("copy task, tutorial model; %d training / 1000 validation "
          "sequences, batch %d, no dropout" % (9000, BATCH))
    print("| epoch | gnnc valid loss | gnnc valid acc | DGL valid loss "
          "| DGL valid acc |")
    print("|---:|---:|---:|---:|---:|")
    for epoch, ((gl, ga), (dl, da)) in enumerate(zip(ours, theirs), start=1):
        print("| %d | %s | %s | %s | %s |" % (epoch, gl, ga, dl, da))


if __name__ == "__main__":
    main()
