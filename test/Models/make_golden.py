"""Makes the golden files of test/Models with the independent PyTorch
implementation of the model semantics (scripts/py/torch_reference.py).

    /usr/bin/python3 test/Models/make_golden.py   # needs torch and numpy

For every case it writes test/Models/golden/<case>/: config.json, random
weights (weights.safetensors), a batch (src.txt, tgt.txt: ids, including
one-token sources and <sos>-only targets), the teacher-forced log-probs
(expected.safetensors) and greedy decodings by prefix recomputation
(greedy.txt) and beam search with k = 4, alpha = 0.6 (beam4.txt), both by
prefix recomputation. Sources whose decodings hinge on a near tie (top two
log-probs, or the candidates at the beam's edge, within 1e-3) are
resampled, so that float rounding cannot flip them.
"""

import json
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "py"))

from safetensors_util import save_torch as save  # noqa: E402
from torch_reference import (EOS, SOS, Transformer, beam,  # noqa: E402
                             log_probs, sinusoid_table)

CASES = [
    # name, config overrides, attention biases, pos_enc.pe in the file
    ("h1_l1_clamp10_dgl", dict(heads=1, layers=1, d_model=32, score_clamp=10,
                               cross_attention="dgl", src_vocab=13,
                               tgt_vocab=11), True, False),
    ("h4_l2_clamp5_shared_nobias_pe",
     dict(heads=4, layers=2, d_model=32, score_clamp=5,
          cross_attention="shared", src_vocab=17, tgt_vocab=19), False, True),
    ("h8_l3_exact_standard", dict(heads=8, layers=3, d_model=16,
                                  score_clamp=None,
                                  cross_attention="standard", src_vocab=23,
                                  tgt_vocab=13), True, False),
    ("h4_l2_exact_dgl_pe", dict(heads=4, layers=2, d_model=24,
                                score_clamp=None, cross_attention="dgl",
                                src_vocab=9, tgt_vocab=15), True, True),
    ("h1_l3_clamp5_standard_nobias",
     dict(heads=1, layers=3, d_model=16, score_clamp=5,
          cross_attention="standard", src_vocab=12, tgt_vocab=12), False,
     False),
    ("h2_l1_exact_large_scores", dict(heads=2, layers=1, d_model=16,
                                      score_clamp=None, src_vocab=10,
                                      tgt_vocab=10), True, False),
]


def randomize(model, name, rng_scale):
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname:
                base = 1.0 if pname.endswith("weight") else 0.0
                p.copy_(base + 0.2 * torch.randn_like(p))
            elif "lut" in pname:
                p.copy_(torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) * rng_scale / p.shape[-1] ** 0.5)
        if "large_scores" in name:
            # Scores in the hundreds: the exact softmax must stay finite.
            for stack in (model.encoder, model.decoder):
                for L in stack.layers:
                    for i in (0, 1):
                        L.self_attn.linears[i].weight.mul_(12.0)


def greedy_with_margin(model, src, max_len):
    out = [SOS]
    with torch.no_grad():
        while len(out) - 1 < max_len - 1:
            lp = log_probs(model, [src], [out])[-1]
            top = torch.topk(lp, 2).values
            if float(top[0] - top[1]) < 1e-3:
                return None
            tok = int(lp.argmax())
            if tok == EOS:
                break
            out.append(tok)
    return out[1:]


def sample_batch(model, config, rng, count):
    """`count` random sources and decoder inputs (the first source has one
    token, the second target is <sos> alone) with the reference's greedy
    and beam (k = 4, alpha 0.6) decodings; a source whose decodings float
    rounding could flip is drawn again."""
    V, W, M = config["src_vocab"], config["tgt_vocab"], config["max_len"]
    srcs, tgts, greedy, beams = [], [], [], []
    while len(srcs) < count:
        i = len(srcs)
        n = 1 if i == 0 else rng.randint(1, M)
        m = 1 if i == 1 else rng.randint(1, M)
        src = [rng.randrange(V) for _ in range(n)]
        tgt = [SOS] + [rng.randrange(W) for _ in range(m - 1)]
        g = greedy_with_margin(model, src, M)
        if g is None:
            continue
        b = beam(model, src, 4, 0.6, M, margin=1e-3)
        if b is None:
            continue
        srcs.append(src)
        tgts.append(tgt)
        greedy.append(g)
        beams.append(b)
    return srcs, tgts, greedy, beams


def make_case(name, overrides, bias, pe_in_file, seed):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    config = dict(architecture="transformer", d_ff=0, max_len=14)
    config.update(overrides)
    config["d_ff"] = 2 * config["d_model"]
    model = Transformer(config, bias=bias, pe_in_file=pe_in_file)
    randomize(model, name, 2.0)
    model.eval()
    state = {k: v for k, v in model.state_dict().items()}
    if pe_in_file:
        # A table of its own (not the sinusoids), longer than max_len.
        rows = config["max_len"] + 6
        state["pos_enc.pe"] = (sinusoid_table(rows, config["d_model"]) +
                               0.5 * torch.randn(rows, config["d_model"])
                               ).unsqueeze(0)
        model.pos_enc.pe = state["pos_enc.pe"]
    srcs, tgts, greedy, beams = sample_batch(model, config, rng, 7)
    expected = log_probs(model, srcs, tgts)
    out = os.path.join(HERE, "golden", name)
    os.makedirs(out, exist_ok=True)
    config["weights"] = "weights.safetensors"
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    save(os.path.join(out, "weights.safetensors"), state)
    save(os.path.join(out, "expected.safetensors"), {"log_probs": expected})
    for fname, seqs in (("src.txt", srcs), ("tgt.txt", tgts),
                        ("greedy.txt", greedy), ("beam4.txt", beams)):
        with open(os.path.join(out, fname), "w") as f:
            for s in seqs:
                f.write(" ".join(map(str, s)) + "\n")


def main():
    for seed, (name, overrides, bias, pe) in enumerate(CASES):
        make_case(name, overrides, bias, pe, seed)
        print("wrote", name)


if __name__ == "__main__":
    main()
