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
  forward run above;
- --attention-out (make_golden_attention.py): the same tensors as the
  reference's attention maps, weights within 1e-5, tokens and step counts
  equal, with the contract's dtypes; every destination's weights sum to 1
  (or, for a node not active at an ACT step, are all 0); fused and unfused
  export agree within 1e-5; the log-probs of a run with --attention-out are
  bit for bit those of a run without it.

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
ATTENTION_TOLERANCE = 1e-5
ATTENTION_DTYPES = {"attn": "F32", "tokens": "I64", "steps": "I32"}


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


def max_map_diff(a, b):
    """Largest |a - b| over the tensors both have (inf if shapes differ)."""
    worst = 0.0
    for name in set(a) & set(b):
        if a[name][1] != b[name][1]:
            return float("inf")
        worst = max([worst] + [abs(x - y) for x, y in zip(a[name][2],
                                                            b[name][2])])
    return worst


def row_sums_ok(maps):
    """Every [heads, dst, src] map's rows sum to 1, or are all 0."""
    for name, (_, shape, values) in maps.items():
        if not name.startswith("attn."):
            continue
        n = shape[2]
        for r in range(0, len(values), n or 1):
            total = sum(values[r:r + n])
            if not (abs(total - 1.0) < ATTENTION_TOLERANCE or
                    all(v == 0.0 for v in values[r:r + n])):
                return False
    return True


def check_attention(c, case, work, name, forward, fused):
    """--attention-out against the reference's maps."""
    want = safetensors_util.read(os.path.join(case, "attention.safetensors"))
    seqs = sorted({int(k.rsplit(".", 1)[1]) for k in want})
    arg = ",".join(map(str, seqs))
    maps = {}
    for tag, extra in (("fused", []), ("unfused", ["--no-fuse"])):
        out = os.path.join(work, "maps-%s.safetensors" % tag)
        logp = forward("attention-" + tag, "--attention-out", out,
                       "--attention-seqs", arg, *extra)
        maps[tag] = safetensors_util.read(out)
        if tag == "fused":
            c.check(logp == fused, "%s: --attention-out leaves the "
                    "log-probs bit for bit as they are" % name)
    got = maps["fused"]
    c.check(sorted(got) == sorted(want), "%s: attention maps: the "
            "reference's tensors (%d), no more" % (name, len(want)))
    c.check(all(got[k][0] == ATTENTION_DTYPES[k.split(".")[0]] for k in got),
            "%s: attention maps have the contract's dtypes" % name)
    exact = [k for k in want if not k.startswith("attn.")]
    c.check(all(k in got and got[k][1:] == want[k][1:] for k in exact),
            "%s: tokens and step counts == reference" % name)
    diff = max_map_diff({k: v for k, v in got.items() if k.startswith("attn")},
                        want)
    c.check(diff < ATTENTION_TOLERANCE,
            "%s: attention weights match the reference (max |d| %.2e)" %
            (name, diff))
    c.check(row_sums_ok(got), "%s: each destination's weights sum to 1" %
            name)
    diff = max_map_diff(maps["unfused"], got)
    c.check(diff < ATTENTION_TOLERANCE,
            "%s: fused and unfused export agree (max |d| %.2e)" % (name, diff))


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
    check_attention(c, case, work, name, forward, fused)
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
