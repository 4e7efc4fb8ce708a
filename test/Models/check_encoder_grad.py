"""Checks gnn-differentiate on a whole model encoder (a Transformer's, or
a Universal Transformer's with its ACT loop) against PyTorch autograd in
float64 (scripts/py/torch_reference.py, independent of gnnc).

Takes a model's IR (gnn-run --config M --emit-ir), adds a loss function
that calls @encode and returns sum(memory * w) for a random w, runs it with
gnn-run --grad (which differentiates @encode and its per-layer functions
through one backward function per layer), and compares the loss and every
encoder parameter's gradient with the reference's (relative to the largest
gradient of that parameter, or 1e-4 of the largest of all where a
gradient is 0 in exact arithmetic; tolerance 1e-4). Needs torch (the bench/peers
environment):

    bench/peers/.venv/bin/python test/Models/check_encoder_grad.py \\
        examples/copy [--gnn-run build/bin/gnn-run]
"""

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
import safetensors_util  # noqa: E402
from torch_reference import (Transformer, UniversalTransformer,  # noqa: E402
                             sinusoid_table)


def loss_program(ir):
    """The module's body with @loss(encode's arguments..., %w) added."""
    body = ir[ir.index("{") + 1:ir.rindex("}")]
    sig = re.search(r"func.func @encode\((.*?)\) -> \((tensor<\?x(\d+)xf32>"
                    r"[^,)]*(?:, [^)]*)?)\)", body, re.S)
    args = re.findall(r'(%\w+): ([^{]+?) \{gnn.name = "([^"]+)"\}',
                      sig.group(1))
    d = sig.group(3)
    feat = "tensor<?x%sxf32>" % d
    # The encoder's other results (the AUT's step counts) are not used.
    results = re.sub(r" \{[^}]*\}", "", sig.group(2))
    count = results.count("tensor<")
    params = ", ".join('%s: %s {gnn.name = "%s"}' % a for a in args)
    names = ", ".join(a[0] for a in args)
    types = ", ".join(a[1] for a in args)
    body += f"""
func.func @loss({params}, %w: {feat}) -> tensor<f32> {{
  %m:{count} = call @encode({names}) : ({types}) -> ({results})
  %t = gnn.apply_nodes(%m#0, %w) {{
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    gnn.yield %p : f32
  }} : ({feat}, {feat}) -> {feat}
  %l = gnn.sum_to %t : {feat} -> tensor<f32>
  return %l : tensor<f32>
}}
"""
    # gnn-run names a program's arguments by their SSA names.
    return body, {a[0][1:]: a[2] for a in args}, int(d)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("model", help="a directory with config.json and "
                    "weights.safetensors")
    ap.add_argument("--gnn-run", default=os.path.join(ROOT, "build", "bin",
                                                      "gnn-run"))
    a = ap.parse_args()
    config = json.load(open(os.path.join(a.model, "config.json")))
    universal = config.get("architecture") == "universal_transformer"
    weights = safetensors_util.read(os.path.join(a.model,
                                                 "weights.safetensors"))
    ir = subprocess.run([a.gnn_run, "--config",
                         os.path.join(a.model, "config.json"), "--emit-ir"],
                        check=True, capture_output=True, text=True).stdout
    program, name_of, d = loss_program(ir)

    rng = random.Random(11)
    lens = [5, 9, 3, 12]
    srcs = [[rng.randrange(3, config["src_vocab"]) for _ in range(n)]
            for n in lens]
    n = sum(lens)
    src, dst, offset = [], [], 0
    for length in lens:
        for v in range(length):
            for u in range(length):
                src.append(offset + u)
                dst.append(offset + v)
        offset += length
    # One sinusoid table for positions and (the AUT's) ACT steps, as the
    # reference uses.
    pe = sinusoid_table(max(config["max_len"], config.get("max_depth", 0)), d)
    w = [rng.uniform(-1, 1) for _ in range(n * d)]
    by_name = {"src_tokens": ("I64", [n], sum(srcs, [])),
               "src_positions": ("I64", [n],
                                 sum([list(range(m)) for m in lens], [])),
               "pe": ("F32", list(pe.shape), pe.flatten().tolist()),
               "time_pe": ("F32", list(pe.shape), pe.flatten().tolist())}
    by_name.update(weights)
    work = tempfile.mkdtemp(prefix="gnnc-grad-")
    inputs = {ssa: by_name[name] for ssa, name in name_of.items()
              if name != "ee"}
    inputs["w"] = ("F32", [n, d], w)
    paths = {k: os.path.join(work, k) for k in ("p.mlir", "g", "x", "y")}
    open(paths["p.mlir"], "w").write(program)
    safetensors_util.write(paths["x"], inputs)
    safetensors_util.write(paths["g"], {
        "src": ("I64", [len(src)], src), "dst": ("I64", [len(dst)], dst),
        "num_nodes": ("I64", [], [n])})
    subprocess.run([a.gnn_run, paths["p.mlir"], "--entry", "loss", "--grad",
                    "--quiet", "--graph", paths["g"], "--inputs", paths["x"],
                    "--out", paths["y"]], check=True)
    got = safetensors_util.read(paths["y"])

    model = (UniversalTransformer if universal else Transformer)(config)
    model = model.double()
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, (_, shape, values) in weights.items():
            if name in params:
                params[name].copy_(torch.tensor(values, dtype=torch.float64)
                                   .reshape(shape))
    model.default_pe = pe.double()
    batch = torch.zeros(len(lens), max(lens), dtype=torch.long)
    for i, s in enumerate(srcs):
        batch[i, :len(s)] = torch.tensor(s)
    x = model.encode(batch, torch.tensor(lens))[0]
    memory = torch.cat([x[i, :m] for i, m in enumerate(lens)])
    loss = (memory * torch.tensor(w, dtype=torch.float64).reshape(n, d)).sum()
    loss.backward()

    ok = abs(got["result0"][2][0] - float(loss)) <= 1e-4 * max(1, abs(loss))
    print("loss: gnnc %.6f, reference %.6f" % (got["result0"][2][0], loss))
    # A gradient that is 0 in exact arithmetic (a key bias under softmax)
    # is compared against the scale of all gradients.
    floor = 1e-4 * max(float(p.grad.abs().max()) for p in params.values()
                       if p.grad is not None)
    checked = 0
    for key, (_, shape, values) in sorted(got.items()):
        if not key.startswith("grad.") or key == "grad.w":
            continue
        name = name_of.get(key[5:])
        if name not in params:
            continue
        ref = params[name].grad.flatten()
        diff = (torch.tensor(values, dtype=torch.float64) - ref).abs().max()
        err = float(diff) / max(floor, float(ref.abs().max()))
        checked += 1
        if err > 1e-4:
            ok = False
            print("%s: MISMATCH (relative error %.2e)" % (name, err))
    encoder = [k for k in params
               if k.startswith(("encoder.", "src_embed.", "halt_enc."))]
    print("%d of %d encoder parameters checked: %s" %
          (checked, len(encoder), "ok" if ok else "MISMATCH"))
    sys.exit(0 if ok and checked == len(encoder) else 1)


if __name__ == "__main__":
    main()
