#!/usr/bin/env python3
"""Converts a DGL/PyTorch Transformer checkpoint into gnnc's weights file and
config.

usage: convert-checkpoint.py CHECKPOINT --out-dir DIR [--heads H]
           [--score-clamp C|none] [--cross-attention dgl|shared|standard]
           [--vocab FILE] [--max-len N]

CHECKPOINT is a `torch.save` of a state_dict (DGL's example writes one
`.pkl` per epoch; the zip format of PyTorch 1.6 and later is read without
torch, the older format through torch, as data only: a pickle that would
run code is refused) or a safetensors file. Tensors are written one per
name: weights the model ties (the tutorial shares one table between the
source embedding, the target embedding and the generator) become separate
copies, and a table
that a tied save dropped is restored from the tensor it was tied to. Names
and shapes are checked against gnnc's model contract (docs/models.md); the
config is inferred from the shapes (architecture, layers, d_model, d_ff,
vocabulary sizes), and what shapes cannot tell comes from the options, with
DGL's example defaults: 8 heads, clamp 10, `dgl` cross-attention. Writes
DIR/weights.safetensors and DIR/config.json (and DIR/vocab.txt with
--vocab).
"""

import argparse
import array
import collections
import json
import os
import pickle
import re
import shutil
import struct
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "py"))
import safetensors_util  # noqa: E402

# Storage classes of torch.save, by name: (format, bytes per element).
STORAGES = {
    "FloatStorage": ("f", 4), "DoubleStorage": ("d", 8),
    "HalfStorage": ("e", 2), "LongStorage": ("q", 8), "IntStorage": ("i", 4),
}


class Tensor:
    """A tensor as a flat list of Python numbers in row-major order."""

    def __init__(self, shape, values, floating=True):
        self.shape, self.values, self.floating = list(shape), values, floating


# The largest member of a torch.save archive read (a tensor's storage).
MAX_MEMBER_BYTES = 16 << 30


def fail(message):
    sys.exit("convert-checkpoint: error: " + message)


def one_line(e):
    """An exception as one short line: its type and its first line."""
    text = str(e).strip().splitlines()
    return type(e).__name__ + (": " + text[0][:200] if text else "")


def state_dict_of(state, path):
    """The state_dict a torch.save holds: itself, or its "state_dict"."""
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        fail("%s: holds no state_dict" % path)
    return state


def read_torch_zip(path):
    """The state_dict of a zip-format torch.save, read without torch."""
    archive = zipfile.ZipFile(path)
    names = archive.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if not pkl:
        fail("%s: not a torch.save archive (no data.pkl)" % path)
    prefix = pkl[0][: -len("data.pkl")]

    # A zip bomb: members that inflate far beyond what they take on disk
    # (torch.save stores its members uncompressed).
    for info in archive.infolist():
        if info.file_size > MAX_MEMBER_BYTES:
            fail("%s: member %s declares %d bytes, more than %d" %
                 (path, info.filename, info.file_size, MAX_MEMBER_BYTES))
        if info.file_size > 100 * max(info.compress_size, 1) + (1 << 20):
            fail("%s: member %s inflates %d bytes to %d: refused as a zip "
                 "bomb" % (path, info.filename, info.compress_size,
                           info.file_size))

    class Storage:
        def __init__(self, kind, key):
            if not isinstance(key, str):
                raise pickle.UnpicklingError("a storage key is not a string")
            fmt, size = STORAGES[kind]
            raw = archive.read(prefix + "data/" + key)
            self.values = array.array(fmt, raw[: len(raw) // size * size])
            if sys.byteorder != "little":
                self.values.byteswap()
            self.floating = fmt in "fde"

    def rebuild_tensor(storage, offset, size, stride, *unused):
        if not (isinstance(offset, int) and offset >= 0 and
                isinstance(size, tuple) and isinstance(stride, tuple) and
                len(size) == len(stride) and
                all(isinstance(v, int) and v >= 0 for v in size + stride)):
            raise pickle.UnpicklingError("a tensor with a malformed offset, "
                                         "shape or stride")
        n = 1
        for s in size:
            n *= s
        # Every element within its storage, and no more elements than the
        # storage holds (a state_dict has no broadcast views; a shape of
        # 100000 x 100000 over a stride of 0 would be 10^10 of them).
        last = offset + sum((d - 1) * st for d, st in zip(size, stride))
        if n and (last >= len(storage.values) or n > len(storage.values)):
            raise pickle.UnpicklingError(
                "a tensor of shape %s declares %d elements at offset %d, "
                "but its storage holds %d" % (list(size), n, offset,
                                              len(storage.values)))
        values = []
        if n:
            # Row-major walk of a strided view of the storage.
            index = [0] * len(size)
            for _ in range(n):
                at = offset + sum(i * s for i, s in zip(index, stride))
                values.append(storage.values[at])
                for d in range(len(size) - 1, -1, -1):
                    index[d] += 1
                    if index[d] < size[d]:
                        break
                    index[d] = 0
        return Tensor(size, values, storage.floating)

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if module == "collections" and name == "OrderedDict":
                return collections.OrderedDict
            if module == "torch._utils" and name == "_rebuild_tensor_v2":
                return rebuild_tensor
            if module == "torch._utils" and name == "_rebuild_parameter":
                return lambda data, *unused: data
            if module == "torch" and name in STORAGES:
                return name
            raise pickle.UnpicklingError(
                "%s.%s is not part of a state_dict (save "
                "model.state_dict(), not the model)" % (module, name))

        def persistent_load(self, pid):
            if not (isinstance(pid, tuple) and pid[0] == "storage"):
                raise pickle.UnpicklingError("unknown persistent id")
            kind = pid[1]
            if kind not in STORAGES:
                raise pickle.UnpicklingError("unsupported storage %s" % kind)
            return Storage(kind, pid[2])

    try:
        state = Unpickler(archive.open(pkl[0])).load()
    except (pickle.UnpicklingError, KeyError, AttributeError, EOFError,
            TypeError, ValueError, IndexError, struct.error) as e:
        fail("%s: not a readable state_dict (%s)" % (path, one_line(e)))
    state = state_dict_of(state, path)
    return {k: v for k, v in state.items() if isinstance(v, Tensor)}


def read_safetensors(path):
    try:
        entries = safetensors_util.read(path)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError,
            struct.error) as e:
        fail("%s: not a readable safetensors file (%s)" % (path, one_line(e)))
    for name, (dtype, shape, values) in entries.items():
        if not (isinstance(shape, list) and
                all(isinstance(d, int) and d >= 0 for d in shape)):
            fail("%s: tensor %s has a malformed shape" % (path, name))
        n = 1
        for d in shape:
            n *= d
        if n != len(values):
            fail("%s: tensor %s holds %d values, but its shape %s needs %d" %
                 (path, name, len(values), shape, n))
    return {name: Tensor(shape, values, dtype in ("F32", "F64", "F16"))
            for name, (dtype, shape, values) in entries.items()}


def read_checkpoint(path):
    with open(path, "rb") as f:
        head = f.read(8)
    if head[:2] == b"PK":
        return read_torch_zip(path)
    if len(head) == 8 and struct.unpack("<Q", head)[0] < os.path.getsize(path):
        return read_safetensors(path)
    try:
        import torch  # noqa: F401  (old, non-zip torch.save files)
    except ImportError:
        fail("%s: neither a zip-format torch.save nor safetensors (an old "
             "torch.save file needs torch installed)" % path)
    # weights_only: a state_dict needs no code, and a hostile file gets no
    # chance to run any (PyTorch 2.6 made it the default).
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for a file it can't read
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        fail("%s: not a readable torch.save file (%s)" % (path, reason))
    state = state_dict_of(state, path)
    return {k: Tensor(list(v.shape), v.float().flatten().tolist())
            for k, v in state.items() if hasattr(v, "shape")}


def expected(config):
    """name -> shape of every required tensor (docs/models.md)."""
    d, ff = config["d_model"], config["d_ff"]
    out = {"src_embed.lut.weight": [config["src_vocab"], d],
           "tgt_embed.lut.weight": [config["tgt_vocab"], d],
           "generator.proj.weight": [config["tgt_vocab"], d],
           "generator.proj.bias": [config["tgt_vocab"]]}
    norm = lambda n: {n + ".weight": [d], n + ".bias": [d]}
    out.update(norm("encoder.norm"))
    out.update(norm("decoder.norm"))

    def layer(prefix, sublayers, attentions):
        for a in attentions:
            for j in range(4):
                out["%s.%s.linears.%d.weight" % (prefix, a, j)] = [d, d]
        out[prefix + ".feed_forward.w_1.weight"] = [ff, d]
        out[prefix + ".feed_forward.w_1.bias"] = [ff]
        out[prefix + ".feed_forward.w_2.weight"] = [d, ff]
        out[prefix + ".feed_forward.w_2.bias"] = [d]
        for j in range(sublayers):
            out.update(norm("%s.sublayer.%d.norm" % (prefix, j)))

    if config["architecture"] == "universal_transformer":
        layer("encoder.layer", 2, ["self_attn"])
        layer("decoder.layer", 3, ["self_attn"])
        for side in ("halt_enc", "halt_dec"):
            out[side + ".linear.weight"] = [1, d]
            out[side + ".linear.bias"] = [1]
            out.update(norm(side + ".norm"))
    else:
        cross = ["self_attn"] if config["cross_attention"] == "shared" else [
            "self_attn", "src_attn"]
        for i in range(config["layers"]):
            layer("encoder.layers.%d" % i, 2, ["self_attn"])
            layer("decoder.layers.%d" % i, 3, cross)
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--score-clamp", default="10",
                    help="a positive number, or none for the exact softmax")
    ap.add_argument("--cross-attention", choices=["dgl", "shared", "standard"])
    ap.add_argument("--vocab", help="DGL's vocab.txt, copied beside the config")
    ap.add_argument("--max-len", type=int, default=50)
    a = ap.parse_args()

    tensors = read_checkpoint(a.checkpoint)
    # DataParallel prefixes every name with "module.".
    if tensors and all(k.startswith("module.") for k in tensors):
        tensors = {k[len("module."):]: v for k, v in tensors.items()}
    for name in [n for n, t in tensors.items() if not t.floating]:
        print("convert-checkpoint: %s is not floating point; left out" % name,
              file=sys.stderr)
        del tensors[name]

    universal = any(k.startswith("encoder.layer.") for k in tensors)
    # Tables that a tied save kept under one name only.
    tied = ["src_embed.lut.weight", "tgt_embed.lut.weight",
            "generator.proj.weight"]
    present = [n for n in tied if n in tensors]
    for name in tied:
        if name not in tensors and present:
            tensors[name] = tensors[present[0]]
            print("convert-checkpoint: %s restored from the tensor tied to "
                  "it, %s" % (name, present[0]), file=sys.stderr)

    def shape_of(name, axis):
        if name not in tensors:
            fail("the checkpoint has no %s" % name)
        return tensors[name].shape[axis]

    layers = set()
    for k in tensors:
        m = re.match(r"encoder\.layers\.(\d+)\.", k)
        if m:
            layers.add(int(m.group(1)))
    config = collections.OrderedDict()
    config["architecture"] = ("universal_transformer" if universal
                              else "transformer")
    if not universal:
        if not layers or sorted(layers) != list(range(len(layers))):
            fail("the checkpoint's encoder layers are not 0..N-1: %s" %
                 sorted(layers))
        config["layers"] = len(layers)
    ffn = ("encoder.layer" if universal else "encoder.layers.0") + \
        ".feed_forward.w_1.weight"
    config["d_model"] = shape_of("src_embed.lut.weight", 1)
    config["heads"] = a.heads
    config["d_ff"] = shape_of(ffn, 0)
    config["src_vocab"] = shape_of("src_embed.lut.weight", 0)
    config["tgt_vocab"] = shape_of("tgt_embed.lut.weight", 0)
    config["max_len"] = a.max_len
    if a.score_clamp.lower() in ("none", "null"):
        config["score_clamp"] = None
    else:
        config["score_clamp"] = float(a.score_clamp)
    config["cross_attention"] = a.cross_attention or (
        "shared" if universal else "dgl")
    if config["d_model"] % a.heads:
        fail("d_model %d is not a multiple of --heads %d" %
             (config["d_model"], a.heads))

    want = expected(config)
    missing = sorted(set(want) - set(tensors))
    if missing:
        fail("the checkpoint lacks %d tensor(s) the model needs: %s" %
             (len(missing), ", ".join(missing[:8]) +
              (", ..." if len(missing) > 8 else "")))
    for name, shape in sorted(want.items()):
        if tensors[name].shape != shape:
            fail("%s has shape %s, the model needs %s" %
                 (name, tensors[name].shape, shape))

    os.makedirs(a.out_dir, exist_ok=True)
    weights = os.path.join(a.out_dir, "weights.safetensors")
    out = {}
    for name in sorted(tensors):
        t = tensors[name]
        out[name] = ("F32", t.shape,
                     array.array("f", t.values).tobytes()
                     if sys.byteorder == "little" else
                     struct.pack("<%df" % len(t.values), *t.values))
    temporary = weights + ".tmp"
    try:
        safetensors_util.write_bytes(temporary, out)
        os.replace(temporary, weights)
    except OSError as e:
        if os.path.exists(temporary):
            os.remove(temporary)
        fail("cannot write %s: %s" % (weights, e.strerror or one_line(e)))
    config["weights"] = "weights.safetensors"
    if a.vocab:
        shutil.copyfile(a.vocab, os.path.join(a.out_dir, "vocab.txt"))
        config["vocab"] = "vocab.txt"
    path = os.path.join(a.out_dir, "config.json")
    with open(path + ".tmp", "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("convert-checkpoint: %d tensors, %s, %s" %
          (len(out), weights, path))


if __name__ == "__main__":
    # Whatever a crafted or damaged file (or a full disk) makes Python
    # raise is one line and exit code 1, never a traceback.
    try:
        main()
    except (OSError, MemoryError, RecursionError, EOFError, ValueError,
            TypeError, KeyError, IndexError, OverflowError, AttributeError,
            struct.error, pickle.UnpicklingError, zipfile.BadZipFile) as e:
        fail(one_line(e))
