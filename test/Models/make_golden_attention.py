"""Adds the reference attention maps to the golden cases of test/Models
(golden/ and golden-ut/): for each case, attention.safetensors holds what
the independent PyTorch implementation (scripts/py/torch_reference.py,
attention_maps) computes for sequences SEQUENCES of the case's batch, named
as gnn-run --attention-out names them. The cases' other files are read, not
changed.

    python3 test/Models/make_golden_attention.py   # needs torch
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "py"))

import safetensors_util  # noqa: E402
from torch_reference import (Transformer, UniversalTransformer,  # noqa: E402
                             attention_maps, log_probs)

# A one-token source, a <sos>-only target and a longer pair.
SEQUENCES = (0, 1, 4)
DTYPES = {"F32": torch.float32, "I64": torch.int64, "I32": torch.int32}


def read_sequences(path):
    with open(path) as f:
        return [[int(t) for t in line.split()] for line in f]


def load_model(case):
    with open(os.path.join(case, "config.json")) as f:
        config = json.load(f)
    tensors = safetensors_util.read(os.path.join(case, "weights.safetensors"))
    state = {name: torch.tensor(values, dtype=DTYPES[dtype]).reshape(shape)
             for name, (dtype, shape, values) in tensors.items()}
    bias = any(k.endswith("linears.0.bias") for k in state)
    tables = "pos_enc.pe" in state
    universal = config["architecture"] == "universal_transformer"
    cls = UniversalTransformer if universal else Transformer
    model = cls(config, bias=bias, pe_in_file=tables)
    # Position tables of their own length replace the model's.
    own = {k: state.pop(k) for k in ("pos_enc.pe", "time_enc.pe")
           if k in state}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - set(own):
        sys.exit("%s: weights do not fit the reference model: %s %s" %
                 (case, missing, unexpected))
    for name, table in own.items():
        getattr(model, name.split(".")[0]).pe = table
    model.eval()
    return model


def make_case(case):
    model = load_model(case)
    srcs = read_sequences(os.path.join(case, "src.txt"))
    tgts = read_sequences(os.path.join(case, "tgt.txt"))
    # The model as loaded must give the case's expected log-probs.
    _, shape, values = safetensors_util.read(
        os.path.join(case, "expected.safetensors"))["log_probs"]
    expected = torch.tensor(values).reshape(shape)
    error = float((log_probs(model, srcs, tgts) - expected).abs().max())
    if error > 1e-4:
        sys.exit("%s: the reference gives other log-probs (%.2e)" %
                 (case, error))
    maps = attention_maps(model, srcs, tgts)
    keep = {name: t for name, t in maps.items()
            if int(name.rsplit(".", 1)[1]) in SEQUENCES}
    safetensors_util.save_torch(os.path.join(case, "attention.safetensors"),
                                keep)


def main():
    for suite in ("golden", "golden-ut"):
        root = os.path.join(HERE, suite)
        for name in sorted(os.listdir(root)):
            make_case(os.path.join(root, name))
            print("wrote", suite, name)


if __name__ == "__main__":
    main()
