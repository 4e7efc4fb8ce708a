#!/usr/bin/env python3
"""What a Python call of a compiled program costs over the tool's run.

One program (a row-wise affine map and a per-row sum over [rows, 64]) is
run three ways, with its compiled code in the compile cache:

  gnn-run process  the whole `gnn-run PROGRAM --inputs --out` process, as a
                   shell script calls it (start, parse, cache hit, run,
                   write), median wall time of --repeats processes;
  gnn-run run      the run inside gnn-run (its `ran in` median over
                   `--repeat 50`, the least of three processes): the
                   compiled code and its arguments;
  Python call      `prog(x=...)` from gnnc, median over 200 calls, numpy in
                   and out.

The Python call's overhead is its time less gnn-run's run. Rows: 1, 1k,
100k.

  PYTHONPATH=build/python python3 bench/python/call_overhead_bench.py \
      [--gnn-run build/bin/gnn-run] [--repeats N]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# gnnc first: it loads OpenBLAS with its kernels for this CPU, which numpy
# would otherwise load with OpenBLAS's own choice (docs/python.md).
import gnnc  # isort: skip
import numpy as np

PROGRAM = """
func.func @main(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>) {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %c = arith.constant 0.5 : f32
    %d = arith.constant 1.0 : f32
    %m = arith.mulf %a, %c : f32
    %r = arith.addf %m, %d : f32
    gnn.yield %r : f32
  } : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %s = gnn.sum_to %y : tensor<?x64xf32> -> tensor<?xf32>
  return %y, %s : tensor<?x64xf32>, tensor<?xf32>
}
"""


def save(path, tensors):
    """A safetensors file of float32 arrays."""
    import json
    import struct
    header, data = {}, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gnn-run", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "bin", "gnn-run"))
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    if args.repeats < 1:
        sys.exit("call_overhead_bench: --repeats must be at least 1")
    if not os.access(args.gnn_run, os.X_OK):
        sys.exit(f"call_overhead_bench: no gnn-run at {args.gnn_run}")
    work = tempfile.mkdtemp(prefix="gnnc-overhead-")
    env = dict(os.environ, GNNC_CACHE_DIR=os.path.join(work, "cache"))
    program = os.path.join(work, "program.mlir")
    with open(program, "w") as f:
        f.write(PROGRAM)
    # gnn-run first, for every size: once gnnc has run in this process, its
    # OpenMP threads spin for a while after each call and would take a
    # core from the gnn-run processes.
    sizes, arrays, tool = (1, 1000, 100000), {}, {}
    for rows in sizes:
        x = np.random.default_rng(rows).standard_normal((rows, 64)).astype(
            np.float32)
        arrays[rows] = x
        inputs = os.path.join(work, f"in-{rows}.safetensors")
        save(inputs, {"x": x})
        out = os.path.join(work, "out.safetensors")
        command = [args.gnn_run, program, "--inputs", inputs, "--out", out]
        subprocess.run(command, env=env, check=True, capture_output=True)
        walls = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True)
            walls.append((time.perf_counter() - start) * 1000)
        medians = []
        for _ in range(3):  # the least of three processes' medians
            timed = subprocess.run(command + ["--repeat", "50"], env=env,
                                   check=True, capture_output=True, text=True)
            ran = re.search(r"ran in ([0-9.]+) ms", timed.stderr)
            if not ran:
                sys.exit("call_overhead_bench: no run time in gnn-run's "
                         "summary: " + timed.stderr)
            medians.append(float(ran.group(1)))
        tool[rows] = (statistics.median(walls), min(medians))
    prog = gnnc.compile(PROGRAM, cache_dir=env["GNNC_CACHE_DIR"])
    print(f"{'rows':>7} | {'gnn-run process':>15} {'gnn-run run':>12} |"
          f" {'Python call':>11} {'overhead':>9}")
    for rows in sizes:
        x = arrays[rows]
        result = prog(x=x)
        if not np.allclose(result["result0"], x * 0.5 + 1, atol=1e-6):
            sys.exit("call_overhead_bench: wrong result from the Python call")
        calls = []
        for _ in range(200):
            start = time.perf_counter()
            prog(x=x)
            calls.append((time.perf_counter() - start) * 1000)
        call_ms = statistics.median(calls)
        wall_ms, run_ms = tool[rows]
        print(f"{rows:>7} | {wall_ms:>12.1f} ms {run_ms:>9.3f} ms |"
              f" {call_ms:>8.3f} ms {(call_ms - run_ms) * 1000:>6.0f} us")


if __name__ == "__main__":
    main()
