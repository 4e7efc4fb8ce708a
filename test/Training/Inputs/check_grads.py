"""Checks gnn-train --grads-out against central differences of the loss.

usage: check_grads.py WORKDIR INPUTS GNN_TRAIN

Starts from WORKDIR/w/epoch-1.safetensors (trained a little, so gradients
are not those of a random model), writes --grads-out with and without
--tie-weights, and for the largest-gradient elements of several tensors
compares (loss(w + h) - loss(w - h)) / 2h, each loss from --grads-out on a
perturbed --init file (float32; tolerance 2% plus 1e-3 of the largest
gradient, above the differences' rounding noise).
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "scripts", "py"))
import safetensors_util  # noqa: E402

work, inputs, tool = sys.argv[1:4]
weights = safetensors_util.read(os.path.join(work, "w", "epoch-1.safetensors"))
TIED = ["src_embed.lut.weight", "tgt_embed.lut.weight",
        "generator.proj.weight"]


def grads(init, tie):
    out = os.path.join(work, "g.safetensors")
    safetensors_util.write(os.path.join(work, "init.safetensors"), init)
    cmd = [tool, "--config", os.path.join(inputs, "tiny.json"),
           "--train-src", os.path.join(inputs, "src.txt"),
           "--train-tgt", os.path.join(inputs, "tgt.txt"), "--ids",
           "--batch-size", "20", "--dropout", "0",
           "--init", os.path.join(work, "init.safetensors"),
           "--grads-out", out]
    if tie:
        cmd.append("--tie-weights")
    subprocess.run(cmd, check=True)
    return safetensors_util.read(out)


for tie in (False, True):
    label = "tied" if tie else "untied"
    base = dict(weights)
    if tie:
        for name in TIED:
            base[name] = weights["tgt_embed.lut.weight"]
    g = grads(base, tie)
    names = sorted(k[5:] for k in g if k.startswith("grad."))
    assert "loss" in g, "no loss"
    line = "%s: %d gradients" % (label, len(names))
    if tie:
        same = all(g["grad." + n][2] == g["grad." + TIED[0]][2] for n in TIED)
        assert same, "tied gradients differ"
        line += ", the three tied names equal"
    print(line)
    top = max(abs(v) for n in names for v in g["grad." + n][2])
    checked = 0
    for name in ["encoder.layers.0.self_attn.linears.0.weight",
                 "encoder.layers.0.feed_forward.w_1.bias",
                 "decoder.layers.0.src_attn.linears.2.weight",
                 "decoder.layers.0.sublayer.1.norm.weight",
                 "decoder.norm.bias", "tgt_embed.lut.weight",
                 "generator.proj.bias"]:
        values = g["grad." + name][2]
        i = max(range(len(values)), key=lambda j: abs(values[j]))
        h = 1e-2
        losses = []
        for sign in (1, -1):
            init = dict(base)
            dtype, shape, data = init[name]
            data = list(data)
            data[i] += sign * h
            init[name] = (dtype, shape, data)
            if tie and name in TIED:
                for other in TIED:
                    init[other] = init[name]
            losses.append(grads(init, tie)["loss"][2][0])
        numeric = (losses[0] - losses[1]) / (2 * h)
        if abs(numeric - values[i]) > 0.02 * abs(values[i]) + 1e-3 * top:
            print("%s: %s[%d]: gradient %.6g, central difference %.6g" %
                  (label, name, i, values[i], numeric))
            sys.exit(1)
        checked += 1
    print("%s: %d elements match central differences" % (label, checked))
