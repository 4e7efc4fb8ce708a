"""Runs commands at the same time and fails if any of them fails.

usage: run_together.py N COMMAND...   (COMMAND run N times at once)
"""

import subprocess
import sys


def main():
    n, command = int(sys.argv[1]), sys.argv[2:]
    runs = [subprocess.Popen([a.replace("{i}", str(i)) for a in command],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for i in range(n)]
    failed = 0
    for i, run in enumerate(runs):
        out, _ = run.communicate()
        if run.returncode != 0:
            failed += 1
            sys.stdout.write("run %d failed (%d):\n%s" %
                             (i, run.returncode, out.decode()))
    print("%d of %d runs succeeded" % (n - failed, n))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
