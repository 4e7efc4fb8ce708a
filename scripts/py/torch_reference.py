"""An independent PyTorch implementation of the model semantics.

It follows docs/models.md with dense, padded attention and
masks (no graphs), so it checks gnnc's graph formulation from the outside.
Parameter names are those of the state_dict the weights file holds. Used by
the golden-file generator (test/Models) and the example training scripts.
"""

import math

import torch
from torch import nn

SOS, EOS, PAD = 0, 1, 2


def sinusoid_table(rows, d):
    pos = torch.arange(rows, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) *
                    (-math.log(10000.0) / d))
    pe = torch.zeros(rows, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)[:, : d // 2]
    return pe


class Attention(nn.Module):
    def __init__(self, d, bias):
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(d, d, bias=bias)
                                     for _ in range(4))


class FeedForward(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w_1 = nn.Linear(d, d_ff)
        self.w_2 = nn.Linear(d_ff, d)

    def forward(self, x):
        return self.w_2(torch.relu(self.w_1(x)))


class Sublayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)


class Layer(nn.Module):
    def __init__(self, d, d_ff, bias, decoder):
        super().__init__()
        self.self_attn = Attention(d, bias)
        if decoder:
            self.src_attn = Attention(d, bias)
        self.feed_forward = FeedForward(d, d_ff)
        self.sublayer = nn.ModuleList(Sublayer(d)
                                      for _ in range(3 if decoder else 2))


class Stack(nn.Module):
    def __init__(self, n, d, d_ff, bias, decoder):
        super().__init__()
        self.layers = nn.ModuleList(Layer(d, d_ff, bias, decoder)
                                    for _ in range(n))
        self.norm = nn.LayerNorm(d)


class Embedding(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.lut = nn.Embedding(vocab, d)


class Generator(nn.Module):
    def __init__(self, d, vocab):
        super().__init__()
        self.proj = nn.Linear(d, vocab)


class PosTable(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("pe", sinusoid_table(5000, d).unsqueeze(0))


def config_defaults(config):
    c = dict(config)
    c.setdefault("max_len", 50)
    c.setdefault("score_clamp", 10)
    c.setdefault("cross_attention", "dgl")
    return c


class Transformer(nn.Module):
    """architecture "transformer"; bias: attention linears have biases."""

    def __init__(self, config, bias=True, pe_in_file=False):
        super().__init__()
        c = config_defaults(config)
        self.config = c
        d, n, ff = c["d_model"], c["layers"], c["d_ff"]
        self.d, self.h = d, c["heads"]
        self.encoder = Stack(n, d, ff, bias, decoder=False)
        self.decoder = Stack(n, d, ff, bias, decoder=True)
        self.src_embed = Embedding(c["src_vocab"], d)
        self.tgt_embed = Embedding(c["tgt_vocab"], d)
        self.generator = Generator(d, c["tgt_vocab"])
        if pe_in_file:
            self.pos_enc = PosTable(d)
        self.register_buffer("default_pe", sinusoid_table(c["max_len"], d),
                             persistent=False)

    def pe(self, length):
        if hasattr(self, "pos_enc"):
            return self.pos_enc.pe[0, :length]
        return self.default_pe[:length]

    # When a list, attend() appends (kind, weights [B,h,M,N]) of every
    # attention it computes: each edge's normalized weight e / z, 0 where
    # the mask has no edge.
    attention_log = None

    def attend(self, q, k, v, mask, kind=None):
        """q [B,M,d], k/v [B,N,d], mask [B,M,N] (True = edge)."""
        B, M, d = q.shape
        N = k.shape[1]
        h, dk = self.h, d // self.h
        q = q.view(B, M, h, dk).transpose(1, 2)
        k = k.view(B, N, h, dk).transpose(1, 2)
        v = v.view(B, N, h, dk).transpose(1, 2)
        score = q @ k.transpose(-1, -2) / math.sqrt(dk)  # [B,h,M,N]
        m = mask.unsqueeze(1)
        clamp = self.config["score_clamp"]
        if clamp is None:
            score = score.masked_fill(~m, float("-inf"))
            w = torch.softmax(score, dim=-1)
            w = torch.nan_to_num(w, nan=0.0)
            out = w @ v
        else:
            e = torch.exp(score.clamp(-clamp, clamp)) * m
            z = e.sum(-1, keepdim=True)
            z = torch.where(z > 0, z, torch.ones_like(z))
            out = (e @ v) / z
            w = e / z
        if self.attention_log is not None:
            self.attention_log.append((kind, w))
        return out.transpose(1, 2).reshape(B, M, d)

    def encode(self, src, src_len):
        B, N = src.shape
        valid = (torch.arange(N, device=src.device).unsqueeze(0) <
                 src_len.unsqueeze(1))
        mask = valid.unsqueeze(1) & valid.unsqueeze(2)
        x = self.src_embed.lut(src) * math.sqrt(self.d) + self.pe(N)
        n_layers = len(self.encoder.layers)
        for i, L in enumerate(self.encoder.layers):
            n = L.sublayer[0].norm(x)
            a = L.self_attn.linears
            x = x + a[3](self.attend(a[0](n), a[1](n), a[2](n), mask, "enc"))
            x = x + L.feed_forward(L.sublayer[1].norm(x))
            if i == n_layers - 1:
                x = self.encoder.norm(x)
        return x, valid

    def decode(self, mem, src_valid, tgt, tgt_len):
        B, M = tgt.shape
        valid = (torch.arange(M, device=tgt.device).unsqueeze(0) <
                 tgt_len.unsqueeze(1))
        causal = torch.ones(M, M, dtype=torch.bool, device=tgt.device).tril()
        self_mask = causal.unsqueeze(0) & valid.unsqueeze(1) & valid.unsqueeze(2)
        cross_mask = src_valid.unsqueeze(1) & valid.unsqueeze(2)
        y = self.tgt_embed.lut(tgt) * math.sqrt(self.d) + self.pe(M)
        n_layers = len(self.decoder.layers)
        mode = self.config["cross_attention"]
        for i, L in enumerate(self.decoder.layers):
            last = i == n_layers - 1
            n = L.sublayer[0].norm(y)
            s = L.self_attn.linears
            y = y + s[3](self.attend(s[0](n), s[1](n), s[2](n), self_mask,
                                     "dec"))
            if last:
                y = self.decoder.norm(y)
            A = s if mode == "shared" else L.src_attn.linears
            O = L.src_attn.linears if mode == "standard" else s
            q = A[0](L.sublayer[1].norm(y))
            y = y + O[3](self.attend(q, A[1](mem), A[2](mem), cross_mask,
                                     "e2d"))
            y = y + L.feed_forward(L.sublayer[2].norm(y))
            if last:
                y = self.decoder.norm(y)
        return torch.log_softmax(self.generator.proj(y), dim=-1)

    def forward(self, src, src_len, tgt, tgt_len):
        mem, src_valid = self.encode(src, src_len)
        return self.decode(mem, src_valid, tgt, tgt_len)


def pad_batch(seqs, pad=PAD):
    n = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), n), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, torch.tensor([len(s) for s in seqs])


def log_probs(model, srcs, tgts):
    """Teacher-forced log-probs, rows in input order: [sum len(tgt), V]."""
    src, src_len = pad_batch(srcs)
    tgt, tgt_len = pad_batch(tgts)
    with torch.no_grad():
        out = model(src, src_len, tgt, tgt_len)
    return torch.cat([out[i, : len(t)] for i, t in enumerate(tgts)])


def greedy(model, src_ids, max_len):
    """Greedy decoding by recomputing the prefix; returns the tokens."""
    out = [SOS]
    with torch.no_grad():
        while len(out) - 1 < max_len - 1:
            lp = log_probs(model, [src_ids], [out])
            tok = int(lp[-1].argmax())
            if tok == EOS:
                break
            out.append(tok)
    return out[1:]


class Halting(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear = nn.Linear(d, 1)
        self.norm = nn.LayerNorm(d)


class UniversalStack(nn.Module):
    def __init__(self, d, d_ff, bias, decoder):
        super().__init__()
        self.layer = Layer(d, d_ff, bias, decoder)
        self.norm = nn.LayerNorm(d)


class UniversalTransformer(nn.Module):
    """architecture "universal_transformer": one shared layer per side,
    applied with ACT halting; cross-attention is "shared"."""

    def __init__(self, config, bias=True, pe_in_file=False):
        super().__init__()
        c = config_defaults(config)
        c.setdefault("max_depth", 8)
        c.setdefault("act_threshold", 0.99)
        self.config = c
        d, ff = c["d_model"], c["d_ff"]
        self.d, self.h = d, c["heads"]
        self.encoder = UniversalStack(d, ff, bias, decoder=False)
        self.decoder = UniversalStack(d, ff, bias, decoder=True)
        self.src_embed = Embedding(c["src_vocab"], d)
        self.tgt_embed = Embedding(c["tgt_vocab"], d)
        self.generator = Generator(d, c["tgt_vocab"])
        self.halt_enc = Halting(d)
        self.halt_dec = Halting(d)
        if pe_in_file:
            self.pos_enc = PosTable(d)
            self.time_enc = PosTable(d)
        rows = max(c["max_len"], c["max_depth"])
        self.register_buffer("default_pe", sinusoid_table(rows, d),
                             persistent=False)

    def pe(self, length):
        if hasattr(self, "pos_enc"):
            return self.pos_enc.pe[0, :length]
        return self.default_pe[:length]

    def time_pe(self, steps):
        """[B, N] step counts -> [B, N, d] rows of the time table."""
        table = (self.time_enc.pe[0] if hasattr(self, "time_enc")
                 else self.default_pe)
        return table[steps]

    attention_log = None
    attend = Transformer.attend
    remainders = []

    def act(self, x, valid, layer_step, halting):
        """The ACT loop over one side. x [B, N, d]; valid [B, N]; layer_step
        (x, K, V, active) -> (x, K, V) runs the shared layer on active
        nodes. Returns the accumulated state s and the step counts."""
        c = self.config
        B, N, d = x.shape
        s = torch.zeros_like(x)
        r = torch.ones(B, N)
        sum_p = torch.zeros(B, N)
        steps = torch.zeros(B, N, dtype=torch.long)
        active = valid.clone()
        K = torch.zeros_like(x)
        V = torch.zeros_like(x)
        pos = self.pe(N).unsqueeze(0)
        for t in range(c["max_depth"]):
            if not bool(active.any()):
                break
            a = active.unsqueeze(-1)
            x = torch.where(a, x + pos + self.time_pe(steps), x)
            steps = steps + active.long()
            x, K, V = layer_step(x, K, V, active)
            p = torch.sigmoid(halting.linear(halting.norm(x))).squeeze(-1)
            p = torch.where(active, p, torch.zeros_like(p))
            sum_p = sum_p + p
            cont = active & (sum_p < c["act_threshold"]) & \
                (t < c["max_depth"] - 1)
            stop = active & ~cont
            s = s + torch.where(cont, p, torch.zeros_like(p)).unsqueeze(-1) * x
            s = s + torch.where(stop, r, torch.zeros_like(r)).unsqueeze(-1) * x
            r = torch.where(cont, 1 - sum_p, r)
            active = cont
        # Each valid node's remainder at the end of its loop (the ACT loss).
        self.remainders.append(r[valid])
        return s, steps

    def encode(self, src, src_len):
        B, N = src.shape
        valid = (torch.arange(N, device=src.device).unsqueeze(0) <
                 src_len.unsqueeze(1))
        edge = valid.unsqueeze(1) & valid.unsqueeze(2)  # [B, dst, src]
        L = self.encoder.layer
        a = L.self_attn.linears

        def step(x, K, V, active):
            n = L.sublayer[0].norm(x)
            m = active.unsqueeze(-1)
            K = torch.where(m, a[1](n), K)
            V = torch.where(m, a[2](n), V)
            mask = edge & active.unsqueeze(2)
            y = x + a[3](self.attend(a[0](n), K, V, mask, "enc"))
            y = y + L.feed_forward(L.sublayer[1].norm(y))
            return torch.where(m, y, x), K, V

        x = self.src_embed.lut(src) * math.sqrt(self.d)
        s, steps = self.act(x, valid, step, self.halt_enc)
        return self.encoder.norm(s), valid, steps

    def decode(self, mem, src_valid, tgt, tgt_len):
        B, M = tgt.shape
        valid = (torch.arange(M, device=tgt.device).unsqueeze(0) <
                 tgt_len.unsqueeze(1))
        causal = torch.ones(M, M, dtype=torch.bool, device=tgt.device).tril()
        self_edge = causal.unsqueeze(0) & valid.unsqueeze(1) & valid.unsqueeze(2)
        cross_edge = src_valid.unsqueeze(1) & valid.unsqueeze(2)
        L = self.decoder.layer
        a = L.self_attn.linears
        mk, mv = a[1](mem), a[2](mem)

        def step(y, K, V, active):
            n = L.sublayer[0].norm(y)
            m = active.unsqueeze(-1)
            K = torch.where(m, a[1](n), K)
            V = torch.where(m, a[2](n), V)
            z = y + a[3](self.attend(a[0](n), K, V,
                                     self_edge & active.unsqueeze(2), "dec"))
            q = a[0](L.sublayer[1].norm(z))
            z = z + a[3](self.attend(q, mk, mv,
                                     cross_edge & active.unsqueeze(2), "e2d"))
            z = z + L.feed_forward(L.sublayer[2].norm(z))
            return torch.where(m, z, y), K, V

        y = self.tgt_embed.lut(tgt) * math.sqrt(self.d)
        s, steps = self.act(y, valid, step, self.halt_dec)
        out = torch.log_softmax(self.generator.proj(self.decoder.norm(s)), -1)
        return out, steps

    def forward(self, src, src_len, tgt, tgt_len):
        self.remainders = []
        mem, src_valid, self.enc_steps = self.encode(src, src_len)
        out, self.dec_steps = self.decode(mem, src_valid, tgt, tgt_len)
        return out

    def act_loss(self, weight):
        """weight * the mean remainder over the last forward's encoder and
        decoder nodes (training.md)."""
        return weight * torch.cat(self.remainders).mean()


def attention_maps(model, srcs, tgts):
    """The attention maps of every sequence as gnn-run --attention-out
    names them: attn.<kind>.<layer>.<s> [heads, destinations, sources]
    (a UniversalTransformer: attn.<kind>.step<t>.<s> for t below the most
    ACT steps of that side's nodes of sequence s, rows of nodes not active
    at step t zero), tokens.src.<s>, tokens.tgt.<s> and for a
    UniversalTransformer steps.enc.<s> / steps.dec.<s>."""
    src, src_len = pad_batch(srcs)
    tgt, tgt_len = pad_batch(tgts)
    model.attention_log = []
    try:
        with torch.no_grad():
            model(src, src_len, tgt, tgt_len)
        log = model.attention_log
    finally:
        model.attention_log = None
    universal = isinstance(model, UniversalTransformer)
    maps = {}
    for s, (a, b) in enumerate(zip(srcs, tgts)):
        n, m = len(a), len(b)
        if universal:
            enc = model.enc_steps[s, :n].to(torch.int32)
            dec = model.dec_steps[s, :m].to(torch.int32)
            maps["steps.enc.%d" % s] = enc
            maps["steps.dec.%d" % s] = dec
            steps = {"enc": int(enc.max()), "dec": int(dec.max()),
                     "e2d": int(dec.max())}
        counts = {}
        for kind, w in log:
            i = counts.get(kind, 0)
            counts[kind] = i + 1
            if universal and i >= steps[kind]:
                continue
            dst, srcn = (n, n) if kind == "enc" else (m, m) if kind == "dec" \
                else (m, n)
            layer = ("step%d" % i) if universal else str(i)
            maps["attn.%s.%s.%d" % (kind, layer, s)] = \
                w[s, :, :dst, :srcn].contiguous().float()
        maps["tokens.src.%d" % s] = torch.tensor(a, dtype=torch.int64)
        maps["tokens.tgt.%d" % s] = torch.tensor(b, dtype=torch.int64)
    return maps


def beam(model, src_ids, k, alpha, max_len, margin=0.0):
    """Beam search by recomputing every prefix, as semantics.md states it:
    score = sum of log-probs / ((5 + len) / 6)^alpha with len the number of
    output tokens (<eos> included), finished hypotheses kept in the beam,
    stop when all k are finished or at max_len - 1 output tokens. Returns
    the best hypothesis's tokens, or None if two candidates at the beam's
    edge score within `margin` (a choice float rounding could flip)."""
    beams = [([SOS], 0.0, 0.0, max_len <= 1)]
    with torch.no_grad():
        while not all(b[3] for b in beams):
            cands = []
            for tokens, logp, score, done in beams:
                if done:
                    cands.append((tokens, logp, score, done))
                    continue
                lp = log_probs(model, [src_ids], [tokens])[-1].double()
                length = len(tokens)
                for tok in range(lp.shape[0]):
                    total = logp + float(lp[tok])
                    cands.append((tokens + [tok], total,
                                  total / ((5.0 + length) / 6.0) ** alpha,
                                  tok == EOS or length >= max_len - 1))
            cands.sort(key=lambda c: -c[2])
            if len(cands) > k and cands[k - 1][2] - cands[k][2] <= margin:
                return None
            if len(cands) > 1 and cands[0][2] - cands[1][2] <= margin:
                return None
            beams = cands[:k]
    out = beams[0][0][1:]
    return out[:-1] if out and out[-1] == EOS else out


# Training (training.md): label-smoothed loss, Noam schedule, Adam.

def smoothed_kl(lp, labels, eps):
    """KL(target || exp(lp)) summed over rows and classes, over the rows:
    lp [N, V] log-probs, labels [N]; target 1 - eps on the label,
    eps / (V - 2) on every other class but <pad>, rows labelled <pad> 0."""
    V = lp.shape[1]
    t = torch.full_like(lp, eps / (V - 2) if eps > 0 else 0.0)
    t.scatter_(1, labels.unsqueeze(1), 1 - eps)
    t[:, PAD] = 0
    t[labels == PAD] = 0
    # Terms with target 0 contribute 0 (and no gradient).
    log_t = torch.log(torch.where(t > 0, t, torch.ones_like(t)))
    return (t * (log_t - lp)).sum() / len(labels)


def batch_loss(model, pairs, eps):
    """The loss of (source, target) pairs, targets without <sos>/<eos>;
    also returns the teacher-forced log-probs rows and labels."""
    srcs = [s for s, _ in pairs]
    decs = [[SOS] + t for _, t in pairs]
    src, src_len = pad_batch(srcs)
    tgt, tgt_len = pad_batch(decs)
    out = model(src, src_len, tgt, tgt_len)
    lp = torch.cat([out[i, : len(d)] for i, d in enumerate(decs)])
    labels = torch.tensor(sum([t + [EOS] for _, t in pairs], []))
    return smoothed_kl(lp, labels, eps), lp, labels


def noam_rate(step, d_model, factor, warmup):
    return factor * (d_model ** -0.5 *
                     min(step ** -0.5, step * warmup ** -1.5))


def tie_weights(model):
    """One tensor for both embeddings and the generator, as DGL's example
    ties them."""
    model.src_embed.lut.weight = model.tgt_embed.lut.weight
    model.generator.proj.weight = model.tgt_embed.lut.weight
