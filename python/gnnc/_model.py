"""gnnc.Transformer: compiled Transformers and Universal Transformers."""

import os

from . import _core
from ._core import Error
from ._program import _cache_dir, _threads


def _lines(lines, what):
    if isinstance(lines, (str, bytes)):
        raise Error(f"{what} must be a list of lines, not one string")
    try:
        lines = list(lines)
    except TypeError:
        raise Error(f"{what} must be a list of lines") from None
    for i, line in enumerate(lines):
        if not isinstance(line, str):
            raise Error(f"{what}[{i}] is {type(line).__name__}, not a line "
                        "of tokens (str)")
    return lines


def _count(value, name, low=1):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise Error(f"{name} must be an integer of at least {low}, got "
                    f"{value!r}")
    return value


class Transformer:
    """A model from a config (JSON) and weights (safetensors, DGL names),
    compiled once; lines are tokens separated by spaces (the config's
    vocabulary, or integer ids with ``ids=True`` or without one)."""

    def __init__(self, model):
        self._model = model

    @classmethod
    def load(cls, config_path, weights_path=None, device="cpu", threads=None,
             cache_dir=None, fuse=True, ids=None, max_len=None,
             allow_nonfinite=False):
        """Loads and compiles a model; ``weights_path`` None: the config's
        weights. ``max_len``: the longest decoding prepared for (default:
        the config's max_len). Weights holding NaN or infinity raise
        gnnc.Error unless ``allow_nonfinite``."""
        weights = "" if weights_path is None else os.fspath(weights_path)
        positions = 0 if max_len is None else _count(max_len, "max_len")
        return cls(_core.LoadedModel(os.fspath(config_path), weights, device,
                                     _threads(threads), _cache_dir(cache_dir),
                                     bool(fuse), ids, positions,
                                     bool(allow_nonfinite)))

    @property
    def config(self):
        """The config's architecture, vocabularies and sizes."""
        return self._model.describe()

    def decode(self, lines, mode="greedy", beam=4, alpha=0.6, max_len=None,
               batch_size=64, truncate=False):
        """The decoded output of each source line, as ``gnn-run --mode
        greedy|beam`` prints it (without <sos> and <eos>)."""
        lines = _lines(lines, "lines")
        return self._model.decode(
            lines, mode, _count(beam, "beam"), float(alpha),
            0 if max_len is None else _count(max_len, "max_len"),
            _count(batch_size, "batch_size"), bool(truncate))

    def forward(self, src_lines, tgt_lines, batch_size=64, truncate=False):
        """Teacher-forced results, as ``gnn-run --mode forward --out``
        writes them: ``log_probs`` [target tokens, vocab] (rows in input
        order), and for a Universal Transformer ``enc_steps`` and
        ``dec_steps``. Target lines are decoder inputs (they begin with
        <sos>)."""
        return self._model.forward(_lines(src_lines, "src_lines"),
                                   _lines(tgt_lines, "tgt_lines"),
                                   _count(batch_size, "batch_size"),
                                   bool(truncate))

    def attention(self, src_line, tgt_line=None, truncate=False):
        """The attention maps of one pair, as ``gnn-run --attention-out``
        writes them for sequence 0 (``attn.<enc|dec|e2d>.<layer>.0``,
        ``tokens.src.0``, ...); without ``tgt_line``, of the greedy
        decoding's."""
        for name, line in (("src_line", src_line), ("tgt_line", tgt_line)):
            if line is not None and not isinstance(line, str):
                raise Error(f"{name} must be a line of tokens (str)")
        if src_line is None:
            raise Error("src_line must be a line of tokens (str)")
        return self._model.attention(src_line, tgt_line, bool(truncate))
