"""Makes golden files for Universal Transformer (ACT) models with the
PyTorch reference (scripts/py/torch_reference.py), for the AUT issue:

    /usr/bin/python3 test/Models/make_golden_ut.py   # needs torch and numpy

Each case in test/Models/golden-ut/<case>/ has config.json, random weights,
a batch (src.txt, tgt.txt as ids), expected.safetensors with log_probs
(float32 [target tokens, tgt_vocab]) and enc_steps / dec_steps (int32, one
per source / target token in input order), and the reference's greedy
decodings (greedy.txt) and beam search with k = 4, alpha = 0.6 (beam4.txt),
by prefix recomputation. Halting biases are chosen so
that nodes halt at different steps, some only at max_depth.
"""

import json
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "py"))

from safetensors_util import save_torch as save  # noqa: E402
from torch_reference import UniversalTransformer, pad_batch  # noqa: E402
from make_golden import sample_batch  # noqa: E402

CASES = [
    # name, config overrides, biases, tables in the file, halting bias
    ("h2_d8_t099_clamp10", dict(heads=2, d_model=16, max_depth=8,
                                act_threshold=0.99, score_clamp=10,
                                src_vocab=11, tgt_vocab=13), True, False,
     -0.9),
    ("h4_d5_t08_exact_tables", dict(heads=4, d_model=16, max_depth=5,
                                    act_threshold=0.8, score_clamp=None,
                                    src_vocab=9, tgt_vocab=9), False, True,
     -1.0),
    ("h1_d3_t095_clamp5", dict(heads=1, d_model=8, max_depth=3,
                               act_threshold=0.95, score_clamp=5,
                               src_vocab=7, tgt_vocab=10), True, False,
     0.6),
]


def make_case(name, overrides, bias, tables, halt_bias, seed):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    config = dict(architecture="universal_transformer", layers=1,
                  max_len=12, cross_attention="shared")
    config.update(overrides)
    config["d_ff"] = 2 * config["d_model"]
    model = UniversalTransformer(config, bias=bias, pe_in_file=tables)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname:
                p.copy_((1.0 if pname.endswith("weight") else 0.0) +
                        0.2 * torch.randn_like(p))
            elif "lut" in pname:
                p.copy_(torch.randn_like(p))
            else:
                p.copy_(2.0 * torch.randn_like(p) / p.shape[-1] ** 0.5)
        for h, shift in ((model.halt_enc, 1.0), (model.halt_dec, 0.0)):
            h.linear.weight.mul_(0.35)
            h.linear.bias.fill_(halt_bias + shift)
    model.eval()
    state = dict(model.state_dict())
    if tables:
        rows = config["max_len"] + 4
        for key in ("pos_enc.pe", "time_enc.pe"):
            t = (torch.randn(rows, config["d_model"]) * 0.5).unsqueeze(0)
            state[key] = t
            getattr(model, key.split(".")[0]).pe = t
    srcs, tgts, greedy, beams = sample_batch(model, config, rng, 6)
    src, src_len = pad_batch(srcs)
    tgt, tgt_len = pad_batch(tgts)
    with torch.no_grad():
        out = model(src, src_len, tgt, tgt_len)
    lp = torch.cat([out[i, :len(t)] for i, t in enumerate(tgts)])
    enc = torch.cat([model.enc_steps[i, :len(s)] for i, s in enumerate(srcs)])
    dec = torch.cat([model.dec_steps[i, :len(t)] for i, t in enumerate(tgts)])
    out_dir = os.path.join(HERE, "golden-ut", name)
    os.makedirs(out_dir, exist_ok=True)
    config["weights"] = "weights.safetensors"
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    save(os.path.join(out_dir, "weights.safetensors"), state)
    save(os.path.join(out_dir, "expected.safetensors"),
         {"log_probs": lp, "enc_steps": enc, "dec_steps": dec})
    for fname, seqs in (("src.txt", srcs), ("tgt.txt", tgts),
                        ("greedy.txt", greedy), ("beam4.txt", beams)):
        with open(os.path.join(out_dir, fname), "w") as f:
            for s in seqs:
                f.write(" ".join(map(str, s)) + "\n")
    return enc, dec


def main():
    for seed, (name, overrides, bias, tables, halt) in enumerate(CASES):
        enc, dec = make_case(name, overrides, bias, tables, halt, seed)
        print(name, "enc steps", enc.bincount().tolist(),
              "dec steps", dec.bincount().tolist())


if __name__ == "__main__":
    main()
