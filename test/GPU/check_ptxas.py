"""Assembles every .ptx file in a directory with ptxas -v for one
architecture and prints, per kernel, its registers, static shared memory
(dynamic shared memory is the launch's, not the kernel's) and spills,
then a summary line. Exits 1 if ptxas rejects a kernel.

    check_ptxas.py PTXAS ARCH DIR
"""

import glob
import os
import re
import subprocess
import sys

USAGE = re.compile(r"Used (\d+) registers")
SHARED = re.compile(r"(\d+) bytes smem")
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def main():
    ptxas, arch, directory = sys.argv[1:4]
    files = sorted(glob.glob(os.path.join(directory, "*.ptx")))
    if not files:
        sys.exit("check_ptxas.py: no .ptx files in " + directory)
    spilling = 0
    for path in files:
        run = subprocess.run([ptxas, "-arch=" + arch, "-v", path, "-o",
                              os.devnull], capture_output=True, text=True)
        name = os.path.splitext(os.path.basename(path))[0]
        if run.returncode != 0:
            print("kernel %s: rejected by ptxas\n%s" % (name, run.stderr))
            sys.exit(1)
        registers = USAGE.search(run.stderr)
        shared = SHARED.search(run.stderr)
        spills = SPILLS.search(run.stderr)
        stores, loads = (int(spills.group(1)), int(spills.group(2))) \
            if spills else (0, 0)
        spilling += stores + loads > 0
        print("kernel %s: %s registers, %s bytes shared memory, "
              "spill stores %d, spill loads %d" %
              (name, registers.group(1) if registers else "?",
               shared.group(1) if shared else "0", stores, loads))
    print("%d kernels accepted for %s, %d with spills" %
          (len(files), arch, spilling))


if __name__ == "__main__":
    main()
