"""Writes malformed model inputs for gnn-run into OUT_DIR, derived from the
golden case h1_l1_clamp10_dgl (whose config and weights are good)."""

import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "py"))
import safetensors_util  # noqa: E402

case = os.path.join(HERE, "..", "golden", "h1_l1_clamp10_dgl")
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
p = lambda name: os.path.join(out, name)  # noqa: E731
config = json.load(open(os.path.join(case, "config.json")))
good = os.path.join(case, "weights.safetensors")
weights = safetensors_util.read(good)


def write_config(name, **changes):
    c = dict(config, weights=os.path.abspath(good))
    for k, v in changes.items():
        if v is None and k != "score_clamp":
            c.pop(k, None)
        else:
            c[k] = v
    with open(p(name), "w") as f:
        json.dump(c, f)


def write_weights(name, tensors):
    safetensors_util.write(p(name), tensors)


write_config("good.json")
write_config("heads.json", heads=5)
write_config("layers.json", layers=-1)
write_config("unknown-key.json", dropout=0.1)
write_config("clamp.json", score_clamp="ten")
write_config("max-len.json", max_len=6000)
write_config("arch.json", architecture="lstm")
with open(p("not-json.json"), "w") as f:
    f.write('{"architecture": "transformer", ')
write_config("vocab.json", vocab=os.path.abspath(p("vocab.txt")))
# A token file smaller than the model's vocabulary: ids without a token.
write_config("tiny-vocab.json", vocab=os.path.abspath(p("tiny-vocab.txt")))
open(p("tiny-vocab.txt"), "w").close()
with open(p("vocab.txt"), "w") as f:
    f.write("\n".join("abcdefgh") + "\n")

missing = dict(weights)
del missing["decoder.layers.0.feed_forward.w_1.weight"]
write_weights("missing.safetensors", missing)
misshaped = dict(weights)
dtype, shape, values = misshaped["encoder.norm.weight"]
misshaped["encoder.norm.weight"] = (dtype, [shape[0] - 1], values[1:])
write_weights("misshaped.safetensors", misshaped)
f64 = dict(weights)
dtype, shape, values = f64["generator.proj.bias"]
f64["generator.proj.bias"] = ("F64", shape, values)
write_weights("f64.safetensors", f64)
data = open(good, "rb").read()
open(p("truncated.safetensors"), "wb").write(data[: len(data) // 2])
open(p("huge-header.safetensors"), "wb").write(struct.pack("<Q", 1 << 62) + b"{}")
open(p("short.safetensors"), "wb").write(b"\x01\x02")
header = b'{"encoder.norm.weight": {"dtype": "F32", "shape": [32], ' \
         b'"data_offsets": [0, 128000]}}'
open(p("offsets.safetensors"), "wb").write(struct.pack("<Q", len(header)) + header + b"\0" * 128)
header = b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, ' \
         b'"b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}'
open(p("overlap.safetensors"), "wb").write(struct.pack("<Q", len(header)) + header + b"\0" * 12)
open(p("garbage-header.safetensors"), "wb").write(struct.pack("<Q", 8) + b"not json")

lines = {
    "src.txt": "3 4 5\n7\n",
    "tgt.txt": "0 1 2\n0\n",
    "tgt-short.txt": "0 1 2\n",
    "tgt-nosos.txt": "0 1 2\n5 1\n",
    "src-range.txt": "3 4 13\n",
    "src-negative.txt": "3 -1\n",
    "src-word.txt": "3 x4 5\n",
    "src-long.txt": " ".join(["3"] * 15) + "\n",
    "src-empty-line.txt": "3 4\n\n5\n",
    "empty.txt": "",
    "tokens.txt": "a b c\nd\n",
    "tokens-unknown.txt": "a b z\n",
    "tiny.src": "<eos> <pad> <sos>\n<pad>\n<sos> <sos> <eos> <pad> <pad>\n",
    "tiny.tgt": "<sos> <pad>\n<sos>\n<sos> <eos>\n",
}
for name, text in lines.items():
    with open(p(name), "w") as f:
        f.write(text)

# Universal Transformer inputs, derived from golden-ut/h2_d8_t099_clamp10
# (max_depth 8, d_model 16).
ut_case = os.path.join(HERE, "..", "golden-ut", "h2_d8_t099_clamp10")
ut_config = json.load(open(os.path.join(ut_case, "config.json")))
ut_weights = safetensors_util.read(os.path.join(ut_case, "weights.safetensors"))


def write_ut(name, tensors, **changes):
    c = dict(ut_config, weights=os.path.abspath(p(name + ".safetensors")))
    c.update(changes)
    with open(p(name + ".json"), "w") as f:
        json.dump(c, f)
    write_weights(name + ".safetensors", tensors)


write_ut("ut-good", ut_weights)
# A time table with fewer rows than max_depth.
write_ut("ut-time", dict(ut_weights, **{
    "time_enc.pe": ("F32", [1, 5, 16], [0.0] * 80)}))
write_ut("ut-nohalt", {k: v for k, v in ut_weights.items()
                       if k != "halt_dec.linear.weight"})
write_ut("ut-depth", ut_weights, max_depth=0)
write_ut("ut-threshold", ut_weights, act_threshold="high")
write_ut("ut-cross", ut_weights, cross_attention="dgl")
