"""gnnc.train: training as gnn-train trains, from Python."""

import math
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


def _integer(options, name, low, high):
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, int) or not (
            low <= value <= high):
        raise Error(f"{name} must be an integer between {low} and {high}, "
                    f"got {value!r}")
    return value


def _number(options, name, ok, what):
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            not math.isfinite(value)) or not ok(value):
        raise Error(f"{name} must be {what}, got {value!r}")
    return float(value)


def _checked(options):
    """gnn-train's checks, in the options' names."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise Error(f"unknown option '{unknown[0]}' (gnnc.train takes "
                    f"{', '.join(sorted(DEFAULTS))})")
    o = dict(DEFAULTS, **options)
    o["epochs"] = _integer(o, "epochs", 1, 10**6)
    o["max_steps"] = 0 if o["max_steps"] is None else _integer(
        o, "max_steps", 1, 2**62)
    o["batch_size"] = _integer(o, "batch_size", 1, 2**24)
    o["label_smoothing"] = _number(o, "label_smoothing",
                                   lambda v: 0 <= v < 1, "in [0, 1)")
    o["dropout"] = _number(o, "dropout", lambda v: 0 <= v < 1, "in [0, 1)")
    o["lr_factor"] = _number(o, "lr_factor", lambda v: v > 0,
                             "a positive number")
    o["warmup"] = _integer(o, "warmup", 1, 2**62)
    o["grad_accum"] = _integer(o, "grad_accum", 1, 10**6)
    o["act_loss_weight"] = _number(o, "act_loss_weight", lambda v: v >= 0,
                                   "a non-negative number")
    o["seed"] = _integer(o, "seed", 0, 2**64 - 1)
    o["threads"] = _threads(o["threads"])
    if o["device"] not in ("cpu", "cuda"):
        raise Error(f"device must be 'cpu' or 'cuda', not {o['device']!r}")
    if o["resume"] and o["init"] is not None:
        raise Error("resume continues from the state; it takes no init")
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
    if out_dir is None and o["resume"]:
        raise Error("resume needs out_dir (the state is read from it)")
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
