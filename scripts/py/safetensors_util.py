"""Reads and writes safetensors files with the standard library alone."""

import json
import struct

_FORMATS = {"F32": ("f", 4), "F64": ("d", 8), "I64": ("q", 8), "I32": ("i", 4)}


def write(path, tensors):
    """tensors: name -> (dtype, shape, flat list of values)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, values = tensors[name]
        code, size = _FORMATS[dtype]
        blob = struct.pack("<%d%s" % (len(values), code), *values)
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


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
