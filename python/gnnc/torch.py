"""Fused attention as a PyTorch op with its backward.

``fused_attention(graph, q, k, v)`` is attention over a graph's edges:
for every destination node, the softmax over its in-edges of the scaled
scores ``scale * <k[src], q[dst]>`` (clamped to [-clamp, clamp] first, as
DGL's Transformer does, or the exact softmax with ``clamp=None``) weighs
the values ``v[src]``. gnnc compiles it to one fused kernel, and its
backward to gnnc's fused backward, which takes the forward's
log-sum-exp. The forward is registered with PyTorch as
``torch.ops.gnnc.fused_attention`` (and, with the log-sum-exp of each
destination, ``torch.ops.gnnc.fused_attention_lse``); gradients come through
``fused_attention``. Eagerly it is ``FusedAttention``, a
``torch.autograd.Function``. With PyTorch 2.4 or later the two ops are
``torch.library.custom_op``s with fake kernels and a registered autograd
(the backward is ``torch.ops.gnnc.fused_attention_grad``), which
``torch.compile`` captures in its graph (``fullgraph=True`` holds);
before 2.4, under ``torch.compile`` the call runs eagerly with a graph
break on each side.
"""

import math
import threading
from typing import Optional, Tuple

import torch

from ._core import Error
from ._program import Graph, compile as _compile

_DTYPES = {torch.float32: "f32", torch.float64: "f64"}
# PyTorch 2.4's custom ops: traced by torch.compile, autograd registered.
_IN_GRAPH = hasattr(torch.library, "custom_op") and hasattr(
    torch.library, "register_fake")
_programs = {}
_programs_lock = threading.Lock()


def _text(heads, d, dv, element, scale, clamp, backward):
    q = f"tensor<?x{heads}x{d}x{element}>"
    o = f"tensor<?x{heads}x{dv}x{element}>"
    lse = f"tensor<?x{heads}x1x{element}>"
    clamped = "" if clamp is None else f"clamp({-clamp:e}, {clamp:e}) "
    if not backward:
        # The output and each destination's log-sum-exp, which the backward
        # takes instead of recomputing it.
        return (f"func.func @main(%g: !gnn.graph<general>, %q: {q}, "
                f"%k: {q}, %v: {o}) -> ({o}, {lse}) {{\n"
                f"  %o, %lse = gnn.fused_attention %g, %q, %k, %v "
                f"scale({scale:e}) {clamped}normalize : "
                f"(!gnn.graph<general>, {q}, {q}, {o}) -> ({o}, {lse})\n"
                f"  return %o, %lse : {o}, {lse}\n}}\n")
    # The fused backward alone: one pass over each destination's in-edges,
    # one over each source's out-edges; no forward is run again.
    return (f"func.func @main(%g: !gnn.graph<general>, %q: {q}, %k: {q}, "
            f"%v: {o}, %go: {o}, %lse: {lse}) -> ({q}, {q}, {o}) {{\n"
            f"  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %go "
            f"scale({scale:e}) {clamped}normalize saved(%lse) : "
            f"(!gnn.graph<general>, {q}, {q}, {o}, {o}, {lse}) -> "
            f"({q}, {q}, {o})\n"
            f"  return %dq, %dk, %dv : {q}, {q}, {o}\n}}\n")


def _program(key, backward):
    """The compiled forward (or backward) of `key`, once."""
    with _programs_lock:
        program = _programs.get((key, backward))
        if program is None:
            program = _compile(_text(*key, backward))
            _programs[(key, backward)] = program
        return program


def _check(graph, q, k, v, clamp, scale):
    if not isinstance(graph, Graph):
        if hasattr(graph, "num_src_nodes") and hasattr(graph, "edges"):
            graph = Graph.from_dgl(graph)
        else:
            raise Error("graph must be a gnnc.Graph or a DGL graph, got "
                        f"{type(graph).__name__}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise Error(f"{name} must be a torch tensor")
        if t.dim() != 3:
            raise Error(f"{name} must be 3-D [nodes, heads, features], got "
                        f"shape {tuple(t.shape)}")
        if t.dtype not in _DTYPES:
            raise Error(f"{name} has dtype {t.dtype}; fused_attention takes "
                        "float32 or float64")
        if t.device.type != "cpu":
            raise Error(f"{name} is on {t.device}; this gnnc runs on the CPU")
    if not (q.dtype == k.dtype == v.dtype):
        raise Error("q, k and v must have one dtype")
    if q.shape[0] != graph.num_dst:
        raise Error(f"q has {q.shape[0]} rows, but the graph has "
                    f"{graph.num_dst} destination nodes")
    for name, t in (("k", k), ("v", v)):
        if t.shape[0] != graph.num_src:
            raise Error(f"{name} has {t.shape[0]} rows, but the graph has "
                        f"{graph.num_src} source nodes")
    if k.shape[1:] != q.shape[1:] or v.shape[1] != q.shape[1]:
        raise Error(f"q {tuple(q.shape)}, k {tuple(k.shape)} and v "
                    f"{tuple(v.shape)} do not fit: k must be shaped as q, and "
                    "v must have their heads")
    d = q.shape[2]
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    if clamp is not None:
        clamp = float(clamp)
        if not clamp > 0 or not math.isfinite(clamp):
            raise Error("clamp must be a positive number (None: no clamp)")
    key = (q.shape[1], d, v.shape[2], _DTYPES[q.dtype], scale, clamp)
    return graph, key


def _forward(graph, q, k, v, key):
    """The output and the log-sum-exp of each destination."""
    out = _program(key, False)(graph=graph, q=q.detach(), k=k.detach(),
                               v=v.detach())
    return out["result0"], out["result1"]


def _backward(graph, key, q, k, v, grad_out, lse):
    """The gradients of q, k and v: gnnc's fused backward, which takes the
    forward's log-sum-exp."""
    grads = _program(key, True)(graph=graph, q=q.detach(), k=k.detach(),
                                v=v.detach(), go=grad_out.detach().contiguous(),
                                lse=lse.detach())
    return grads["result0"], grads["result1"], grads["result2"]


class FusedAttention(torch.autograd.Function):
    """fused_attention's autograd: gnnc's fused forward and backward."""

    @staticmethod
    def forward(ctx, q, k, v, graph, key):
        out, lse = _forward(graph, q, k, v, key)
        ctx.save_for_backward(q, k, v, lse)
        ctx.graph, ctx.key = graph, key
        ctx.mark_non_differentiable(lse)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, lse = ctx.saved_tensors
        return (*_backward(ctx.graph, ctx.key, q, k, v, grad_out, lse), None,
                None)


def _run_eagerly(fn):
    """Under ``torch.compile`` (PyTorch 2), ``fn`` runs eagerly, its caller's
    graph broken around it: Dynamo cannot trace the graph's checks and the
    compiled programs inside (numpy arrays it cannot wrap), and autograd
    still takes the op's own backward. PyTorch 1 has no compiler."""
    disable = getattr(getattr(torch, "compiler", None), "disable", None)
    return disable(fn) if disable is not None else fn


def fused_attention(graph, q, k, v, clamp=5.0, scale=None):
    """Attention over `graph`'s edges: q [num_dst, heads, d], k and v
    [num_src, heads, d] (v may have its own width) -> [num_dst, heads,
    d_v]; ``scale`` defaults to 1/sqrt(d), ``clamp`` bounds the scaled
    scores (None: the exact softmax). Differentiable in q, k and v."""
    graph, key = _check(graph, q, k, v, clamp, scale)
    if _IN_GRAPH and torch.compiler.is_compiling():
        # Traced: the custom op and its registered autograd. (Eagerly, the
        # Function below does the same without the dispatcher's cost.)
        return torch.ops.gnnc.fused_attention_lse(
            torch.as_tensor(graph.src), torch.as_tensor(graph.dst),
            graph.num_src, graph.num_dst, q, k, v, key[5], key[4])[0]
    return FusedAttention.apply(q, k, v, graph, key)


if not _IN_GRAPH:
    fused_attention = _run_eagerly(fused_attention)


def _checked_op_arguments(src, dst, num_src, num_dst, q, k, v, clamp, scale):
    """The graph and program key of a registered op's arguments, checked as
    fused_attention checks its own (an op may be called directly)."""
    graph = Graph.from_coo(src, dst, num_src=num_src, num_dst=num_dst)
    return _check(graph, q, k, v, clamp, scale)


def _registered_forward_lse(src, dst, num_src, num_dst, q, k, v, clamp=5.0,
                            scale=None):
    # PyTorch leaves out arguments equal to the schema's defaults.
    graph, key = _checked_op_arguments(src, dst, num_src, num_dst, q, k, v,
                                       clamp, scale)
    return _forward(graph, q, k, v, key)


def _registered_backward(src, dst, num_src, num_dst, q, k, v, grad_out, lse,
                         clamp, scale):
    graph, key = _checked_op_arguments(src, dst, num_src, num_dst, q, k, v,
                                       clamp, scale)
    return _backward(graph, key, q, k, v, grad_out, lse)


def _registered_forward(src, dst, num_src, num_dst, q, k, v, clamp=5.0,
                        scale=None):
    return _registered_forward_lse(src, dst, num_src, num_dst, q, k, v,
                                   clamp, scale)[0]


def _meta_forward_lse(src, dst, num_src, num_dst, q, k, v, clamp=5.0,
                      scale=None):
    # Shapes alone, for tracers that run ops on meta (fake) tensors.
    heads = q.shape[1]
    return (q.new_empty((num_dst, heads, v.shape[2])),
            q.new_empty((num_dst, heads, 1)))


def _meta_forward(src, dst, num_src, num_dst, q, k, v, clamp=5.0,
                  scale=None):
    return _meta_forward_lse(src, dst, num_src, num_dst, q, k, v, clamp,
                             scale)[0]


def _register_custom_ops():
    """PyTorch 2.4's custom ops: the forward with its log-sum-exp, the
    backward, and the output alone, with fake kernels and the forward's
    autograd, so that torch.compile traces them into its graph."""
    Tensor = torch.Tensor

    @torch.library.custom_op("gnnc::fused_attention_lse", mutates_args=())
    def forward_lse(src: Tensor, dst: Tensor, num_src: int, num_dst: int,
                    q: Tensor, k: Tensor, v: Tensor,
                    clamp: Optional[float] = 5.0,
                    scale: Optional[float] = None) -> Tuple[Tensor, Tensor]:
        return _registered_forward_lse(src, dst, num_src, num_dst, q, k, v,
                                       clamp, scale)

    forward_lse.register_fake(_meta_forward_lse)

    @torch.library.custom_op("gnnc::fused_attention_grad", mutates_args=())
    def backward(src: Tensor, dst: Tensor, num_src: int, num_dst: int,
                 q: Tensor, k: Tensor, v: Tensor, grad_out: Tensor,
                 lse: Tensor, clamp: Optional[float],
                 scale: Optional[float]) -> Tuple[Tensor, Tensor, Tensor]:
        return _registered_backward(src, dst, num_src, num_dst, q, k, v,
                                    grad_out, lse, clamp, scale)

    @backward.register_fake
    def _(src, dst, num_src, num_dst, q, k, v, grad_out, lse, clamp, scale):
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)

    def setup_context(ctx, inputs, output):
        src, dst, num_src, num_dst, q, k, v, clamp, scale = inputs
        ctx.save_for_backward(src, dst, q, k, v, output[1])
        ctx.mark_non_differentiable(output[1])
        ctx.settings = (num_src, num_dst, clamp, scale)

    def differentiate(ctx, grad_out, _grad_lse):
        src, dst, q, k, v, lse = ctx.saved_tensors
        num_src, num_dst, clamp, scale = ctx.settings
        dq, dk, dv = torch.ops.gnnc.fused_attention_grad(
            src, dst, num_src, num_dst, q, k, v, grad_out, lse, clamp, scale)
        return None, None, None, None, dq, dk, dv, None, None

    forward_lse.register_autograd(differentiate, setup_context=setup_context)

    @torch.library.custom_op("gnnc::fused_attention", mutates_args=())
    def forward(src: Tensor, dst: Tensor, num_src: int, num_dst: int,
                q: Tensor, k: Tensor, v: Tensor,
                clamp: Optional[float] = 5.0,
                scale: Optional[float] = None) -> Tensor:
        return _registered_forward(src, dst, num_src, num_dst, q, k, v,
                                   clamp, scale)

    forward.register_fake(_meta_forward)


def _register_library_ops():
    """Older PyTorch: the forwards alone, with meta kernels; gradients come
    through FusedAttention."""
    library = torch.library.Library("gnnc", "DEF")
    library.define(
        "fused_attention(Tensor src, Tensor dst, int num_src, int num_dst, "
        "Tensor q, Tensor k, Tensor v, float? clamp=5.0, float? scale=None) "
        "-> Tensor")
    library.impl("fused_attention", _registered_forward, "CPU")
    # (PyTorch 1.13 passes meta tensors through no autograd kernel of its
    # own for a custom op: the meta kernel serves that key as well.)
    for key in ("Meta", "AutogradMeta"):
        library.impl("fused_attention", _meta_forward, key)
    # The output and each destination's log-sum-exp [num_dst, heads, 1],
    # which the backward takes.
    library.define(
        "fused_attention_lse(Tensor src, Tensor dst, int num_src, "
        "int num_dst, Tensor q, Tensor k, Tensor v, float? clamp=5.0, "
        "float? scale=None) -> (Tensor, Tensor)")
    library.impl("fused_attention_lse", _registered_forward_lse, "CPU")
    for key in ("Meta", "AutogradMeta"):
        library.impl("fused_attention_lse", _meta_forward_lse, key)
    return library


if _IN_GRAPH:
    _register_custom_ops()
else:
    _library = _register_library_ops()

__all__ = ["fused_attention", "FusedAttention"]
