"""gnnc.Transformer: the same outputs as gnn-run, and bad input as
gnnc.Error."""

import numpy as np
import pytest

import gnnc
from conftest import EXAMPLES, read_safetensors, tool, write_safetensors

MODELS = ["copy", "sort-ut"]


def source_lines(model, count=12):
    return (EXAMPLES / model / "test.src").read_text().splitlines()[:count]


@pytest.fixture(scope="module", params=MODELS)
def loaded(request):
    config = EXAMPLES / request.param / "config.json"
    return request.param, config, gnnc.Transformer.load(config, threads=2)


@pytest.mark.parametrize("mode", ["greedy", "beam"])
def test_decode_matches_gnn_run(loaded, mode, tmp_path):
    name, config, model = loaded
    lines = source_lines(name)
    (tmp_path / "src.txt").write_text("\n".join(lines) + "\n")
    expected = tool("gnn-run", "--config", config, "--src",
                    tmp_path / "src.txt", "--mode", mode, "--threads", 2,
                    "--batch-size", 5).stdout.splitlines()
    assert model.decode(lines, mode=mode, batch_size=5) == expected


def test_forward_matches_gnn_run(loaded, tmp_path):
    name, config, model = loaded
    lines = source_lines(name, 6)
    targets = ["<sos> " + line for line in model.decode(lines)]
    (tmp_path / "src.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "tgt.txt").write_text("\n".join(targets) + "\n")
    tool("gnn-run", "--config", config, "--src", tmp_path / "src.txt",
         "--tgt", tmp_path / "tgt.txt", "--mode", "forward", "--threads", 2,
         "--out", tmp_path / "out.safetensors")
    expected = read_safetensors(tmp_path / "out.safetensors")
    out = model.forward(lines, targets)
    assert out.keys() == expected.keys()
    for key in out:
        np.testing.assert_array_equal(out[key], expected[key])
    # Teacher forcing on the greedy output predicts it again.
    rows = np.cumsum([0] + [len(t.split()) for t in targets])
    best = out["log_probs"].argmax(1)
    assert best[rows[1] - 1] == 1  # <eos> after the first sequence


def test_attention_matches_gnn_run(loaded, tmp_path):
    name, config, model = loaded
    line = source_lines(name, 1)[0]
    target = "<sos> " + model.decode([line])[0]
    (tmp_path / "src.txt").write_text(line + "\n")
    (tmp_path / "tgt.txt").write_text(target + "\n")
    tool("gnn-run", "--config", config, "--src", tmp_path / "src.txt",
         "--tgt", tmp_path / "tgt.txt", "--mode", "forward", "--threads", 2,
         "--attention-out", tmp_path / "maps.safetensors", "--out",
         tmp_path / "out.safetensors")
    expected = read_safetensors(tmp_path / "maps.safetensors")
    for maps in (model.attention(line, target), model.attention(line)):
        assert maps.keys() == expected.keys()
        for key in maps:
            np.testing.assert_allclose(maps[key], expected[key], rtol=1e-6,
                                       atol=1e-7)


def test_bad_input_is_an_error(loaded):
    name, _, model = loaded
    line = source_lines(name, 1)[0]
    with pytest.raises(gnnc.Error, match="unknown token"):
        model.decode(["zzz"])
    with pytest.raises(gnnc.Error, match="list of lines"):
        model.decode(line)
    with pytest.raises(gnnc.Error, match="not a line"):
        model.decode([1, 2])
    with pytest.raises(gnnc.Error, match="mode must be"):
        model.decode([line], mode="sample")
    with pytest.raises(gnnc.Error, match="beam"):
        model.decode([line], mode="beam", beam=0)
    with pytest.raises(gnnc.Error, match="must begin with <sos>"):
        model.forward([line], [line])
    with pytest.raises(gnnc.Error, match="1 source lines but 2 target"):
        model.forward([line], ["<sos>", "<sos>"])
    with pytest.raises(gnnc.Error, match="more than max_len"):
        model.decode([" ".join([line] * 20)])
    assert model.decode([]) == []


def test_decoding_that_cannot_fit_is_refused():
    # 64 sequences x beam 1024 x 5000 positions: hundreds of GiB of caches,
    # refused before any is allocated (as gnn-run refuses it).
    model = gnnc.Transformer.load(EXAMPLES / "copy" / "config.json",
                                  threads=1, max_len=5000)
    line = source_lines("copy", 1)[0]
    with pytest.raises(gnnc.Error, match=r"decoding 64 sequences per batch x "
                       r"beam 1024 x 5000 positions needs about [0-9.]+ GiB "
                       r"for its caches, more than half of this machine's "
                       r"memory \([0-9.]+ GiB\); use a smaller batch_size, "
                       r"beam or max_len"):
        model.decode([line] * 100, mode="beam", beam=1024, max_len=5000)
    # Greedy needs a 1024th of that, and a shorter output less still.
    assert len(model.decode([line], max_len=20)) == 1


def test_missing_files_are_errors(tmp_path):
    with pytest.raises(gnnc.Error):
        gnnc.Transformer.load(tmp_path / "missing.json")
    with pytest.raises(gnnc.Error):
        gnnc.Transformer.load(EXAMPLES / "copy" / "config.json",
                              tmp_path / "missing.safetensors")
    with pytest.raises(gnnc.Error, match="device"):
        gnnc.Transformer.load(EXAMPLES / "copy" / "config.json",
                              device="gpu")


def test_nonfinite_weights_are_refused(tmp_path):
    config = EXAMPLES / "copy" / "config.json"
    weights = read_safetensors(EXAMPLES / "copy" / "weights.safetensors")
    bias = weights["encoder.norm.bias"].copy()
    bias[0] = np.inf
    weights["encoder.norm.bias"] = bias
    poisoned = tmp_path / "inf.safetensors"
    write_safetensors(poisoned, weights)
    with pytest.raises(gnnc.Error, match="'encoder.norm.bias' holds NaN or "
                       "infinity"):
        gnnc.Transformer.load(config, poisoned)
    model = gnnc.Transformer.load(config, poisoned, allow_nonfinite=True)
    assert len(model.decode(source_lines("copy", 1))) == 1
