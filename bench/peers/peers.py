"""gnnc side by side with DGL and PyTorch on the same machine, weights and
batches: attention-kernel time, attention forward+backward time (the
gradients of q, k and v: gnn-run --grad; autograd for DGL and PyTorch) and
backward time (autograd's backward() alone; gnnc's forward+backward minus
its forward),
teacher-forced forward time and greedy decoding throughput, plus a check
that every system computes the same log-probs and gradients. Run through bench/peers/run.sh (which sets up the environment).

    bench/peers/run.sh [--runs 5] [--quick] [--workloads W,...]
                       [--measures attention,grad,forward,decode]

Systems:
  gnnc fused / unfused   build/bin/gnn-run (--no-fuse keeps DGL's kernels)
  DGL                    bench/peers/dgl_transformer.py: the tutorial's
                         propagate_attention (apply_edges + send_and_recv)
                         on one batched graph; decoding recomputes the prefix
                         at every step, as DGL's example does
  PyTorch                scripts/py/torch_reference.py: dense padded
                         attention with masks; decoding recomputes the prefix
Workloads (random weights, seeded):
  copy/dgl-default       128 sequences, lengths N(15, 3); 6 layers, d 512, 8 heads
  copy/tutorial          the same batch; 1 layer, d 128, 1 head, d_ff 128
  long/dgl-default       16 sequences of 256 tokens; its attention rows run
                         on complete blocks (ee) and causal blocks (dd)
  sparse/dgl-default     attention alone (measures attention and grad) on a
                         random graph of 100,000 nodes (10,000 with
                         --quick), 16 in-edges each from random sources, 8
                         heads of 64: gnnc and DGL (dense padded attention
                         has no form for it)
Times are medians of --runs runs (min-max); ratios are the system's time
over gnnc fused's (above 1: gnnc is faster).
"""

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
sys.path.insert(0, HERE)
import safetensors_util  # noqa: E402
from dgl_transformer import DGLTransformer, block_edges  # noqa: E402
from torch_reference import (EOS, SOS, Transformer,  # noqa: E402
                             log_probs as torch_log_probs, pad_batch)

import dgl  # noqa: E402

GNN_RUN = os.path.join(ROOT, "build", "bin", "gnn-run")
VOCAB = 29
MODELS = {
    "dgl-default": dict(layers=6, d_model=512, heads=8, d_ff=2048),
    "tutorial": dict(layers=1, d_model=128, heads=1, d_ff=128),
}
TOLERANCE = 1e-4
# The Transformer's graph each attention structure stands for.
EDGES = {"complete": "ee", "causal": "dd"}
MEASURES = ("attention", "grad", "forward", "decode")


def timed(fn, runs):
    """(median, min, max) seconds of `runs` calls after a warm-up, and the
    last call's result."""
    result = fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return (statistics.median(times), min(times), max(times)), result


def timed_backward(loss_fn, leaves_of, runs):
    """(median, min, max) seconds of `runs` backward passes alone (the
    forward that builds the autograd graph runs untimed), after a warm-up,
    and the last call's gradients."""
    times, grads = [], None
    for i in range(runs + 1):
        leaves = leaves_of()
        loss = loss_fn(*leaves)
        start = time.perf_counter()
        loss.backward()
        if i:
            times.append(time.perf_counter() - start)
        grads = [t.grad for t in leaves]
    return (statistics.median(times), min(times), max(times)), grads


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(args), p.stderr))
    return p.stderr


def gnnc_times(stderr, unit):
    """(median, min, max) seconds from gnn-run's summary line (--repeat)."""
    scale = 1e-3 if unit == "ms" else 1.0
    med = float(re.search(r"(?:tokens|ran) in ([\d.]+) %s" % unit,
                          stderr).group(1))
    spread = re.search(r"min ([\d.]+) %s, max ([\d.]+) %s" % (unit, unit),
                       stderr)
    lo, hi = (float(spread.group(1)), float(spread.group(2))) if spread \
        else (med, med)
    return med * scale, lo * scale, hi * scale


class Workload:
    def __init__(self, name, model, srcs, work):
        self.name, self.model_name = name, model
        self.srcs = srcs
        self.tgts = [[SOS] + s for s in srcs]  # the copy task's inputs
        self.dir = os.path.join(work, name.replace("/", "-"))
        os.makedirs(self.dir, exist_ok=True)
        max_len = max(len(t) for t in self.tgts) + 2
        self.config = dict(architecture="transformer", src_vocab=VOCAB,
                           tgt_vocab=VOCAB, max_len=max(50, max_len),
                           score_clamp=10, cross_attention="dgl",
                           weights="weights.safetensors", **MODELS[model])
        torch.manual_seed(sorted(MODELS).index(model))
        self.torch = Transformer(self.config, bias=True).eval()
        self.dgl = DGLTransformer(self.config, bias=True).eval()
        self.dgl.load_state_dict(self.torch.state_dict())
        safetensors_util.save_torch(os.path.join(self.dir, self.config[
            "weights"]), self.torch.state_dict())
        self.config_path = os.path.join(self.dir, "config.json")
        with open(self.config_path, "w") as f:
            json.dump(self.config, f)
        self.src_path = self.write("src.txt", self.srcs)
        self.tgt_path = self.write("tgt.txt", self.tgts)

    def write(self, name, seqs):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            for s in seqs:
                f.write(" ".join(map(str, s)) + "\n")
        return path

    def gnn_run(self, runs, *flags):
        return run([GNN_RUN, "--config", self.config_path, "--src",
                    self.src_path, "--ids", "--batch-size",
                    str(len(self.srcs)), "--repeat", str(runs)] +
                   list(flags))


def copy_batch(rng, count):
    lengths = [max(1, min(48, round(rng.gauss(15, 3)))) for _ in range(count)]
    return [[rng.randrange(3, VOCAB) for _ in range(n)] for n in lengths]


def attention_ir(h, dk, clamp, structure):
    feat = "tensor<?x%dx%dxf32>" % (h, dk)
    score = "tensor<?x%dx1xf32>" % h
    g = "!gnn.graph<%s>" % structure
    return f"""func.func @main(%g: {g}, %q: {feat}, %k: {feat}, %v: {feat}) -> {feat} {{
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale({1 / math.sqrt(dk)!r}), clamp({-clamp:.1f}, {clamp:.1f}), exp]
      : ({g}, {feat}, {feat}) -> {score}
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : ({g}, {feat}, {score}, {score}) -> ({feat}, {score})
  %o = gnn.apply_nodes(%wv, %z) {{
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  }} : ({feat}, {score}) -> {feat}
  return %o : {feat}
}}
"""


def block_mask(lens, structure):
    """[B, M, M] mask of the padded batch: True where block_edges has an
    edge (src index last)."""
    M = max(lens)
    valid = torch.arange(M).unsqueeze(0) < torch.tensor(lens).unsqueeze(1)
    mask = valid.unsqueeze(1) & valid.unsqueeze(2)
    if structure == "causal":
        mask &= torch.ones(M, M, dtype=torch.bool).tril()
    return mask


GNNC_KINDS = (("gnnc fused", []), ("gnnc unfused", ["--no-fuse"]))


def write_graph(path, u, v, n):
    safetensors_util.write(path, {
        "src": ("I64", [len(u)], u.tolist()), "dst": ("I64", [len(v)],
                                                      v.tolist()),
        "num_nodes": ("I64", [], [n])})


def gnnc_attention(directory, ir, graph, inputs, runs):
    """gnn-run of an attention program, fused and unfused: kind ->
    ((median, min, max) seconds, its result)."""
    results = {}
    for kind, flags in GNNC_KINDS:
        out = os.path.join(directory, "attention-%s.safetensors" % kind[5:])
        err = run([GNN_RUN, ir, "--graph", graph, "--inputs", inputs, "--out",
                   out, "--repeat", str(runs)] + flags)
        _, shape, values = safetensors_util.read(out)["result0"]
        results[kind] = (gnnc_times(err, "ms"), torch.tensor(values).reshape(
            shape))
    return results


def gnnc_attention_grad(directory, ir, graph, inputs, runs, shape):
    """gnn-run --grad of an attention loss program, fused and unfused: kind
    -> (forward+backward times, the gradients of q, k and v), and kind ->
    backward times. gnn-run runs the differentiated function whole: its
    backward is timed as forward+backward minus the forward (and loss)
    alone."""
    results, backward = {}, {}
    for kind, flags in GNNC_KINDS:
        out = os.path.join(directory, "grad-%s.safetensors" % kind[5:])
        err = run([GNN_RUN, ir, "--grad", "--graph", graph, "--inputs",
                   inputs, "--out", out, "--repeat", str(runs)] + flags)
        tensors = safetensors_util.read(out)
        got = [torch.tensor(tensors["grad." + name][2]).reshape(shape)
               for name in ("q", "k", "v")]
        results[kind] = (gnnc_times(err, "ms"), got)
        err = run([GNN_RUN, ir, "--graph", graph, "--inputs", inputs, "--out",
                   out, "--repeat", str(runs)] + flags)
        forward = gnnc_times(err, "ms")[0]
        backward[kind] = tuple(t - forward for t in results[kind][0])
    return results, backward


def dgl_attention_loss(model, g, eids, up):
    """sum(attention(q, k, v) * up) through DGL's built-ins, for autograd."""
    def loss(qq, kk, vv):
        with g.local_scope():  # no features left from the last call
            g.ndata.update({"q": qq, "k": kk, "v": vv})
            model.propagate_attention(g, eids)
            return (g.ndata["wv"] / g.ndata["z"] * up).sum()
    return loss


def attention_kernels(w, runs, rows, structure):
    """One attention over the encoder's blocks, complete (ee) or causal
    (dd)."""
    c = w.config
    h, dk = c["heads"], c["d_model"] // c["heads"]
    lens = [len(s) for s in w.srcs]
    u, v = block_edges(lens, causal=structure == "causal")
    n = sum(lens)
    gen = torch.Generator().manual_seed(5)
    q, k, val = (torch.randn(n, h, dk, generator=gen) for _ in range(3))

    # DGL: the tutorial's four built-in calls and the division.
    g = dgl.graph((u, v), num_nodes=n)
    eids = torch.arange(len(u))

    def dgl_attention():
        g.ndata.update({"q": q, "k": k, "v": val})
        w.dgl.propagate_attention(g, eids)
        return g.ndata["wv"] / g.ndata["z"]
    t_dgl, out_dgl = timed(dgl_attention, runs)

    # PyTorch: dense padded attention with a mask (padding done beforehand).
    B, M = len(lens), max(lens)
    pad = torch.zeros(3, B, M, h * dk)
    offsets = [0]
    for i, m in enumerate(lens):
        for j, t in enumerate((q, k, val)):
            pad[j, i, :m] = t[offsets[-1]:offsets[-1] + m].reshape(m, -1)
        offsets.append(offsets[-1] + m)
    mask = block_mask(lens, structure)
    t_torch, out_pad = timed(lambda: w.torch.attend(pad[0], pad[1], pad[2],
                                                    mask), runs)
    out_torch = torch.cat([out_pad[i, :m] for i, m in enumerate(lens)])

    # gnnc: the same IR, fused and unfused.
    ir = os.path.join(w.dir, "attention.mlir")
    with open(ir, "w") as f:
        f.write(attention_ir(h, dk, c["score_clamp"], structure))
    graph = os.path.join(w.dir, "graph.safetensors")
    inputs = os.path.join(w.dir, "qkv.safetensors")
    write_graph(graph, u, v, n)
    safetensors_util.save_torch(inputs, {"q": q, "k": k, "v": val})
    ref = out_torch.reshape(n, h, dk)
    results = gnnc_attention(w.dir, ir, graph, inputs, runs)
    results["DGL"] = (t_dgl, out_dgl)
    results["PyTorch"] = (t_torch, ref)
    same = all(float((o.reshape(n, h, dk) - ref).abs().max()) < TOLERANCE
               for _, o in results.values())
    rows.append((w.name, "attention (%s, %d edges)" % (
        EDGES[structure], len(u)), "s",
                 {k: t for k, (t, _) in results.items()}, same))


def attention_loss_ir(h, dk, clamp, structure):
    """attention_ir with the loss sum(out * w): its gradient of out is w."""
    feat = "tensor<?x%dx%dxf32>" % (h, dk)
    ir = attention_ir(h, dk, clamp, structure)
    ir = ir.replace("%%v: %s) -> %s {" % (feat, feat),
                    "%%v: %s, %%w: %s) -> tensor<f32> {" % (feat, feat))
    return ir.replace("  return %%o : %s" % feat, f"""  %t = gnn.apply_nodes(%o, %w) {{
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  }} : ({feat}, {feat}) -> {feat}
  %l = gnn.sum_to %t : {feat} -> tensor<f32>
  return %l : tensor<f32>""")


def attention_grad(w, runs, rows, structure):
    """attention_kernels' attention, forward and backward: the gradients of
    q, k and v for the loss sum(out * up)."""
    c = w.config
    h, dk = c["heads"], c["d_model"] // c["heads"]
    lens = [len(s) for s in w.srcs]
    u, v = block_edges(lens, causal=structure == "causal")
    n = sum(lens)
    gen = torch.Generator().manual_seed(6)
    q, k, val, up = (torch.randn(n, h, dk, generator=gen) for _ in range(4))

    def leaves_of():
        return [t.clone().requires_grad_() for t in (q, k, val)]

    def grads_of(loss_fn):
        def step():
            leaves = leaves_of()
            loss_fn(*leaves).backward()
            return [t.grad for t in leaves]
        return step

    # DGL: the tutorial's built-in calls, differentiated by PyTorch autograd
    # through DGL's kernels.
    g = dgl.graph((u, v), num_nodes=n)
    eids = torch.arange(len(u))

    dgl_loss = dgl_attention_loss(w.dgl, g, eids, up)
    results = {"DGL": timed(grads_of(dgl_loss), runs)}
    backward = {"DGL": timed_backward(dgl_loss, leaves_of, runs)[0]}

    # PyTorch: dense padded attention with a mask, through autograd.
    B, M = len(lens), max(lens)
    starts = [0]
    for m in lens:
        starts.append(starts[-1] + m)
    index = torch.tensor([i * M + j for i, m in enumerate(lens)
                          for j in range(m)])
    mask = block_mask(lens, structure)

    def torch_loss(qq, kk, vv):
        def pad(t):
            out = torch.zeros(B * M, h * dk)
            return out.index_copy(0, index, t.reshape(n, -1)).view(B, M, -1)
        out = w.torch.attend(pad(qq), pad(kk), pad(vv), mask)
        return (out.reshape(B * M, h, dk)[index] * up).sum()
    results["PyTorch"] = timed(grads_of(torch_loss), runs)
    backward["PyTorch"] = timed_backward(torch_loss, leaves_of, runs)[0]

    ir = os.path.join(w.dir, "attention-loss.mlir")
    with open(ir, "w") as f:
        f.write(attention_loss_ir(h, dk, c["score_clamp"], structure))
    graph = os.path.join(w.dir, "graph.safetensors")
    inputs = os.path.join(w.dir, "qkvw.safetensors")
    write_graph(graph, u, v, n)
    safetensors_util.save_torch(inputs, {"q": q, "k": k, "v": val, "w": up})
    gnnc, gnnc_backward = gnnc_attention_grad(w.dir, ir, graph, inputs, runs,
                                              (n, h, dk))
    results.update(gnnc)
    backward.update(gnnc_backward)
    ref = results["PyTorch"][1]
    scale = max(float(r.abs().max()) for r in ref)
    same = all(float((a - b).abs().max()) <= TOLERANCE * max(1.0, scale)
               for _, got in results.values() for a, b in zip(got, ref))
    rows.append((w.name, "attention fwd+bwd (%s, %d edges)" % (
        EDGES[structure], len(u)), "s",
                 {k: t for k, (t, _) in results.items()}, same))
    rows.append((w.name, "attention bwd (%s; gnnc: fwd+bwd minus fwd)" %
                 EDGES[structure], "s",
                 backward, same))


def forward(w, runs, rows):
    results = {}
    for kind, flags in GNNC_KINDS:
        out = os.path.join(w.dir, "forward.safetensors")
        err = w.gnn_run(runs, "--tgt", w.tgt_path, "--mode", "forward",
                        "--out", out, *flags)
        _, shape, values = safetensors_util.read(out)["log_probs"]
        results[kind] = (gnnc_times(err, "s"),
                         torch.tensor(values).reshape(shape))
    results["DGL"] = timed(lambda: w.dgl.log_probs(w.srcs, w.tgts), runs)
    results["PyTorch"] = timed(
        lambda: torch_log_probs(w.torch, w.srcs, w.tgts), runs)
    ref = results["PyTorch"][1]
    same = all(float((lp - ref).abs().max()) < TOLERANCE
               for _, lp in results.values())
    tokens = sum(len(t) for t in w.tgts)
    rows.append((w.name, "forward (%d target tokens)" % tokens, "s",
                 {k: t for k, (t, _) in results.items()}, same))


def greedy_by_prefix(log_probs, srcs, max_len):
    """Greedy decoding that recomputes every live prefix at each step."""
    outs = [[SOS] for _ in srcs]
    live = list(range(len(srcs)))
    while live:
        lp = log_probs([srcs[i] for i in live], [outs[i] for i in live])
        ends = torch.tensor([len(outs[i]) for i in live]).cumsum(0) - 1
        best = lp[ends].argmax(-1).tolist()
        still = []
        for i, tok in zip(live, best):
            if tok == EOS:
                continue
            outs[i].append(tok)
            if len(outs[i]) - 1 < max_len - 1:
                still.append(i)
        live = still
    return [o[1:] for o in outs]


def decode(w, runs, rows, max_len):
    results = {}
    for kind, flags in GNNC_KINDS:
        out = os.path.join(w.dir, "greedy.txt")
        err = w.gnn_run(runs, "--mode", "greedy", "--max-len", str(max_len),
                        "--out", out, *flags)
        seqs = [list(map(int, l.split())) for l in open(out)]
        results[kind] = (gnnc_times(err, "s"), seqs)

    def by_prefix(model_log_probs):
        def decode_all():
            with torch.no_grad():
                return greedy_by_prefix(model_log_probs, w.srcs, max_len)
        return decode_all
    results["DGL"] = timed(by_prefix(w.dgl.log_probs), runs)
    results["PyTorch"] = timed(by_prefix(
        lambda s, t: torch_log_probs(w.torch, s, t)), runs)
    ref = results["PyTorch"][1]
    same = all(seqs == ref for _, seqs in results.values())
    tokens = sum(len(s) for s in ref)
    rows.append((w.name, "greedy (%d seqs, %d tokens)" % (len(w.srcs), tokens),
                 "tok/s", {k: t for k, (t, _) in results.items()}, same,
                 tokens))


def sparse_graph(nodes, degree, seed):
    """Edges (u, v) of `degree` in-edges per node from random sources."""
    gen = torch.Generator().manual_seed(seed)
    v = torch.arange(nodes).repeat_interleave(degree)
    u = torch.randint(0, nodes, (nodes * degree,), generator=gen)
    return u, v


def sparse_attention(work, runs, rows, nodes, measures):
    """Attention on sparse_graph (a general graph), forward and forward +
    backward, gnnc fused and unfused against DGL's built-ins (with PyTorch
    autograd for the backward), the results compared with DGL's."""
    name = "sparse/dgl-default"
    config = dict(architecture="transformer", src_vocab=VOCAB,
                  tgt_vocab=VOCAB, max_len=50, score_clamp=10,
                  cross_attention="dgl", **MODELS["dgl-default"])
    h, dk = config["heads"], config["d_model"] // config["heads"]
    model = DGLTransformer(config, bias=True).eval()
    directory = os.path.join(work, "sparse")
    os.makedirs(directory, exist_ok=True)
    u, v = sparse_graph(nodes, 16, seed=8)
    graph = os.path.join(directory, "graph.safetensors")
    write_graph(graph, u, v, nodes)
    g = dgl.graph((u, v), num_nodes=nodes)
    eids = torch.arange(len(u))
    gen = torch.Generator().manual_seed(9)
    q, k, val, up = (torch.randn(nodes, h, dk, generator=gen)
                     for _ in range(4))
    what = "(general, %d nodes, %d edges)" % (nodes, len(u))

    def close(a, b):
        scale = max(1.0, float(b.abs().max()))
        return float((a - b).abs().max()) <= TOLERANCE * scale

    if "attention" in measures:
        def dgl_attention():
            with g.local_scope():
                g.ndata.update({"q": q, "k": k, "v": val})
                model.propagate_attention(g, eids)
                return g.ndata["wv"] / g.ndata["z"]
        t_dgl, ref = timed(dgl_attention, runs)
        ir = os.path.join(directory, "attention.mlir")
        with open(ir, "w") as f:
            f.write(attention_ir(h, dk, config["score_clamp"], "general"))
        inputs = os.path.join(directory, "qkv.safetensors")
        safetensors_util.save_torch(inputs, {"q": q, "k": k, "v": val})
        gnnc = gnnc_attention(directory, ir, graph, inputs, runs)
        times = {"DGL": t_dgl}
        times.update({kind: t for kind, (t, _) in gnnc.items()})
        same = all(close(got, ref) for _, got in gnnc.values())
        rows.append((name, "attention " + what, "s", times, same))

    if "grad" in measures:
        def leaves_of():
            return [t.clone().requires_grad_() for t in (q, k, val)]

        dgl_loss = dgl_attention_loss(model, g, eids, up)

        def dgl_grads():
            leaves = leaves_of()
            dgl_loss(*leaves).backward()
            return [t.grad for t in leaves]
        t_dgl, ref = timed(dgl_grads, runs)
        dgl_backward = timed_backward(dgl_loss, leaves_of, runs)[0]
        ir = os.path.join(directory, "attention-loss.mlir")
        with open(ir, "w") as f:
            f.write(attention_loss_ir(h, dk, config["score_clamp"],
                                      "general"))
        inputs = os.path.join(directory, "qkvw.safetensors")
        safetensors_util.save_torch(inputs, {"q": q, "k": k, "v": val,
                                             "w": up})
        gnnc, backward = gnnc_attention_grad(directory, ir, graph, inputs,
                                             runs, (nodes, h, dk))
        times = {"DGL": t_dgl}
        times.update({kind: t for kind, (t, _) in gnnc.items()})
        backward["DGL"] = dgl_backward
        same = all(close(a, b) for _, got in gnnc.values()
                   for a, b in zip(got, ref))
        rows.append((name, "attention fwd+bwd " + what, "s", times, same))
        rows.append((name, "attention bwd (general; gnnc: fwd+bwd minus "
                     "fwd)", "s", backward, same))


def print_table(rows):
    systems = ["gnnc fused", "gnnc unfused", "DGL", "PyTorch"]
    print("| workload | measure | " + " | ".join(systems) + " | same |")
    print("|---|---|" + "---:|" * len(systems) + "---|")
    for row in rows:
        name, what, unit, times, same = row[:5]
        base = times["gnnc fused"][0]
        cells = []
        for s in systems:
            if s not in times:
                cells.append("—")
                continue
            med, lo, hi = times[s]
            if unit == "tok/s":
                tokens = row[5]
                cell = "%.0f tok/s (%.0f-%.0f)" % (tokens / med, tokens / hi,
                                                    tokens / lo)
            elif med < 0.1:
                cell = "%.2f ms (%.2f-%.2f)" % (med * 1e3, lo * 1e3, hi * 1e3)
            else:
                cell = "%.3f s (%.3f-%.3f)" % (med, lo, hi)
            if s != "gnnc fused":
                cell += ", %.2fx" % (med / base)
            cells.append(cell)
        print("| %s | %s | %s | %s |" % (name, what, " | ".join(cells),
                                         "yes" if same else "NO"))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="smaller batches, fewer layers (a smoke run)")
    ap.add_argument("--max-len", type=int, default=30,
                    help="greedy decoding limit (outputs of max-len - 1)")
    ap.add_argument("--workloads", default="",
                    help="comma-separated workload names to run (default: "
                         "all of copy/dgl-default, copy/tutorial, "
                         "long/dgl-default, sparse/dgl-default)")
    ap.add_argument("--measures", default=",".join(MEASURES),
                    help="comma-separated measures to run (default: all of "
                         "%s)" % ", ".join(MEASURES))
    ap.add_argument("--gnn-run", default=GNN_RUN,
                    help="the gnn-run binary to time (default: the build's)")
    a = ap.parse_args()
    globals()["GNN_RUN"] = a.gnn_run
    measures = a.measures.split(",")
    unknown = set(measures) - set(MEASURES)
    if unknown:
        sys.exit("peers: unknown measures: %s" % ", ".join(sorted(unknown)))
    if not os.path.exists(GNN_RUN):
        sys.exit("build gnnc first (scripts/setup.sh)")
    if a.quick:
        MODELS["dgl-default"].update(layers=2)
    rng = random.Random(2026)
    work = tempfile.mkdtemp(prefix="gnnc-peers-")
    copy = copy_batch(rng, 16 if a.quick else 128)
    long = [[rng.randrange(3, VOCAB) for _ in range(64 if a.quick else 256)]
            for _ in range(4 if a.quick else 16)]
    workloads = [Workload("copy/dgl-default", "dgl-default", copy, work),
                 Workload("copy/tutorial", "tutorial", copy, work),
                 Workload("long/dgl-default", "dgl-default", long, work)]
    sparse = True
    if a.workloads:
        wanted = a.workloads.split(",")
        unknown = set(wanted) - {w.name for w in workloads} - {
            "sparse/dgl-default"}
        if unknown:
            sys.exit("peers: unknown workloads: %s" % ", ".join(sorted(unknown)))
        workloads = [w for w in workloads if w.name in wanted]
        sparse = "sparse/dgl-default" in wanted
    print("machine: %d cores; torch %s (%d threads), DGL %s; %d runs" %
          (os.cpu_count(), torch.__version__, torch.get_num_threads(),
           dgl.__version__, a.runs), flush=True)
    rows = []
    for w in workloads:
        # The long batch's blocks also stand for a decoder's causal graph.
        structures = ["complete", "causal"] if w.name.startswith("long") \
            else ["complete"]
        for structure in structures:
            if "attention" in measures:
                attention_kernels(w, a.runs, rows, structure)
            if "grad" in measures:
                attention_grad(w, a.runs, rows, structure)
        if "forward" in measures:
            forward(w, a.runs, rows)
        if "decode" in measures and w.name.startswith("copy"):
            decode(w, a.runs, rows, a.max_len)
        print("done: %s" % w.name, file=sys.stderr, flush=True)
    if sparse and {"attention", "grad"} & set(measures):
        sparse_attention(work, a.runs, rows, 10000 if a.quick else 100000,
                         measures)
        print("done: sparse/dgl-default", file=sys.stderr, flush=True)
    print_table(rows)
    if not all(r[4] for r in rows):
        sys.exit("peers: some systems disagree (see the 'same' column)")


if __name__ == "__main__":
    main()
