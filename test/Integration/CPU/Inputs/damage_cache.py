"""Damages every entry of a compile cache directory.

usage: damage_cache.py DIR flip|truncate|empty|fifo|zero|sparse
flip: one byte in the middle of each entry changes; truncate: each entry
loses its second half; empty: each entry becomes an empty file; fifo: a
named pipe; zero: a link to /dev/zero; sparse: a 20 GB sparse file.
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
        if how in ("fifo", "zero", "sparse"):
            os.remove(path)
            if how == "fifo":
                os.mkfifo(path)
            elif how == "zero":
                os.symlink("/dev/zero", path)
            else:
                with open(path, "wb") as f:
                    f.truncate(20 * 10**9)
            continue
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
