#!/usr/bin/env python3
"""What the run-time value guards (gnn-guard-runtime-values) cost.

Two parts:

1. Guard sites in the models' programs: each example config's inference
   program (`gnn-run --emit-ir`) and training program (`gnn-train
   --emit-ir`) through `gnn-opt --gnn-guard-runtime-values`, counting the
   reports the pass inserts (calls of gnn_rt_bad_value) and the allocation
   bounds (calls of gnn_rt_allocation_limit_bytes). Their ops are gnn ops,
   whose lowerings check their own inputs, so the guards add nothing there.

2. Per guard, in programs made of upstream ops: a loop over N elements
   that reads a value at an index from the input (checked: a compare and
   a branch per read) against the same loop reading it at the loop's own
   index (provably in range: unchecked), both reading the same rows; and a loop of integer
   divisions by input divisors made odd (`ori 1`), signed (checked: MIN /
   -1; the range analysis sees that zero cannot occur) against unsigned
   (a nonzero divisor: unchecked), on non-negative dividends where both
   give the same quotients. Median of --repeats calls each, through the Python
   API.

  PYTHONPATH=build/python python3 bench/python/guard_cost_bench.py \\
      [--build build] [--n 10000000] [--repeats 15]
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

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# Rows (index, value) of one tensor: both forms read row i's index and a
# value, the checked one at the row the index names (here i itself), the
# other at row i.
INDEX_READS = """
func.func @main(%t: tensor<?x2xi64>) -> tensor<i64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %n = tensor.dim %t, %c0 : tensor<?x2xi64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> i64 {
    %k = tensor.extract %t[%i, %c0] : tensor<?x2xi64>
    %j = arith.index_cast %k : i64 to index
    %v = tensor.extract %t[AT, %c1] : tensor<?x2xi64>
    %a = arith.addi %acc, %v : i64
    %b = arith.addi %a, %k : i64
    scf.yield %b : i64
  }
  %r = tensor.from_elements %s : tensor<i64>
  return %r : tensor<i64>
}
"""

# Rows (a, b) of one tensor: a / (b | 1), signed (checked: the divisor
# may be -1, zero it cannot) or unsigned (the divisor is odd, hence not
# zero: unchecked).
DIVISIONS = """
func.func @main(%t: tensor<?x2xi64>) -> tensor<i64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %z = arith.constant 0 : i64
  %n = tensor.dim %t, %c0 : tensor<?x2xi64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> i64 {
    %p = tensor.extract %t[%i, %c0] : tensor<?x2xi64>
    %q = tensor.extract %t[%i, %c1] : tensor<?x2xi64>
    %odd = arith.ori %q, %one : i64
    %d = DIVIDE
    %r = arith.addi %acc, %d : i64
    scf.yield %r : i64
  }
  %r = tensor.from_elements %s : tensor<i64>
  return %r : tensor<i64>
}
"""


def guard_sites(gnn_opt, ir):
    """(reports, allocation bounds) the guard pass inserts into `ir`."""
    guarded = subprocess.run([gnn_opt, "--gnn-guard-runtime-values"],
                             input=ir, capture_output=True, text=True,
                             check=True).stdout
    return (len(re.findall(r"call @gnn_rt_bad_value", guarded)),
            len(re.findall(r"call @gnn_rt_allocation_limit_bytes", guarded)))


def model_programs(build):
    """(label, gnn IR) of each example model's inference and training
    programs."""
    tools = os.path.join(build, "bin")
    data = os.path.join(ROOT, "test", "Training", "Inputs")
    for name in ("copy", "sort-ut", "tutorial"):
        config = os.path.join(ROOT, "examples", name, "config.json")
        # The tutorial's config comes without weights: training only.
        if os.path.exists(os.path.join(os.path.dirname(config),
                                       "weights.safetensors")):
            run = subprocess.run([os.path.join(tools, "gnn-run"), "--config",
                                  config, "--emit-ir"], capture_output=True,
                                 text=True, check=True)
            yield f"{name}: inference", run.stdout
        train = subprocess.run(
            [os.path.join(tools, "gnn-train"), "--config", config,
             "--train-src", os.path.join(data, "src.txt"), "--train-tgt",
             os.path.join(data, "tgt.txt"), "--ids", "--emit-ir"],
            capture_output=True, text=True, check=True)
        yield f"{name}: training", train.stdout


def median_ms(program, repeats, **inputs):
    program(**inputs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        program(**inputs)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    if args.n < 1 or args.repeats < 1:
        sys.exit("guard_cost_bench: --n and --repeats must be at least 1")
    gnn_opt = os.path.join(args.build, "bin", "gnn-opt")
    if not os.access(gnn_opt, os.X_OK):
        sys.exit(f"guard_cost_bench: no gnn-opt at {gnn_opt}")

    print(f"{'program':<24} | {'reports':>7} {'alloc bounds':>12}")
    for label, ir in model_programs(args.build):
        reports, bounds = guard_sites(gnn_opt, ir)
        print(f"{label:<24} | {reports:>7} {bounds:>12}")
    print()

    cache = tempfile.mkdtemp(prefix="gnnc-guards-")
    rng = np.random.default_rng(0)
    n = args.n
    rows = np.stack([np.arange(n, dtype=np.int64),
                     rng.integers(-2**40, 2**40, n, dtype=np.int64)], axis=1)
    pairs = np.stack([rng.integers(0, 2**62, n, dtype=np.int64),
                      rng.integers(1, 2**20, n, dtype=np.int64)], axis=1)
    cases = [
        ("index reads", INDEX_READS, "AT", "%j", "%i",
         dict(t=rows)),
        ("integer divisions", DIVISIONS, "DIVIDE",
         "arith.divsi %p, %odd : i64", "arith.divui %p, %odd : i64",
         dict(t=pairs)),
    ]
    print(f"{'loop of ' + format(n, ','):<24} | {'checked':>10} "
          f"{'unchecked':>10} {'per element':>12}")
    for label, text, slot, checked, unchecked, inputs in cases:
        times, results = [], []
        for form, guarded in ((checked, True), (unchecked, False)):
            source = text.replace(slot, form)
            sites = guard_sites(gnn_opt, source)[0]
            if guarded != (sites > 0):
                sys.exit(f"guard_cost_bench: {label}: {sites} guard sites "
                         f"in the {'' if guarded else 'un'}checked form")
            program = gnnc.compile(source, cache_dir=cache)
            results.append(int(program(**inputs)["result0"]))
            times.append(median_ms(program, args.repeats, **inputs))
        if results[0] != results[1]:
            sys.exit(f"guard_cost_bench: {label}: the two forms disagree "
                     f"({results[0]} and {results[1]})")
        extra_ns = (times[0] - times[1]) * 1e6 / n
        print(f"{label:<24} | {times[0]:>7.2f} ms {times[1]:>7.2f} ms "
              f"{extra_ns:>+9.2f} ns")


if __name__ == "__main__":
    main()
