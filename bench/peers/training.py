"""Training throughput of gnnc, DGL and PyTorch on the same machine, data,
batches and initial weights: one epoch of the copy task (batches of 128 in
the files' order, label smoothing 0.1, Adam with the Noam rate, dropout 0
for every system: the Python peers have no dropout), tokens/s of the epoch
(decoder labels over the training loop's wall time, compilation and model
setup excluded) and peak resident memory of the process. Each system runs
in a process of its own.

    bench/peers/.venv/bin/python bench/peers/training.py [--sequences 1280]
        [--workloads tutorial,dgl-default] [--device cpu|cuda] [--epochs 1]

With --epochs N > 1 every system trains N epochs in its process and the
table adds the last epoch's tokens/s ('steady'): the first epoch's rate
includes what each system does once (a GPU's allocations, graph
instantiation, cuBLAS's set-up); the loss compared is the first epoch's.

With --device cuda (bench/gpu/train.sh) gnnc trains with gnn-train
--device cuda and PyTorch on the same GPU, float32 with TF32 off on both
sides (gnnc's GEMMs are float32 on cuBLAS), DGL not at all; the table adds
each system's peak device memory: PyTorch's caching allocator's
max_memory_reserved, gnnc's unified and device memory held (gnn-train's
last line).

Systems:
  gnnc      build/bin/gnn-train (the whole step compiled, fused attention
            forward and backward)
  DGL       bench/peers/dgl_transformer.py: propagate_attention with DGL's
            built-ins on one batched graph per batch, PyTorch autograd
  PyTorch   scripts/py/torch_reference.py: dense padded attention, autograd
Workloads: the tutorial's model (1 layer, d_model 128, 1 head, d_ff 128) and
DGL's example default (6 layers, d_model 512, 8 heads, d_ff 2048). The
'same' column: the epoch's average loss within 1e-3 of gnnc's.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, HERE)
import safetensors_util  # noqa: E402
import tasks  # noqa: E402
from torch_reference import (EOS, SOS, Transformer, noam_rate,  # noqa: E402
                             smoothed_kl)

GNN_TRAIN = os.path.join(ROOT, "build", "bin", "gnn-train")
VOCAB_FILE = os.path.join(ROOT, "examples", "copy", "vocab.txt")
MODELS = {
    "tutorial": dict(layers=1, d_model=128, heads=1, d_ff=128),
    "dgl-default": dict(layers=6, d_model=512, heads=8, d_ff=2048),
}
BATCH, EPS, FACTOR, WARMUP = 128, 0.1, 1.0, 400


def write_initial_weights(config, path):
    """The shared initial weights: Xavier-uniform matrices from seed 7."""
    torch.manual_seed(7)
    model = Transformer(config, bias=False)
    for p in model.parameters():
        if p.dim() > 1:
            torch.nn.init.xavier_uniform_(p)
    safetensors_util.save_torch(path, model.state_dict())


def load_with_adam(model, path):
    """Loads the initial weights at `path` into `model`; returns Adam over
    its parameters (betas 0.9/0.98, eps 1e-9; the rate is set per step)."""
    state = {k: torch.tensor(v[2], dtype=torch.float32).reshape(v[1])
             for k, v in safetensors_util.read(path).items()}
    model.load_state_dict(state, strict=False)
    return torch.optim.Adam(model.parameters(), lr=0, betas=(0.9, 0.98),
                            eps=1e-9)


def worker(system, work, device, epochs):
    """`epochs` epochs in this process; prints the first epoch's tokens/s
    and average loss, the peak device memory in MiB (0 on the CPU) and the
    last epoch's tokens/s."""
    config = json.load(open(os.path.join(work, "config.json")))
    if device == "cuda":
        # float32 products as gnnc's cuBLAS calls make them.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    vocab = {t: i for i, t in enumerate(
        ["<sos>", "<eos>", "<pad>"] + open(VOCAB_FILE).read().split())}
    pairs = [([vocab[t] for t in s.split()], [vocab[t] for t in t.split()])
             for s, t in zip(open(os.path.join(work, "src")),
                             open(os.path.join(work, "tgt")))]
    if system == "dgl":
        from dgl_transformer import DGLTransformer
        model = DGLTransformer(config, bias=False)
    else:
        model = Transformer(config, bias=False)
    model.to(device)
    opt = load_with_adam(model, os.path.join(work, "init.safetensors"))
    rates = []
    step = 0
    for epoch in range(epochs):
        total_loss = tokens = 0
        start = time.perf_counter()
        for i in range(0, len(pairs), BATCH):
            step += 1
            batch = pairs[i:i + BATCH]
            srcs = [s for s, _ in batch]
            decs = [[SOS] + t for _, t in batch]
            labels = torch.tensor(sum([t + [EOS] for _, t in batch], []),
                                  device=device)
            if system == "dgl":
                lp = model.forward_rows(srcs, decs)
            else:
                from torch_reference import pad_batch
                src, src_len = (t.to(device) for t in pad_batch(srcs))
                tgt, tgt_len = (t.to(device) for t in pad_batch(decs))
                out = model(src, src_len, tgt, tgt_len)
                lp = torch.cat([out[j, :len(d)] for j, d in enumerate(decs)])
            loss = smoothed_kl(lp, labels, EPS)
            loss.backward()
            for g in opt.param_groups:
                g["lr"] = noam_rate(step, config["d_model"], FACTOR, WARMUP)
            opt.step()
            opt.zero_grad()
            total_loss += float(loss) * len(labels)
            tokens += len(labels)
        if device == "cuda":
            torch.cuda.synchronize()
        rates.append(tokens / (time.perf_counter() - start))
        if epoch == 0:
            first_loss = total_loss / tokens
    peak = (torch.cuda.max_memory_reserved() / 2**20 if device == "cuda"
            else 0.0)
    print("tokens/s %.1f loss %.6f peak %.1f steady %.1f" %
          (rates[0], first_loss, peak, rates[-1]))


def run_measured(cmd):
    """Runs cmd; returns (stdout, peak RSS in MiB)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit("training.py: %s failed" % cmd[0])
    return out, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sequences", type=int, default=1280)
    ap.add_argument("--workloads", default="tutorial,dgl-default")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--worker", choices=["dgl", "torch"])
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.work, a.device, a.epochs)
    if a.epochs < 1:
        sys.exit("training.py: --epochs must be at least 1")
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("training.py: --device cuda: PyTorch sees no CUDA device")
    systems = ("torch",) if a.device == "cuda" else ("dgl", "torch")
    rng = random.Random(2026)
    rows = []
    for name in a.workloads.split(","):
        work = tempfile.mkdtemp(prefix="gnnc-train-peers-")
        config = dict(MODELS[name], architecture="transformer",
                      src_vocab=29, tgt_vocab=29, max_len=50,
                      score_clamp=10, cross_attention="dgl",
                      vocab=VOCAB_FILE)
        json.dump(config, open(os.path.join(work, "config.json"), "w"))
        write_initial_weights(config, os.path.join(work, "init.safetensors"))
        with open(os.path.join(work, "src"), "w") as src, \
                open(os.path.join(work, "tgt"), "w") as tgt:
            for _ in range(a.sequences):
                s = tasks.sample(rng, 48)
                src.write(" ".join(s) + "\n")
                tgt.write(" ".join(s) + "\n")
        out, rss = run_measured([
            GNN_TRAIN, "--device", a.device,
            "--config", os.path.join(work, "config.json"),
            "--train-src", os.path.join(work, "src"),
            "--train-tgt", os.path.join(work, "tgt"),
            "--init", os.path.join(work, "init.safetensors"),
            "--out-dir", os.path.join(work, "out"), "--epochs", str(a.epochs),
            "--batch-size", str(BATCH), "--dropout", "0", "--shuffle=false",
            "--lr-factor", str(FACTOR), "--warmup", str(WARMUP)])
        epochs = re.findall(r"train loss ([0-9.]+) .*?([0-9]+) tokens/s", out)
        peak = re.search(r"peak device memory ([0-9.]+) MiB", out)
        ours = (float(epochs[0][1]), float(epochs[0][0]), rss,
                float(peak.group(1)) if peak else 0.0, float(epochs[-1][1]))
        results = {"gnnc": ours}
        for system in systems:
            out, rss = run_measured([sys.executable, __file__, "--worker",
                                     system, "--work", work,
                                     "--device", a.device,
                                     "--epochs", str(a.epochs)])
            m = re.search(r"tokens/s ([0-9.]+) loss ([0-9.]+) peak ([0-9.]+)"
                          r" steady ([0-9.]+)", out)
            results[system] = (float(m.group(1)), float(m.group(2)), rss,
                               float(m.group(3)), float(m.group(4)))
        for system, label in (("gnnc", "gnnc"), ("dgl", "DGL"),
                              ("torch", "PyTorch")):
            if system not in results:
                continue
            tps, loss, rss, device_mib, steady = results[system]
            same = abs(loss - ours[1]) <= 1e-3 * max(1, ours[1])
            rows.append((name, label, tps, ours[0] / tps, steady,
                         ours[4] / steady, rss, device_mib, loss, same))
        print("done: %s" % name, file=sys.stderr, flush=True)
    where = ("device %s" % torch.cuda.get_device_name(0)
             if a.device == "cuda" else "the CPU")
    print("machine: %d cores, %s; torch %s (%d threads); %d sequences, "
          "batch %d" % (os.cpu_count(), where, torch.__version__,
                        torch.get_num_threads(), a.sequences, BATCH))
    gpu, steady = a.device == "cuda", a.epochs > 1
    print("| workload | system | tokens/s | gnnc speed-up | "
          + ("steady tokens/s | steady speed-up | " if steady else "")
          + "peak RSS (MiB) | "
          + ("peak device memory (MiB) | " if gpu else "")
          + "epoch loss | same |")
    print("|---|---|---:|---:|" + ("---:|---:|" if steady else "") + "---:|"
          + ("---:|" if gpu else "") + "---:|---|")
    for (name, label, tps, ratio, steady_tps, steady_ratio, rss, device_mib,
         loss, same) in rows:
        print("| %s | %s | %.0f | %.2fx | " % (name, label, tps, ratio)
              + ("%.0f | %.2fx | " % (steady_tps, steady_ratio) if steady
                 else "")
              + "%.0f | " % rss
              + ("%.0f | " % device_mib if gpu else "")
              + "%.4f | %s |" % (loss, "yes" if same else "NO"))


if __name__ == "__main__":
    main()
