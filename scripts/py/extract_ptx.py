"""Writes the PTX of every kernel object in MLIR output (gpu.binary ops from
gnn-lower-to-nvvm{format=isa}) to OUT_DIR/<binary>.ptx, one file per
binary, and prints the file names.

    gnn-opt ... | python3 extract_ptx.py OUT_DIR
"""

import os
import re
import sys

BINARY = re.compile(r'gpu\.binary @(\w+)\s.*?assembly = "((?:[^"\\]|\\.)*)"',
                    re.S)


def unescape(text):
    """MLIR string escapes: \\XX (hex), \\n, \\t, \\", \\\\."""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in 'nt"\\':
            out += {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}[nxt]
            i += 2
        else:
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
    return out.rstrip(b"\0").decode()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: extract_ptx.py OUT_DIR < mlir")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    found = BINARY.findall(sys.stdin.read())
    if not found:
        sys.exit("extract_ptx.py: no gpu.binary with PTX assembly in the input")
    for name, assembly in found:
        path = os.path.join(out_dir, name + ".ptx")
        with open(path, "w") as f:
            f.write(unescape(assembly))
        print(path)


if __name__ == "__main__":
    main()
