"""The Transformer of semantics.md written the DGL way: one batched graph
holding every encoder and decoder node, the ee / ed / dd edges as id ranges
of it, node features as [nodes, ...] tensors, and attention as the
tutorial's propagate_attention with DGL's built-ins (apply_edges for the
score and its scaled exp, send_and_recv for the two sums, then the
division). Parameters are those of the PyTorch reference
(scripts/py/torch_reference.py), so both compute the same model."""

import math
import os
import sys

import dgl
import dgl.function as fn
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "py"))
from torch_reference import Transformer  # noqa: E402


def block_edges(lengths, causal=False):
    """Edges u -> v within each block of consecutive nodes (u <= v if
    causal), as (u, v) id tensors."""
    us, vs, base = [], [], 0
    for n in lengths:
        ids = torch.arange(n)
        u = ids.repeat(n)
        v = ids.repeat_interleave(n)
        if causal:
            keep = u <= v
            u, v = u[keep], v[keep]
        us.append(u + base)
        vs.append(v + base)
        base += n
    return torch.cat(us), torch.cat(vs)


def cross_edges(src_lens, tgt_lens, tgt_base):
    """Edges from every encoder node to every decoder node of the same
    example; decoder ids start at tgt_base."""
    us, vs, s0, t0 = [], [], 0, tgt_base
    for n, m in zip(src_lens, tgt_lens):
        us.append((torch.arange(n) + s0).repeat(m))
        vs.append((torch.arange(m) + t0).repeat_interleave(n))
        s0 += n
        t0 += m
    return torch.cat(us), torch.cat(vs)


class DGLTransformer(Transformer):
    def batch_graph(self, src_lens, tgt_lens):
        ne = sum(src_lens)
        ee = block_edges(src_lens)
        ed = cross_edges(src_lens, tgt_lens, ne)
        dd = block_edges(tgt_lens, causal=True)
        dd = (dd[0] + ne, dd[1] + ne)
        u = torch.cat([ee[0], ed[0], dd[0]])
        v = torch.cat([ee[1], ed[1], dd[1]])
        g = dgl.graph((u, v), num_nodes=ne + sum(tgt_lens))
        a, b = len(ee[0]), len(ee[0]) + len(ed[0])
        eids = {"ee": torch.arange(0, a), "ed": torch.arange(a, b),
                "dd": torch.arange(b, len(u))}
        return g, eids, ne

    def propagate_attention(self, g, eids):
        clamp = self.config["score_clamp"]
        dk = self.d // self.h
        g.apply_edges(fn.u_dot_v("k", "q", "score"), eids)
        g.apply_edges(lambda edges: {"score": torch.exp(
            (edges.data["score"] / math.sqrt(dk)).clamp(-clamp, clamp))},
            eids)
        g.send_and_recv(eids, fn.u_mul_e("v", "score", "v"),
                        fn.sum("v", "wv"))
        g.send_and_recv(eids, fn.copy_e("score", "score"),
                        fn.sum("score", "z"))

    def attend(self, g, eids, dst, q, src, k, v):
        """Attention of nodes `dst` (queries q) over `src` (keys k, values v)
        along edges eids; returns [len(dst), d]."""
        n, h, dk = g.num_nodes(), self.h, self.d // self.h

        def full(nodes, x):
            t = x.new_zeros(n, h, dk)
            t[nodes] = x.view(-1, h, dk)
            return t
        g.ndata["q"] = full(dst, q)
        g.ndata["k"] = full(src, k)
        g.ndata["v"] = full(src, v)
        self.propagate_attention(g, eids)
        out = g.ndata["wv"][dst] / g.ndata["z"][dst]
        return out.reshape(len(dst), self.d)

    def log_probs(self, srcs, tgts):
        """Teacher-forced log-probs [sum len(tgt), V], rows in input order."""
        with torch.no_grad():
            return self.forward_rows(srcs, tgts)

    def forward_rows(self, srcs, tgts):
        """log_probs() with autograd (training)."""
        assert self.config["cross_attention"] == "dgl"
        src_lens = [len(s) for s in srcs]
        tgt_lens = [len(t) for t in tgts]
        g, eids, ne = self.batch_graph(src_lens, tgt_lens)
        enc = torch.arange(ne)
        dec = torch.arange(ne, g.num_nodes())
        src_tok = torch.tensor([t for s in srcs for t in s])
        tgt_tok = torch.tensor([t for s in tgts for t in s])
        src_pos = torch.cat([torch.arange(n) for n in src_lens])
        tgt_pos = torch.cat([torch.arange(m) for m in tgt_lens])
        pe = self.pe(max(max(src_lens), max(tgt_lens)))
        sd = math.sqrt(self.d)
        x = self.src_embed.lut(src_tok) * sd + pe[src_pos]
        layers = self.encoder.layers
        for i, L in enumerate(layers):
            a = L.self_attn.linears
            n = L.sublayer[0].norm(x)
            x = x + a[3](self.attend(g, eids["ee"], enc, a[0](n), enc,
                                     a[1](n), a[2](n)))
            x = x + L.feed_forward(L.sublayer[1].norm(x))
        mem = self.encoder.norm(x)
        y = self.tgt_embed.lut(tgt_tok) * sd + pe[tgt_pos]
        layers = self.decoder.layers
        for i, L in enumerate(layers):
            last = i == len(layers) - 1
            s, c = L.self_attn.linears, L.src_attn.linears
            n = L.sublayer[0].norm(y)
            y = y + s[3](self.attend(g, eids["dd"], dec, s[0](n), dec,
                                     s[1](n), s[2](n)))
            if last:
                y = self.decoder.norm(y)
            q = c[0](L.sublayer[1].norm(y))
            y = y + s[3](self.attend(g, eids["ed"], dec, q, enc,
                                     c[1](mem), c[2](mem)))
            y = y + L.feed_forward(L.sublayer[2].norm(y))
            if last:
                y = self.decoder.norm(y)
        return torch.log_softmax(self.generator.proj(y), dim=-1)
