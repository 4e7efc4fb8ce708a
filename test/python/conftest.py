"""Shared fixtures of the gnnc package's tests: where the tools and the
examples are, a safetensors reader, and a private compile cache."""

import json
import os
import pathlib
import subprocess

# gnnc before numpy: numpy loads OpenBLAS, whose kernels are chosen once, at
# its load; gnnc names those for this CPU first (as its tools do), so that
# results match the tools' bit for bit also on CPUs newer than OpenBLAS,
# whose own choice differs.
import gnnc  # noqa: F401  (isort: skip)
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("GNNC_BUILD_DIR", ROOT / "build"))
EXAMPLES = ROOT / "examples"
TRAINING = ROOT / "test" / "Training" / "Inputs"

_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64,
           "I32": np.int32, "I8": np.int8, "BOOL": np.bool_}


def read_safetensors(path):
    """A safetensors file's tensors (an independent reader, not gnnc's)."""
    data = pathlib.Path(path).read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        out[name] = np.frombuffer(raw, dtype=_DTYPES[info["dtype"]]).reshape(
            info["shape"])
    return out


def write_safetensors(path, tensors):
    names = {np.dtype(v): k for k, v in _DTYPES.items()}
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        blob = array.tobytes()
        header[name] = {"dtype": names[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    pathlib.Path(path).write_bytes(len(text).to_bytes(8, "little") + text +
                                   b"".join(blobs))


def tool(name, *args, check=True):
    """Runs one of gnnc's tools; its completed process."""
    result = subprocess.run([str(BUILD / "bin" / name), *map(str, args)],
                            capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"{name} failed: {result.stderr}")
    return result


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Tools and the package share a compile cache private to the run."""
    cache = tmp_path_factory.getbasetemp() / "cache"
    monkeypatch.setenv("GNNC_CACHE_DIR", str(cache))
