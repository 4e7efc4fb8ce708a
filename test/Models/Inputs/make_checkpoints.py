"""Makes the PyTorch checkpoints that convert-checkpoint.test converts
(committed in checkpoints/; rerun only to change them; needs torch).

usage: make_checkpoints.py OUT_DIR
A 2-layer Transformer (d_model 16, 4 heads, d_ff 32, vocabularies of 9) with
the tutorial's tied tables (one tensor for the source embedding, the target
embedding and the generator), saved as DGL's example saves it
(torch.save(model.state_dict())): tied.pkl; the same under DataParallel's
"module." prefix with one weight stored transposed (a strided view):
dataparallel.pkl; a safetensors file from which a tied save dropped both
embedding tables: dropped.safetensors; and every tensor under its own name
as the reference: reference.safetensors; and a Universal Transformer
(universal.pkl, universal-reference.safetensors).
"""

import collections
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "scripts", "py"))
import safetensors_util  # noqa: E402

D, H, FF, V, LAYERS = 16, 4, 32, 9, 2


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(5)
    rand = lambda *shape: torch.randn(*shape, generator=g) * 0.3

    def layer(state, p, attns, sublayers):
        """One layer's tensors under prefix p, in a fixed order."""
        for a in attns:
            for j in range(4):
                state[p + "%s.linears.%d.weight" % (a, j)] = rand(D, D)
                state[p + "%s.linears.%d.bias" % (a, j)] = rand(D)
        state[p + "feed_forward.w_1.weight"] = rand(FF, D)
        state[p + "feed_forward.w_1.bias"] = rand(FF)
        state[p + "feed_forward.w_2.weight"] = rand(D, FF)
        state[p + "feed_forward.w_2.bias"] = rand(D)
        for j in range(sublayers):
            state[p + "sublayer.%d.norm.weight" % j] = 1 + rand(D)
            state[p + "sublayer.%d.norm.bias" % j] = rand(D)
    state = collections.OrderedDict()
    table = rand(V, D)
    state["src_embed.lut.weight"] = table
    state["tgt_embed.lut.weight"] = table
    state["generator.proj.weight"] = table
    state["generator.proj.bias"] = rand(V)
    for side, subs in (("encoder", 2), ("decoder", 3)):
        for i in range(LAYERS):
            attns = ["self_attn"] + (["src_attn"] if side == "decoder" else [])
            layer(state, "%s.layers.%d." % (side, i), attns, subs)
        state[side + ".norm.weight"] = 1 + rand(D)
        state[side + ".norm.bias"] = rand(D)
    torch.save(state, os.path.join(out, "tied.pkl"))

    parallel = collections.OrderedDict(
        ("module." + k, v) for k, v in state.items())
    w = "module.encoder.layers.1.feed_forward.w_2.weight"
    parallel[w] = state[w[len("module."):]].t().contiguous().t()
    assert not parallel[w].is_contiguous()
    torch.save(parallel, os.path.join(out, "dataparallel.pkl"))

    def f32(tensors):
        return {k: ("F32", list(v.shape), v.contiguous().flatten().tolist())
                for k, v in tensors.items()}
    safetensors_util.write(os.path.join(out, "reference.safetensors"),
                           f32(state))
    dropped = {k: v for k, v in state.items()
               if k not in ("src_embed.lut.weight", "tgt_embed.lut.weight")}
    safetensors_util.write(os.path.join(out, "dropped.safetensors"),
                           f32(dropped))

    # A Universal Transformer: one shared layer per side, halting units.
    ut = collections.OrderedDict()
    table = rand(V, D)
    ut["src_embed.lut.weight"] = table
    ut["tgt_embed.lut.weight"] = table
    ut["generator.proj.weight"] = table
    ut["generator.proj.bias"] = rand(V)
    for side, subs in (("encoder", 2), ("decoder", 3)):
        layer(ut, side + ".layer.", ["self_attn"], subs)
        ut[side + ".norm.weight"] = 1 + rand(D)
        ut[side + ".norm.bias"] = rand(D)
    for halt in ("halt_enc", "halt_dec"):
        ut[halt + ".linear.weight"] = rand(1, D)
        ut[halt + ".linear.bias"] = torch.tensor([0.5])
        ut[halt + ".norm.weight"] = 1 + rand(D)
        ut[halt + ".norm.bias"] = rand(D)
    torch.save(ut, os.path.join(out, "universal.pkl"))
    safetensors_util.write(os.path.join(out, "universal-reference.safetensors"),
                           f32(ut))


if __name__ == "__main__":
    main()
