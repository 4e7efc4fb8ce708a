"""gnnc.compile and Program: results against numpy references and
gnn-run, gradients against gnn-run --grad and finite differences, and bad
input as gnnc.Error."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gnnc
from conftest import EXAMPLES, ROOT, read_safetensors, tool, write_safetensors

GRAD = ROOT / "test" / "Integration" / "CPU" / "Inputs" / "grad.mlir"


def attention_text(heads, d, clamp=5.0):
    """DGL's attention layer (score, scaled exp, two sums, division) as a gnn
    program over a general graph."""
    scale = 1.0 / np.sqrt(d)
    t = f"tensor<?x{heads}x{d}xf32>"
    s = f"tensor<?x{heads}x1xf32>"
    return f"""
func.func @main(%g: !gnn.graph<general>, %q: {t}, %k: {t}, %v: {t}) -> {t} {{
  %score = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<general>, {t}, {t}) -> {s}
  %e = gnn.apply_edges %g, copy_e(%score) then [scale({scale:e}), clamp({-clamp:e}, {clamp:e}), exp] : (!gnn.graph<general>, {s}) -> {s}
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<general>, {t}, {s}, {s}) -> ({t}, {s})
  %o = gnn.apply_nodes(%wv, %z) {{
  ^bb0(%a: f32, %b: f32):
    %r = arith.divf %a, %b : f32
    gnn.yield %r : f32
  }} : ({t}, {s}) -> {t}
  return %o : {t}
}}
"""


def reference_attention(src, dst, num_dst, q, k, v, clamp=5.0):
    d = q.shape[-1]
    score = np.einsum("ehd,ehd->eh", k[src].astype(np.float64),
                      q[dst].astype(np.float64)) / np.sqrt(d)
    e = np.exp(np.clip(score, -clamp, clamp))
    wv = np.zeros((num_dst,) + v.shape[1:])
    z = np.zeros((num_dst, v.shape[1]))
    np.add.at(wv, dst, e[..., None] * v[src])
    np.add.at(z, dst, e)
    return wv / z[..., None]


def random_graph(rng, num_src, num_dst, edges):
    # Every destination has an in-edge, so that no division is by zero.
    dst = np.concatenate([np.arange(num_dst),
                          rng.integers(0, num_dst, edges)])
    src = rng.integers(0, num_src, dst.size)
    return gnnc.Graph.from_coo(src, dst, num_src=num_src, num_dst=num_dst)


@pytest.mark.parametrize("heads,d,n", [(1, 4, 1), (2, 8, 7), (4, 16, 33)])
@pytest.mark.parametrize("fuse", [True, False])
def test_attention_matches_numpy(heads, d, n, fuse):
    rng = np.random.default_rng(n)
    g = random_graph(rng, n, n, 3 * n)
    q, k, v = (rng.standard_normal((n, heads, d)).astype(np.float32)
               for _ in range(3))
    prog = gnnc.compile(attention_text(heads, d), fuse=fuse)
    out = prog(graph=g, q=q, k=k, v=v)
    assert list(out) == ["result0"]
    ref = reference_attention(g.src, g.dst, n, q, k, v)
    np.testing.assert_allclose(out["result0"], ref, rtol=1e-5, atol=1e-5)


def test_bipartite_graph_rows():
    rng = np.random.default_rng(3)
    g = random_graph(rng, 5, 3, 6)
    q = rng.standard_normal((3, 2, 4)).astype(np.float32)
    k, v = (rng.standard_normal((5, 2, 4)).astype(np.float32)
            for _ in range(2))
    out = gnnc.compile(attention_text(2, 4))(graph=g, q=q, k=k, v=v)
    np.testing.assert_allclose(out["result0"],
                               reference_attention(g.src, g.dst, 3, q, k, v),
                               rtol=1e-5, atol=1e-5)


def test_same_results_as_gnn_run(tmp_path):
    rng = np.random.default_rng(7)
    n = 9
    src, dst = np.meshgrid(np.arange(n), np.arange(n))
    src, dst = src.ravel(), dst.ravel()
    q, k, v = (rng.standard_normal((n, 8, 64)).astype(np.float32)
               for _ in range(3))
    write_safetensors(tmp_path / "g.safetensors",
                      {"src": src, "dst": dst,
                       "num_nodes": np.array(n, np.int64)})
    write_safetensors(tmp_path / "in.safetensors", {"q": q, "k": k, "v": v})
    program = EXAMPLES / "attention.mlir"
    tool("gnn-run", program, "--entry", "propagate_attention", "--graph",
         tmp_path / "g.safetensors", "--inputs", tmp_path / "in.safetensors",
         "--out", tmp_path / "out.safetensors")
    expected = read_safetensors(tmp_path / "out.safetensors")
    prog = gnnc.compile(program, entry="propagate_attention")
    out = prog(graph=gnnc.Graph.from_coo(src, dst), q=q, k=k, v=v)
    assert out.keys() == expected.keys()
    for name in out:
        np.testing.assert_array_equal(out[name], expected[name])


def grad_inputs(rng, n=6):
    g = random_graph(rng, n, n, 2 * n)
    x, y = (rng.standard_normal((n, 3)).astype(np.float32) for _ in range(2))
    ids = np.arange(n, dtype=np.int64)
    return g, x, y, ids


def test_grad_matches_gnn_run(tmp_path):
    rng = np.random.default_rng(11)
    g, x, y, ids = grad_inputs(rng)
    write_safetensors(tmp_path / "g.safetensors", g.tensors())
    write_safetensors(tmp_path / "in.safetensors",
                      {"x": x, "y": y, "ids": ids})
    tool("gnn-run", GRAD, "--grad", "--graph", tmp_path / "g.safetensors",
         "--inputs", tmp_path / "in.safetensors", "--out",
         tmp_path / "out.safetensors")
    expected = read_safetensors(tmp_path / "out.safetensors")
    grads = gnnc.compile(GRAD).grad(graph=g, x=x, y=y, ids=ids)
    assert grads.keys() == expected.keys()
    assert {"grad.x", "grad.y"} <= set(grads)
    for name in grads:
        np.testing.assert_array_equal(grads[name], expected[name])


def test_grad_matches_finite_differences():
    rng = np.random.default_rng(5)
    g, x, y, ids = grad_inputs(rng, 4)
    prog = gnnc.compile(GRAD)
    grads = prog.grad(graph=g, x=x, y=y, ids=ids)

    def loss(x):
        m = np.zeros((4, 3))
        np.add.at(m, g.dst, x[g.src].astype(np.float64) * y[g.dst])
        return np.tanh(m).sum()

    eps, numeric = 1e-6, np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        up, down = x.astype(np.float64), x.astype(np.float64)
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(grads["grad.x"], numeric, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(prog(graph=g, x=x, y=y, ids=ids)["result0"],
                               loss(x), rtol=1e-5)


def test_non_contiguous_and_list_inputs():
    rng = np.random.default_rng(2)
    g, x, y, ids = grad_inputs(rng)
    prog = gnnc.compile(GRAD)
    base = prog(graph=g, x=x, y=y, ids=ids)
    wide = np.asfortranarray(x)
    strided = np.repeat(y, 2, axis=1)[:, ::2]
    assert not strided.flags.c_contiguous
    out = prog(graph=g, x=wide, y=strided, ids=ids.tolist())
    for name in base:
        np.testing.assert_array_equal(out[name], base[name])


@pytest.mark.parametrize("change,message", [
    (lambda a: a.update(x=a["x"].astype(np.float64)), "dtype F64"),
    (lambda a: a.update(x=a["x"][:, :2].copy()), "x"),
    (lambda a: a.pop("y"), "no input named 'y'"),
    (lambda a: a.update(extra=np.zeros(2, np.float32)), "'extra' is not"),
    (lambda a: a.update(x=a["x"][:3].copy()), "rows"),
    (lambda a: a.update(x=np.zeros((2, 2), np.complex64)), "does not take"),
])
def test_bad_inputs_are_errors(change, message):
    rng = np.random.default_rng(1)
    g, x, y, ids = grad_inputs(rng)
    args = {"x": x, "y": y, "ids": ids}
    change(args)
    with pytest.raises(gnnc.Error, match=message):
        gnnc.compile(GRAD)(graph=g, **args)


def test_graph_errors():
    prog = gnnc.compile(GRAD)
    rng = np.random.default_rng(1)
    g, x, y, ids = grad_inputs(rng)
    with pytest.raises(gnnc.Error, match="takes a graph"):
        prog(x=x, y=y, ids=ids)
    with pytest.raises(gnnc.Error, match="must be a gnnc.Graph"):
        prog(graph="g", x=x, y=y, ids=ids)
    with pytest.raises(gnnc.Error, match="no graph parameter 'h'"):
        prog(graph={"h": g}, x=x, y=y, ids=ids)
    # The graph by its parameter's name.
    out = prog(g=g, x=x, y=y, ids=ids)
    assert "result0" in out


def test_invalid_programs_are_errors():
    with pytest.raises(gnnc.Error, match="undeclared SSA value"):
        gnnc.compile("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %u = arith.addf %v, %v : tensor<2xf32>\n"
                     "  return %u : tensor<2xf32>\n}\n")
    with pytest.raises(gnnc.Error, match="cannot read"):
        gnnc.compile("/nonexistent/program.mlir")
    with pytest.raises(gnnc.Error, match="no function 'nope'"):
        gnnc.compile(GRAD, entry="nope")
    with pytest.raises(gnnc.Error, match="first result must be the loss"):
        gnnc.compile(GRAD, entry="not_a_loss").grad(
            graph=gnnc.Graph.from_coo([0], [0]), x=np.zeros((1, 3), np.float32))
    with pytest.raises(gnnc.Error, match="device must be"):
        gnnc.compile(GRAD, device="tpu")
    with pytest.raises(gnnc.Error, match="threads"):
        gnnc.compile(GRAD, threads=0)
    with pytest.raises(gnnc.Error, match="path or a program"):
        gnnc.compile(42)


def test_too_long_a_program_is_an_error():
    # 250,000 operations at most (a chain of 10^6 compiled for minutes):
    # the function, 249,999 ops and its return are one too many.
    n = 249999
    lines = ["func.func @main(%x: f32) -> f32 {",
             "%v0 = arith.addf %x, %x : f32"]
    lines += ["%%v%d = arith.mulf %%v%d, %%x : f32" % (i, i - 1)
              for i in range(1, n)]
    lines += ["return %%v%d : f32" % (n - 1), "}"]
    with pytest.raises(gnnc.Error, match="'func.return' op is operation "
                       "250001 of the program; gnnc compiles programs of at "
                       "most 250000 operations"):
        gnnc.compile("\n".join(lines) + "\n")


def test_parser_hazard_does_not_crash_the_interpreter():
    # A use before its definition inside a region that then fails to parse:
    # MLIR's parser writes into freed memory (ParserQuarantine.h).
    text = ("func.func @main(%x: f32) -> f32 {\n"
            "  %u = arith.addf %v, %v : f32\n"
            "  %r = scf.execute_region -> f32 {\n"
            "    %v = arith.constant 1.0 : f32\n"
            "    %bad = arith.addf %v, %nope : f32\n"
            "    scf.yield %v : f32\n"
            "  }\n"
            "  return %r : f32\n}\n")
    for _ in range(3):
        with pytest.raises(gnnc.Error):
            gnnc.compile(text)


def test_closed_program():
    prog = gnnc.compile(GRAD)
    with prog:
        assert not prog.closed
    assert prog.closed
    with pytest.raises(gnnc.Error, match="closed"):
        prog(graph=gnnc.Graph.from_coo([0], [0]))
    with pytest.raises(gnnc.Error, match="closed"):
        prog.grad(graph=gnnc.Graph.from_coo([0], [0]))
    prog.close()  # a second close does nothing


def test_signature_and_cache():
    first = gnnc.compile(GRAD)
    names = [p["name"] for p in first.parameters]
    assert names == ["g", "x", "y", "ids"]
    assert first.parameters[1] == {"name": "x", "graph": False,
                                   "dtype": "F32", "shape": [None, 3]}
    assert gnnc.compile(GRAD).cache_hit
    assert not gnnc.compile(GRAD, cache_dir=False).cache_hit


def test_two_threads_run_at_once():
    rng = np.random.default_rng(9)
    g, x, y, ids = grad_inputs(rng, 40)
    programs = [gnnc.compile(GRAD, threads=1), gnnc.compile(GRAD, threads=2)]
    expected = programs[0](graph=g, x=x, y=y, ids=ids)["result1"]
    failures = []

    def work(prog):
        for _ in range(20):
            out = prog(graph=g, x=x, y=y, ids=ids)["result1"]
            if not np.allclose(out, expected, rtol=1e-6):
                failures.append("different results")

    threads = [threading.Thread(target=work, args=(p,)) for p in programs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def _import_order(first, second, **env):
    """Warnings of `import first; import second` in a fresh interpreter."""
    code = ("import warnings\nwarnings.simplefilter('always')\n"
            f"with warnings.catch_warnings(record=True) as caught:\n"
            f"    import {first}\n    import {second}\n"
            "print([str(w.message) for w in caught"
            " if issubclass(w.category, RuntimeWarning)])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, env={**os.environ, **env}, check=True)
    return result.stdout


def test_blas_kernels_loaded_before_gnnc_warn():
    # numpy loads OpenBLAS first, with Prescott's kernels: gnnc wanted
    # Sandybridge's and says why results may differ.
    out = _import_order("numpy", "gnnc", OPENBLAS_CORETYPE="Prescott",
                        GNNC_BLAS_CORETYPE="Sandybridge")
    assert "OpenBLAS was loaded before gnnc with its Prescott kernels" in out
    assert "import gnnc before numpy" in out
    # gnnc first: its kernels, no warning.
    out = _import_order("gnnc", "numpy", OPENBLAS_CORETYPE="Prescott",
                        GNNC_BLAS_CORETYPE="Sandybridge")
    assert out.strip() == "[]"
