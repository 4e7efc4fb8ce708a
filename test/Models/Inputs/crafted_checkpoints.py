"""crafted_checkpoints.py OUT: writes hostile checkpoints into OUT for
scripts/convert-checkpoint.py, each of which must end in one line and
exit code 1 (never a traceback, a hang or unbounded memory)."""

import io
import json
import os
import struct
import sys
import zipfile


def text(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def ints(*values):
    return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"


def tensor_pickle(shape, stride, offset, numel):
    """A state_dict {"w": tensor} as torch.save pickles it: the tensor
    rebuilt from storage "0" (FloatStorage, `numel` elements)."""
    storage = (b"(" + text("storage") + b"ctorch\nFloatStorage\n" +
               text("0") + text("cpu") + b"J" + struct.pack("<i", numel) +
               b"tQ")
    return (b"\x80\x02ccollections\nOrderedDict\n)R" + text("w") +
            b"ctorch._utils\n_rebuild_tensor_v2\n(" + storage +
            b"J" + struct.pack("<i", offset) + ints(*shape) + ints(*stride) +
            b"\x89ccollections\nOrderedDict\n)Rt" + b"Rs.")


def torch_zip(path, pickle_bytes, storage=b"\0" * 4, compress=False):
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("archive/data.pkl", pickle_bytes)
        z.writestr("archive/data/0", storage)


def safetensors(path, header, body=b""):
    t = header if isinstance(header, bytes) else json.dumps(header).encode()
    t += b" " * (-len(t) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(t)) + t + body)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    # 100000 x 100000 over a stride of 0: 10^10 elements of one float.
    torch_zip(p("stride0.pkl"), tensor_pickle([100000, 100000], [0, 0], 0, 1))
    # An offset past the storage.
    torch_zip(p("offset.pkl"), tensor_pickle([2], [1], 1000, 1))
    # A zip bomb: 64 MiB of zeros in 64 KiB.
    torch_zip(p("bomb.pkl"), tensor_pickle([1], [1], 0, 1),
              storage=b"\0" * (64 << 20), compress=True)
    # EXT1 (an unregistered extension code).
    torch_zip(p("ext1.pkl"), b"\x80\x02\x82\x01.")
    # Calling the storage type's name (a string).
    torch_zip(p("callstr.pkl"), b"\x80\x02ctorch\nFloatStorage\n)R.")
    # A truncated pickle.
    torch_zip(p("truncated.pkl"),
              tensor_pickle([2], [1], 0, 2)[:40])
    # safetensors: 4 floats under shape [9, 16]; a 100000-deep header;
    # float data offsets.
    safetensors(p("short.safetensors"),
                {"w": {"dtype": "F32", "shape": [9, 16],
                       "data_offsets": [0, 16]}}, b"\0" * 16)
    safetensors(p("deep.safetensors"), b"[" * 100000 + b"]" * 100000)
    safetensors(p("float-offsets.safetensors"),
                {"w": {"dtype": "F32", "shape": [1],
                       "data_offsets": [0.0, 4.0]}}, b"\0" * 4)


if __name__ == "__main__":
    main()
