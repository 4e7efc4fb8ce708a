"""Damages every entry of a compile cache directory.

usage: damage_cache.py DIR flip|truncate|empty
flip: one byte in the middle of each entry changes; truncate: each entry
loses its second half; empty: each entry becomes an empty file.
"""

import os
import sys


def main():
    directory, how = sys.argv[1], sys.argv[2]
    entries = [f for f in os.listdir(directory) if f.endswith(".gnnobj")]
    if not entries:
        sys.exit("no entries in " + directory)
    for name in entries:
        path = os.path.join(directory, name)
        with open(path, "rb") as f:
            data = bytearray(f.read())
        if how == "flip":
            data[len(data) // 2] ^= 0x40
        elif how == "truncate":
            data = data[: len(data) // 2]
        else:
            data = bytearray()
        with open(path, "wb") as f:
            f.write(data)
    print("damaged %d entries" % len(entries))


if __name__ == "__main__":
    main()
