"""Writes a dict of torch tensors as a safetensors file: floating tensors
as F32, integer ones as I32."""

import json
import struct


def save(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        integer = not t.is_floating_point()
        t = t.int() if integer else t.float()
        blob = t.numpy().tobytes()
        header[name] = {"dtype": "I32" if integer else "F32",
                        "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
