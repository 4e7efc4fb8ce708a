"""Checks gnn-train against an independent PyTorch implementation of
training.md (scripts/py/torch_reference.py, float64, dense padded
attention, autograd, torch.optim.Adam with the Noam rate).

For Transformers of several config variants (score clamp 10 / 5 / exact,
every cross-attention mode, attention biases or none, tied or untied
weights, and exact softmax with query and key weights scaled so that
scores reach several hundred), with dropout 0:
  1. `gnn-train --grads-out`: the loss and every parameter's gradient of the
     first batch;
  2. `gnn-train --max-steps 5 --shuffle=false` with grad_accum 1 and 3: the
     weights after 5 Adam/Noam updates.
Errors are relative to the largest reference value of each tensor (1e-4 of
the largest of all for a gradient that is 0 in exact arithmetic), and must
be at most 1e-4, or, where float32 rounding alone moves a tensor by more
than 1e-5 (a gradient that is 0 in exact arithmetic; Adam steps that
follow the sign of such a gradient), at most 10x what it moves the
reference: any float32 implementation is that far from float64 there.
Needs torch (the bench/peers environment, or Debian's python3-torch):

    bench/peers/.venv/bin/python test/Models/check_training.py \\
        [--gnn-train build/bin/gnn-train]
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
import safetensors_util  # noqa: E402
from torch_reference import (Transformer, UniversalTransformer,  # noqa: E402
                             batch_loss, noam_rate, tie_weights)

VARIANTS = [
    # (layers, d, heads, clamp, cross, bias, tie, qk); layers 0: a Universal
    # Transformer (max_depth 4, threshold 0.9: nodes halt at several steps);
    # qk: the factor on the attention's query and key weights and biases
    # (uniform in [-0.5, 0.5] like the others at 1; at 20 the exact
    # softmax's scores reach several hundred, where a float32 log-sum-exp
    # is off by 1e-5 of a weight's scale).
    (1, 16, 2, 10, "dgl", False, True, 1),
    (2, 16, 4, 5, "standard", True, False, 1),
    (2, 12, 3, None, "shared", False, False, 1),
    (1, 16, 1, None, "dgl", True, True, 1),
    (2, 8, 2, 5, "shared", True, True, 1),
    (0, 16, 2, 10, "shared", False, True, 1),
    (0, 12, 3, None, "shared", True, False, 1),
    (2, 16, 2, None, "standard", True, False, 20),
    (1, 16, 2, None, "dgl", True, True, 20),
    (0, 12, 3, None, "shared", True, False, 20),
]
ACT_WEIGHT = 0.01


def all_named_parameters(model):
    """(name, parameter) under every name, tied ones included (PyTorch
    before 2.0 has no remove_duplicate=False)."""
    try:
        return list(model.named_parameters(remove_duplicate=False))
    except TypeError:
        buffers = {name for name, _ in model.named_buffers()}
        return [(name, model.get_parameter(name))
                for name in model.state_dict() if name not in buffers]


def make_model(config, bias):
    if config["architecture"] == "universal_transformer":
        return UniversalTransformer(config, bias=bias)
    return Transformer(config, bias=bias)


def objective(model, pairs):
    """The loss the gradients are of: label-smoothed KL, plus the ACT loss
    for a Universal Transformer; also returns each part."""
    loss, _, _ = batch_loss(model, pairs, EPS)
    if isinstance(model, UniversalTransformer):
        act = model.act_loss(ACT_WEIGHT)
        return loss + act, loss, act
    return loss, loss, None


# Label smoothing and the Noam schedule of the 5-update check. The rate
# peaks near 0.04 at d_model 16: large enough that every step moves every
# weight, small enough that a ReLU whose input rounding puts on the other
# side of 0 does not turn the trajectory chaotic (factor 1 moves weights by
# up to 30% per step).
EPS, FACTOR, WARMUP = 0.1, 0.3, 3


def relative_error(got, ref, floor):
    return float((got - ref).abs().max()) / max(floor, float(ref.abs().max()))


def compare(name, got, ref, floor, noise=0.0):
    """`noise`: the relative error of float32 runs of the reference."""
    err = relative_error(got, ref, floor)
    if err > (1e-4 if noise <= 1e-5 else max(1e-4, 10 * noise)):
        print("  %s: MISMATCH (relative error %.2e)" % (name, err))
        return False
    return True


def tensor(entry):
    _, shape, values = entry
    return torch.tensor(values, dtype=torch.float64).reshape(shape)


def train_reference(config, bias, tie, state, pairs, accum, dtype,
                    shuffle=None):
    """The weights after 5 updates of torch.optim.Adam with the Noam rate,
    batches of 4 pairs in order, gradients of `accum` batches summed.
    `shuffle` (a random.Random) permutes the pairs inside each batch: the
    same arithmetic in exact terms, rounded in another order."""
    model = make_model(config, bias).to(dtype)
    model.load_state_dict({k: v.to(dtype) for k, v in state.items()})
    if tie:
        tie_weights(model)
    opt = torch.optim.Adam(model.parameters(), lr=0, betas=(0.9, 0.98),
                           eps=1e-9)
    batches = [pairs[i:i + 4] for i in range(0, len(pairs), 4)]
    if shuffle is not None:
        batches = [shuffle.sample(b, len(b)) for b in batches]
    seen = step = 0
    while step < 5:
        loss, _, _ = objective(model, batches[seen % len(batches)])
        loss.backward()
        seen += 1
        if seen % accum == 0:
            step += 1
            for g in opt.param_groups:
                g["lr"] = noam_rate(step, config["d_model"], FACTOR, WARMUP)
            opt.step()
            opt.zero_grad()
    return {k: v.double() for k, v in model.state_dict().items()}


def reference_gradients(config, bias, tie, state, pairs):
    """Float32 gradients of the reference, by parameter name."""
    model = make_model(config, bias)
    model.load_state_dict({k: v.float() for k, v in state.items()})
    if tie:
        tie_weights(model)
    objective(model, pairs)[0].backward()
    return {name: (p.grad if p.grad is not None
                   else torch.zeros_like(p)).double()
            for name, p in all_named_parameters(model)}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gnn-train", default=os.path.join(ROOT, "build", "bin",
                                                        "gnn-train"))
    ap.add_argument("--only", type=int, nargs="*", default=None,
                    help="check only these variants (0-based indices)")
    ap.add_argument("--keep", action="store_true",
                    help="keep each variant's work directory (printed)")
    a = ap.parse_args()
    failures = 0
    for index, variant in enumerate(VARIANTS):
        layers, d, heads, clamp, cross, bias, tie, qk = variant
        if a.only is not None and index not in a.only:
            continue
        # Each variant draws from its own seed, so that --only checks the
        # same case as a full run.
        rng = random.Random(5 + index)
        torch.manual_seed(5 + index)
        vocab = 11
        config = {"architecture": "transformer", "layers": layers,
                  "d_model": d, "heads": heads, "d_ff": 2 * d + 3,
                  "src_vocab": vocab, "tgt_vocab": vocab, "max_len": 12,
                  "score_clamp": clamp, "cross_attention": cross}
        if layers == 0:
            config.update(architecture="universal_transformer", layers=1,
                          max_depth=4, act_threshold=0.9)
        label = "%s d %d heads %d clamp %s %s%s%s" % (
            "universal" if layers == 0 else "layers %d" % layers, d, heads,
            clamp, cross, " bias" if bias else "", " tied" if tie else "")
        if qk != 1:
            label += " queries and keys x%g" % qk
        print(label)
        work = tempfile.mkdtemp(prefix="gnnc-train-check-")
        json.dump(config, open(os.path.join(work, "config.json"), "w"))
        model = make_model(config, bias)
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.uniform_(-0.5, 0.5)
                if "attn.linears.0." in name or "attn.linears.1." in name:
                    p.mul_(qk)
        if tie:
            tie_weights(model)
        state = {k: v for k, v in model.state_dict().items()}
        safetensors_util.save_torch(os.path.join(work, "init.safetensors"),
                                    state)
        pairs = []
        for _ in range(10):
            pairs.append(([rng.randrange(3, vocab)
                           for _ in range(rng.randint(1, 8))],
                          [rng.randrange(3, vocab)
                           for _ in range(rng.randint(1, 7))]))
        for name, part in (("src", 0), ("tgt", 1)):
            with open(os.path.join(work, name), "w") as f:
                for p in pairs:
                    f.write(" ".join(map(str, p[part])) + "\n")
        if a.keep:
            print("  work directory: %s" % work)
        base = [a.gnn_train, "--config", os.path.join(work, "config.json"),
                "--train-src", os.path.join(work, "src"),
                "--train-tgt", os.path.join(work, "tgt"), "--ids",
                "--init", os.path.join(work, "init.safetensors"),
                "--dropout", "0", "--label-smoothing", str(EPS)]
        if tie:
            base.append("--tie-weights")

        # 1. Loss and gradients of the first batch (all 10 pairs).
        grads = os.path.join(work, "grads.safetensors")
        subprocess.run(base + ["--batch-size", "10", "--grads-out", grads],
                       check=True)
        got = safetensors_util.read(grads)
        ref_model = make_model(config, bias).double()
        ref_model.load_state_dict({k: v.double() for k, v in state.items()})
        if tie:
            tie_weights(ref_model)
        total, loss, act = objective(ref_model, pairs)
        total.backward()
        ok = abs(got["loss"][2][0] - float(loss)) <= 1e-4 * abs(float(loss))
        if not ok:
            print("  loss: gnnc %.6f, reference %.6f" %
                  (got["loss"][2][0], float(loss)))
        if act is not None:
            steps = torch.cat([ref_model.enc_steps.flatten(),
                               ref_model.dec_steps.flatten()])
            steps = steps[steps > 0]
            print("  ACT steps of the nodes: %s" %
                  ", ".join("%d: %d" % (k, int((steps == k).sum()))
                            for k in range(1, 5)))
            same = abs(got["act_loss"][2][0] - float(act)) <= \
                1e-4 * abs(float(act))
            if not same:
                print("  act_loss: gnnc %.6f, reference %.6f" %
                      (got["act_loss"][2][0], float(act)))
            ok &= same
        params = dict(all_named_parameters(ref_model))
        for p in params.values():
            # A parameter the model does not use (DGL mode's
            # src_attn.linears.3) has a zero gradient.
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        floor = 1e-4 * max(float(p.grad.abs().max())
                           for p in params.values())
        grads32 = reference_gradients(config, bias, tie, state, pairs)
        for name, p in params.items():
            key = "grad." + name
            if key not in got:
                print("  %s: no gradient written" % key)
                ok = False
                continue
            noise = relative_error(grads32[name], p.grad, floor)
            ok &= compare(key, tensor(got[key]), p.grad, floor, noise)
        print("  loss and %d gradients: %s" % (len(params),
                                               "ok" if ok else "MISMATCH"))
        failures += not ok

        # 2. Five updates, batches of 4 in file order.
        for accum in (1, 3):
            out = os.path.join(work, "run%d" % accum)
            subprocess.run(base + ["--batch-size", "4", "--max-steps", "5",
                                   "--epochs", "100", "--shuffle=false",
                                   "--grad-accum", str(accum),
                                   "--lr-factor", str(FACTOR),
                                   "--warmup", str(WARMUP), "--out-dir", out],
                           check=True, stdout=subprocess.DEVNULL)
            # A stop inside an epoch writes step-5, one at an epoch's end
            # that epoch's checkpoint.
            last = os.path.join(out, "step-5.safetensors")
            if not os.path.exists(last):
                epochs = [f for f in os.listdir(out) if f.startswith("epoch-")]
                last = os.path.join(out, max(
                    epochs, key=lambda f: int(f[6:].split(".")[0])))
            got = safetensors_util.read(last)
            ref = train_reference(config, bias, tie, state, pairs, accum,
                                  torch.float64)
            # Where a gradient is 0 in exact arithmetic (attention key
            # biases) or nearly so, Adam's first steps follow the sign of
            # rounding noise: float32 runs differ there by up to the
            # learning rate. The noise is measured on PyTorch's own float32
            # runs, with each batch's pairs in file order and permuted.
            noisy = [train_reference(config, bias, tie, state, pairs, accum,
                                     torch.float32, shuffle)
                     for shuffle in (None, random.Random(1),
                                     random.Random(2))]
            ok = True
            for name, p in ref.items():
                if name not in got:
                    continue
                floor = 1e-4 * float(p.abs().max())
                noise = max(relative_error(n[name].double(), p, floor)
                            for n in noisy)
                ok &= compare(name, tensor(got[name]), p, floor, noise)
            print("  5 updates, grad_accum %d: %s" %
                  (accum, "ok" if ok else "MISMATCH"))
            failures += not ok
        if not a.keep:
            shutil.rmtree(work)
    print("all ok" if not failures else "%d checks failed" % failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
