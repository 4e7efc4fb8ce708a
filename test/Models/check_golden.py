"""Runs gnn-run on every golden case of test/Models/golden and checks it
against the PyTorch reference's results (make_golden.py):

- forward log-probs: max |got - want| < 1e-4, fused, unfused (--no-fuse),
  through the incremental decoder (--incremental), and with batch size 3
  (batch invariance: OpenBLAS picks its kernels by matrix size, so sums
  round differently, within the same 1e-4);
- fused and unfused agree within 1e-5 * max(1, |log-prob|) (the online
  softmax rounds differently from exp, sum and divide);
- greedy decoding and beam search (k = 4) equal the reference's (prefix
  recomputation), and beam search with --beam-size 1 equals greedy;
- the module --emit-ir prints round-trips through gnn-opt and, run as
  `gnn-run IR.mlir`, gives the same log-probs bit for bit;
- for a universal_transformer (golden-ut, make_golden_ut.py), the ACT step
  counts enc_steps / dec_steps equal the reference's exactly in every
  forward run above.

usage: check_golden.py GOLDEN_DIR TMP_DIR [CASE...]
Prints one line per check; exits non-zero if any fails.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts", "py"))
import safetensors_util  # noqa: E402

TOLERANCE = 1e-4
FUSED_VS_UNFUSED = 1e-5


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(args),
                                                     p.returncode, p.stderr))
    return p.stdout


def results(path):
    """log_probs as (shape, values), and the step counts (if any) as lists."""
    tensors = safetensors_util.read(path)
    _, shape, values = tensors["log_probs"]
    steps = {k: list(tensors[k][2]) for k in ("enc_steps", "dec_steps")
             if k in tensors}
    return (shape, values), steps


def max_diff(a, b):
    (sa, va), (sb, vb) = a, b
    if sa != sb:
        return float("inf")
    return max((abs(x - y) for x, y in zip(va, vb)), default=0.0)


def max_rel_diff(a, b):
    (sa, va), (sb, vb) = a, b
    if sa != sb:
        return float("inf")
    return max((abs(x - y) / max(1.0, abs(y)) for x, y in zip(va, vb)),
               default=0.0)


class Checker:
    def __init__(self):
        self.failures = 0

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures += 1


def check_case(c, golden, tmp, name):
    case = os.path.join(golden, name)
    work = os.path.join(tmp, name)
    os.makedirs(work, exist_ok=True)
    config = os.path.join(case, "config.json")
    src, tgt = os.path.join(case, "src.txt"), os.path.join(case, "tgt.txt")
    base = ["gnn-run", "--config", config, "--src", src, "--ids"]
    want, want_steps = results(os.path.join(case, "expected.safetensors"))
    with open(src) as f:
        sources = len(f.read().splitlines())

    def forward(tag, *extra, program=None):
        out = os.path.join(work, tag + ".safetensors")
        args = (base[:1] + ([program] if program else []) + base[1:] +
                ["--tgt", tgt, "--mode", "forward", "--out", out] +
                list(extra))
        run(args)
        got, steps = results(out)
        if want_steps:
            c.check(steps == want_steps,
                    "%s: %s step counts == reference" % (name, tag))
        return got

    fused = forward("fused")
    c.check(max_diff(fused, want) < TOLERANCE,
            "%s: forward matches the reference (max |d| %.2e)" %
            (name, max_diff(fused, want)))
    unfused = forward("unfused", "--no-fuse")
    c.check(max_diff(unfused, want) < TOLERANCE,
            "%s: --no-fuse matches the reference" % name)
    c.check(max_rel_diff(fused, unfused) < FUSED_VS_UNFUSED,
            "%s: fused and unfused agree within 1e-5 (max rel. d %.2e)" %
            (name, max_rel_diff(fused, unfused)))
    inc = forward("incremental", "--incremental")
    c.check(max_rel_diff(inc, fused) < FUSED_VS_UNFUSED,
            "%s: incremental decoder == full forward (max rel. d %.2e)" %
            (name, max_rel_diff(inc, fused)))
    got = forward("batch3", "--batch-size", "3")
    c.check(max_diff(got, fused) < TOLERANCE,
            "%s: --batch-size 3 gives the same log-probs (max |d| %.2e)" %
            (name, max_diff(got, fused)))

    greedy = run(base + ["--mode", "greedy"])
    with open(os.path.join(case, "greedy.txt")) as f:
        c.check(greedy == f.read(), "%s: greedy == reference greedy" % name)
    beam1 = run(base + ["--mode", "beam", "--beam-size", "1"])
    c.check(beam1 == greedy, "%s: beam k=1 == greedy" % name)
    greedy1 = run(base + ["--mode", "greedy", "--batch-size", "2"])
    c.check(greedy1 == greedy, "%s: greedy is batch invariant" % name)
    beam4 = run(base + ["--mode", "beam", "--beam-size", "4"])
    with open(os.path.join(case, "beam4.txt")) as f:
        c.check(beam4 == f.read(), "%s: beam k=4 == reference beam" % name)
    beam4b = run(base + ["--mode", "beam", "--beam-size", "4",
                         "--batch-size", "3"])
    c.check(beam4 == beam4b and len(beam4.splitlines()) == sources,
            "%s: beam k=4 gives one line per source, batch invariant" % name)

    ir = os.path.join(work, "model.mlir")
    with open(ir, "w") as f:
        f.write(run(["gnn-run", "--config", config, "--emit-ir"]))
    again = run(["gnn-opt", ir])
    c.check(again == open(ir).read(), "%s: --emit-ir round-trips" % name)
    from_ir = forward("from_ir", program=ir)
    c.check(from_ir == fused, "%s: gnn-run IR.mlir == built model" % name)


def main():
    golden, tmp = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or sorted(os.listdir(golden))
    shutil.rmtree(tmp, ignore_errors=True)
    c = Checker()
    for name in names:
        try:
            check_case(c, golden, tmp, name)
        except RuntimeError as e:
            c.check(False, "%s: %s" % (name, e))
    print("%d failure(s)" % c.failures)
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
