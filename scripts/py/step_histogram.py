"""Prints how many ACT steps the nodes of a Universal Transformer were
active: the histogram of enc_steps and dec_steps in a gnn-run forward
output (gnn-run --mode forward --out FILE).

usage: step_histogram.py FORWARD.safetensors
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_util  # noqa: E402


def main():
    tensors = safetensors_util.read(sys.argv[1])
    rows = []
    for name in ("enc_steps", "dec_steps"):
        if name not in tensors:
            sys.exit("error: %s has no %s (not a universal_transformer "
                     "forward output)" % (sys.argv[1], name))
        rows.append((name, [int(s) for s in tensors[name][2]]))
    top = max(max(steps, default=0) for _, steps in rows)
    print("| steps | " + " | ".join(str(s) for s in range(1, top + 1)) +
          " | mean |")
    print("|---|" + "---:|" * (top + 1))
    for name, steps in rows:
        counts = [steps.count(s) for s in range(1, top + 1)]
        mean = sum(steps) / max(len(steps), 1)
        print("| %s (%d nodes) | %s | %.2f |" %
              (name, len(steps), " | ".join(map(str, counts)), mean))


if __name__ == "__main__":
    main()
