"""Reads and writes safetensors files with the standard library alone."""

import json
import struct

_FORMATS = {"F32": ("f", 4), "F64": ("d", 8), "I64": ("q", 8), "I32": ("i", 4)}


def write_bytes(path, tensors):
    """tensors: name -> (dtype, shape, little-endian element bytes)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, blob = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write(path, tensors):
    """tensors: name -> (dtype, shape, flat list of values)."""
    write_bytes(path, {
        name: (dtype, shape,
               struct.pack("<%d%s" % (len(values), _FORMATS[dtype][0]),
                           *values))
        for name, (dtype, shape, values) in tensors.items()})


def save_torch(path, tensors):
    """tensors: name -> torch tensor; floating ones are written as F32,
    integer ones as I32."""
    out = {}
    for name, t in tensors.items():
        t = t.detach().contiguous()
        integer = not t.is_floating_point()
        t = t.int() if integer else t.float()
        out[name] = ("I32" if integer else "F32", list(t.shape),
                     t.numpy().tobytes())
    write_bytes(path, out)


def read(path):
    """Returns name -> (dtype, shape, flat list of values)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        code, size = _FORMATS[entry["dtype"]]
        begin, end = entry["data_offsets"]
        count = (end - begin) // size
        values = list(struct.unpack("<%d%s" % (count, code), body[begin:end]))
        out[name] = (entry["dtype"], entry["shape"], values)
    return out
