"""gnnc.train: training as gnn-train trains, from Python."""

import os
import sys

from . import _core
from ._core import Error
from ._program import _cache_dir, _threads

# gnn-train's flags in snake_case, with its defaults.
DEFAULTS = {
    "epochs": 10,
    "max_steps": None,
    "batch_size": 128,
    "label_smoothing": 0.1,
    "dropout": 0.1,
    "lr_factor": 0.1,
    "warmup": 4000,
    "grad_accum": 1,
    "tie_weights": False,
    "act_loss_weight": 0.01,
    "seed": 1,
    "threads": None,
    "init": None,
    "resume": False,
    "device": "cpu",
    "shuffle": True,
    "ids": False,
    "cache_dir": None,
}


def _integer(options, name, low=-2**63, high=2**63 - 1):
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, int) or not (
            low <= value <= high):
        raise Error(f"{name} must be an integer between {low} and {high}, "
                    f"got {value!r}")
    return value


def _number(options, name):
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Error(f"{name} must be a number, got {value!r}")
    return float(value)


def _checked(options):
    """The options' names and types; their ranges are checked by the
    library, as gnn-train's flags are."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise Error(f"unknown option '{unknown[0]}' (gnnc.train takes "
                    f"{', '.join(sorted(DEFAULTS))})")
    o = dict(DEFAULTS, **options)
    for name in ("epochs", "batch_size", "warmup", "grad_accum"):
        o[name] = _integer(o, name)
    if o["max_steps"] is not None:
        o["max_steps"] = _integer(o, "max_steps")
    for name in ("label_smoothing", "dropout", "lr_factor", "act_loss_weight"):
        o[name] = _number(o, name)
    o["seed"] = _integer(o, "seed", 0, 2**64 - 1)
    o["threads"] = _threads(o["threads"])
    if not isinstance(o["device"], str):
        raise Error(f"device must be 'cpu' or 'cuda', not {o['device']!r}")
    return o


def train(config_path, train_src, train_tgt, out_dir, valid_src=None,
          valid_tgt=None, callback=None, verbose=False, **options):
    """Trains the model of ``config_path`` on the pairs of ``train_src`` and
    ``train_tgt`` (one sequence a line) as ``gnn-train`` does, writing
    epoch-N.safetensors and the train state to ``out_dir`` (None: no
    files). Returns one dict per epoch trained (train_loss, train_acc,
    valid_loss, valid_acc, seconds, tokens_per_s, step, ...);
    ``callback(epoch_dict)`` may return False to stop after that epoch;
    ``verbose`` prints gnn-train's epoch lines."""
    o = _checked(options)
    if (valid_src is None) != (valid_tgt is None):
        raise Error("give both valid_src and valid_tgt, or neither")
    if callback is not None and not callable(callback):
        raise Error("callback must be callable")
    path = lambda p: "" if p is None else os.fspath(p)
    printer = (lambda line: print(line, file=sys.stdout, flush=True)
               ) if verbose else None
    return _core.train(
        path(config_path), path(train_src), path(train_tgt), path(out_dir),
        path(valid_src), path(valid_tgt), o["epochs"], o["max_steps"],
        o["batch_size"], o["label_smoothing"], o["dropout"], o["lr_factor"],
        o["warmup"], o["grad_accum"], bool(o["tie_weights"]),
        o["act_loss_weight"], o["seed"], o["threads"], path(o["init"]),
        bool(o["resume"]), o["device"], bool(o["shuffle"]), bool(o["ids"]),
        _cache_dir(o["cache_dir"]), callback, printer)
