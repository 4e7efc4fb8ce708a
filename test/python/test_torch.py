"""gnnc.torch.fused_attention against PyTorch autograd on a reference
implementation (1e-5 in float32, gradcheck in float64), inside a training
loop and (PyTorch 2) under torch.compile, and bad input as gnnc.Error.
Skipped where PyTorch is not installed (CI installs Debian's python3-torch,
1.13, which has no torch.compile)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gnnc  # noqa: E402
import gnnc.torch as gt  # noqa: E402


def reference(src, dst, num_dst, q, k, v, clamp, scale):
    """Edge softmax attention written with PyTorch's own ops."""
    s = (k[src] * q[dst]).sum(-1) * scale
    if clamp is not None:
        s = s.clamp(-clamp, clamp)
    top = torch.full((num_dst, s.shape[1]), -float("inf"), dtype=s.dtype)
    top = top.scatter_reduce(0, dst[:, None].expand_as(s), s, reduce="amax")
    e = torch.exp(s - top[dst])
    z = torch.zeros(num_dst, s.shape[1], dtype=s.dtype).index_add(0, dst, e)
    wv = torch.zeros(num_dst, *v.shape[1:], dtype=s.dtype).index_add(
        0, dst, e[..., None] * v[src])
    return wv / z[..., None]


def inputs(seed, num_src, num_dst, heads, d, dv, dtype, extra_edges=10):
    gen = torch.Generator().manual_seed(seed)
    dst = torch.cat([torch.arange(num_dst),
                     torch.randint(0, num_dst, (extra_edges,), generator=gen)])
    src = torch.randint(0, num_src, dst.shape, generator=gen)
    make = lambda *shape: torch.randn(*shape, dtype=dtype, generator=gen,
                                      requires_grad=True)
    return (src, dst, make(num_dst, heads, d), make(num_src, heads, d),
            make(num_src, heads, dv))


@pytest.mark.parametrize("shape", [(7, 5, 2, 4, 4), (1, 1, 1, 8, 8),
                                   (12, 12, 3, 16, 8)])
@pytest.mark.parametrize("clamp", [5.0, None, 0.5])
def test_forward_and_backward_match_autograd(shape, clamp):
    num_src, num_dst, heads, d, dv = shape
    src, dst, q, k, v = inputs(1, num_src, num_dst, heads, d, dv,
                               torch.float32)
    g = gnnc.Graph.from_coo(src, dst, num_src=num_src, num_dst=num_dst)
    out = gt.fused_attention(g, q, k, v, clamp=clamp)
    ref = reference(src, dst, num_dst, q, k, v, clamp, d**-0.5)
    assert out.shape == (num_dst, heads, dv)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    go = torch.randn_like(out)
    ours = torch.autograd.grad(out, (q, k, v), go)
    theirs = torch.autograd.grad(ref, (q, k, v), go)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("clamp", [5.0, None])
def test_gradcheck_float64(clamp):
    src, dst, q, k, v = inputs(2, 6, 4, 2, 3, 3, torch.float64)
    g = gnnc.Graph.from_coo(src, dst, num_src=6, num_dst=4)
    assert torch.autograd.gradcheck(
        lambda q, k, v: gt.fused_attention(g, q, k, v, clamp=clamp,
                                           scale=0.7), (q, k, v))


def test_scores_beyond_float_range_with_exact_softmax():
    src, dst, q, k, v = inputs(3, 5, 5, 1, 4, 4, torch.float32)
    with torch.no_grad():
        q.mul_(100.0)
        k.mul_(100.0)
    g = gnnc.Graph.from_coo(src, dst, num_src=5, num_dst=5)
    out = gt.fused_attention(g, q, k, v, clamp=None)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(
        out, reference(src, dst, 5, q, k, v, None, 0.5), rtol=1e-4, atol=1e-4)


def large_score_case(edges, num_src, num_dst, heads, d, seed):
    """float64 leaves for `edges` (src, dst) with query and key rows x8:
    scores up to a few hundred."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.tensor([e[0] for e in edges])
    dst = torch.tensor([e[1] for e in edges])
    make = lambda n, f: (torch.randn(n, heads, d, dtype=torch.float64,
                                     generator=gen) * f).requires_grad_()
    q, k, v = make(num_dst, 8.0), make(num_src, 8.0), make(num_src, 1.0)
    go = torch.randn(num_dst, heads, d, dtype=torch.float64, generator=gen)
    return src, dst, q, k, v, go


def random_edges(num_src, num_dst, seed):
    """Each destination's in-edges from distinct sources (no repeated
    edge: equal scores of one key make cancellations exact or not by
    luck), every destination reached."""
    gen = torch.Generator().manual_seed(seed)
    edges = []
    for j in range(num_dst):
        degree = int(torch.randint(1, num_src + 1, (1,), generator=gen))
        picked = torch.randperm(num_src, generator=gen)[:degree]
        edges += [(int(i), j) for i in picked]
    return edges


@pytest.mark.parametrize("case", [
    # (edges, num_src, num_dst, heads, d): general graphs through the
    # per-destination loops (d 4: rows; d 8 and 16: chunks of edges), a
    # complete bipartite graph and two blocks of a batch through the tiles.
    (random_edges(7, 5, 0), 7, 5, 2, 4),
    (random_edges(12, 12, 1), 12, 12, 3, 16),
    (random_edges(40, 30, 2), 40, 30, 2, 16),
    (random_edges(9, 33, 3), 9, 33, 1, 8),
    ([(i, j) for j in range(20) for i in range(24)], 24, 20, 2, 16),
    ([(i + 10 * b, j + 10 * b) for b in range(2) for j in range(10)
      for i in range(j + 1)], 20, 20, 2, 8),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_with_large_scores_and_exact_softmax(case, seed):
    # float32 gradients against float64 autograd, within 10x of float32
    # PyTorch's own distance from float64 (or 1e-5, relative to each
    # tensor's largest gradient). exp(score - lse) from a float32
    # log-sum-exp alone left them 1e-4 to 1e-1 off here.
    edges, num_src, num_dst, heads, d = case
    src, dst, q, k, v, go = large_score_case(edges, num_src, num_dst, heads,
                                             d, seed)
    scale = d**-0.5
    exact = torch.autograd.grad(
        reference(src, dst, num_dst, q, k, v, None, scale), (q, k, v), go)
    leaves = lambda: [t.detach().float().requires_grad_() for t in (q, k, v)]
    theirs32 = leaves()
    theirs = torch.autograd.grad(
        reference(src, dst, num_dst, *theirs32, None, scale), theirs32,
        go.float())
    ours32 = leaves()
    g = gnnc.Graph.from_coo(src, dst, num_src=num_src, num_dst=num_dst)
    ours = torch.autograd.grad(
        gt.fused_attention(g, *ours32, clamp=None), ours32, go.float())
    for name, a, b, want in zip("qkv", ours, theirs, exact):
        err = lambda x: float((x.double() - want).abs().max() /
                              want.abs().max())
        assert err(a) <= max(1e-5, 10 * err(b)), (name, err(a), err(b))


def test_registered_op_matches():
    src, dst, q, k, v = inputs(4, 5, 3, 2, 4, 4, torch.float32)
    g = gnnc.Graph.from_coo(src, dst, num_src=5, num_dst=3)
    with torch.no_grad():
        direct = torch.ops.gnnc.fused_attention(src, dst, 5, 3, q, k, v, 5.0,
                                                None)
        torch.testing.assert_close(direct, gt.fused_attention(g, q, k, v))


def test_registered_ops_on_meta_tensors():
    # Tracers run ops on meta (fake) tensors: the ops give the shapes and
    # the dtype and compute nothing.
    src, dst = torch.tensor([0, 1, 2]), torch.tensor([0, 0, 1])
    q = torch.empty(2, 3, 4, device="meta")
    k = torch.empty(5, 3, 4, device="meta")
    v = torch.empty(5, 3, 6, device="meta", dtype=torch.float32)
    out = torch.ops.gnnc.fused_attention(src, dst, 5, 2, q, k, v, 5.0, None)
    assert out.device.type == "meta" and out.shape == (2, 3, 6)
    out, lse = torch.ops.gnnc.fused_attention_lse(src, dst, 5, 2, q, k, v,
                                                  None, 0.5)
    assert out.shape == (2, 3, 6) and lse.shape == (2, 3, 1)
    assert lse.device.type == "meta" and lse.dtype == q.dtype


def test_registered_op_with_log_sum_exp():
    # The forward the backward takes: the output, and each destination's
    # log-sum-exp of its (clamped, scaled) scores.
    src, dst, q, k, v = inputs(6, 5, 3, 2, 4, 4, torch.float64)
    g = gnnc.Graph.from_coo(src, dst, num_src=5, num_dst=3)
    scale = 0.5
    for clamp in (None, 0.3):
        with torch.no_grad():
            out, lse = torch.ops.gnnc.fused_attention_lse(src, dst, 5, 3, q, k,
                                                          v, clamp, scale)
        assert lse.shape == (3, 2, 1)
        torch.testing.assert_close(
            out, reference(src, dst, 3, q, k, v, clamp, scale),
            rtol=1e-10, atol=1e-10)
        s = (k[src] * q[dst]).sum(-1) * scale
        if clamp is not None:
            s = s.clamp(-clamp, clamp)
        want = torch.zeros(3, 2, dtype=s.dtype).index_add(0, dst, s.exp()).log()
        torch.testing.assert_close(lse[..., 0], want, rtol=1e-10, atol=1e-10)


def train_losses(attention, steps=30):
    torch.manual_seed(0)
    n, heads, d = 16, 2, 8
    src, dst = (t.ravel() for t in torch.meshgrid(torch.arange(n),
                                                  torch.arange(n),
                                                  indexing="ij"))
    x = torch.randn(n, heads * d)
    target = torch.randn(n, heads * d)
    proj = torch.nn.Linear(heads * d, 3 * heads * d)
    opt = torch.optim.Adam(proj.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        q, k, v = (t.contiguous()
                   for t in proj(x).view(n, 3, heads, d).unbind(1))
        out = attention(src, dst, n, q, k, v)
        loss = ((out.reshape(n, -1) - target)**2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_inside_a_training_loop():
    ours = train_losses(lambda src, dst, n, q, k, v: gt.fused_attention(
        gnnc.Graph.from_coo(src, dst), q, k, v))
    theirs = train_losses(lambda src, dst, n, q, k, v: reference(
        src, dst, n, q, k, v, 5.0, 8**-0.5))
    assert ours[-1] < ours[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)


@pytest.mark.skipif(not hasattr(torch, "compile"),
                    reason="torch.compile is PyTorch 2's")
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_inside_torch_compile(backend):
    # Traced into the graph (PyTorch 2.4's custom ops) or run eagerly with
    # a graph break on each side (before): either way what is traced
    # around it (a projection before, a tanh after) and the gradients
    # through all of it are as in eager mode.
    src, dst, q, k, v = inputs(7, 6, 4, 2, 8, 8, torch.float32)
    g = gnnc.Graph.from_coo(src, dst, num_src=6, num_dst=4)
    w = torch.randn(8, 8, requires_grad=True)

    def loss(q, k, v):
        return (gt.fused_attention(g, q @ w, k, v).tanh()**2).sum()

    torch._dynamo.reset()
    compiled = torch.compile(loss, backend=backend)
    for _ in range(2):  # compiled once, then run from the cache
        got = compiled(q, k, v)
        want = loss(q, k, v)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
        for a, b in zip(torch.autograd.grad(got, (q, k, v, w)),
                        torch.autograd.grad(want, (q, k, v, w))):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


needs_custom_ops = pytest.mark.skipif(
    not gt._IN_GRAPH, reason="torch.library.custom_op is PyTorch 2.4's")


@needs_custom_ops
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_traced_into_the_compiled_graph(backend):
    # fullgraph=True: no graph break anywhere, the op and its backward in
    # the compiled graphs; the loss and gradients of eager mode, for graphs
    # built from torch ids (read-only through DLPack) and from numpy.
    src, dst, q, k, v = inputs(11, 6, 4, 2, 8, 8, torch.float32)
    w = torch.randn(8, 8, requires_grad=True)
    for g in (gnnc.Graph.from_coo(src, dst, num_src=6, num_dst=4),
              gnnc.Graph.from_coo(src.numpy(), dst.numpy(), num_src=6,
                                  num_dst=4)):

        def loss(q, k, v):
            return (gt.fused_attention(g, q @ w, k, v,
                                       clamp=None).tanh()**2).sum()

        torch._dynamo.reset()
        compiled = torch.compile(loss, backend=backend, fullgraph=True)
        got, want = compiled(q, k, v), loss(q, k, v)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
        for a, b in zip(torch.autograd.grad(got, (q, k, v, w)),
                        torch.autograd.grad(want, (q, k, v, w))):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


@needs_custom_ops
def test_custom_ops_pass_opcheck():
    # PyTorch's own checks of a custom op: schema, fake kernel against the
    # real one, registered autograd, tracing through AOTAutograd.
    src, dst, q, k, v = inputs(12, 5, 3, 2, 4, 6, torch.float64)
    for clamp in (5.0, None):
        torch.library.opcheck(torch.ops.gnnc.fused_attention_lse.default,
                              (src, dst, 5, 3, q, k, v, clamp, 0.5))
        torch.library.opcheck(torch.ops.gnnc.fused_attention.default,
                              (src, dst, 5, 3, q.detach(), k.detach(),
                               v.detach(), clamp, 0.5))


def test_bad_input_is_an_error():
    src, dst, q, k, v = inputs(5, 5, 3, 2, 4, 4, torch.float32)
    g = gnnc.Graph.from_coo(src, dst, num_src=5, num_dst=3)
    with pytest.raises(gnnc.Error, match="destination nodes"):
        gt.fused_attention(g, k, k, v)
    with pytest.raises(gnnc.Error, match="3-D"):
        gt.fused_attention(g, q[0], k, v)
    with pytest.raises(gnnc.Error, match="one dtype"):
        gt.fused_attention(g, q.double(), k, v)
    with pytest.raises(gnnc.Error, match="float32 or float64"):
        gt.fused_attention(g, q.half(), k.half(), v.half())
    with pytest.raises(gnnc.Error, match="gnnc.Graph or a DGL graph"):
        gt.fused_attention("g", q, k, v)
    with pytest.raises(gnnc.Error, match="clamp"):
        gt.fused_attention(g, q, k, v, clamp=-1.0)
