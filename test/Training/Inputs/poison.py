"""poison.py IN OUT NAME: copies a weights file with tensor NAME's first
element set to NaN."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "scripts", "py"))
import safetensors_util  # noqa: E402

src, dst, name = sys.argv[1:4]
w = safetensors_util.read(src)
dtype, shape, values = w[name]
values = list(values)
values[0] = float("nan")
w[name] = (dtype, shape, values)
safetensors_util.write(dst, w)
