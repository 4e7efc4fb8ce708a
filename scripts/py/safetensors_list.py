"""Prints the tensors of a safetensors file, one per line in name order:
name, dtype and shape.

usage: safetensors_list.py FILE.safetensors
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_util  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    for name, (dtype, shape, _) in sorted(
            safetensors_util.read(sys.argv[1]).items()):
        print(name, dtype, "[" + ", ".join(map(str, shape)) + "]")


if __name__ == "__main__":
    main()
