"""gnnc.train: bit-identical to gnn-train, epochs as dicts, early stops,
resume, and bad options as gnnc.Error."""

import pytest

import gnnc
from conftest import TRAINING, tool

CONFIG = TRAINING / "tiny.json"
DATA = dict(train_src=TRAINING / "src.txt", train_tgt=TRAINING / "tgt.txt")
OPTIONS = dict(ids=True, batch_size=6, threads=2, dropout=0.1)


def gnn_train(out_dir, *flags):
    return tool("gnn-train", "--config", CONFIG, "--ids", "--train-src",
                DATA["train_src"], "--train-tgt", DATA["train_tgt"],
                "--batch-size", 6, "--threads", 2, "--out-dir", out_dir,
                *flags)


@pytest.mark.parametrize("extra,flags", [
    ({"epochs": 2}, ["--epochs", 2]),
    ({"epochs": 2, "grad_accum": 2, "seed": 7}, ["--epochs", 2,
                                                 "--grad-accum", 2,
                                                 "--seed", 7]),
])
def test_weights_bit_identical_to_gnn_train(tmp_path, extra, flags):
    result = gnn_train(tmp_path / "tool", *flags)
    history = gnnc.train(CONFIG, out_dir=tmp_path / "py", **DATA,
                         **OPTIONS, **extra)
    assert len(history) == extra["epochs"]
    last = f"epoch-{extra['epochs']}.safetensors"
    assert ((tmp_path / "tool" / last).read_bytes() ==
            (tmp_path / "py" / last).read_bytes())
    lines = [l for l in result.stdout.splitlines() if l.startswith("epoch")]
    for line, epoch in zip(lines, history):
        # The same numbers but the timing.
        assert line.split(" | ")[0] == epoch["line"].split(" | ")[0]


def test_epoch_dicts_and_validation(tmp_path, capsys):
    seen = []
    history = gnnc.train(CONFIG, out_dir=None, valid_src=DATA["train_src"],
                         valid_tgt=DATA["train_tgt"], epochs=2, verbose=True,
                         callback=seen.append, **DATA, **OPTIONS)
    assert seen == history
    keys = {"train_loss", "train_acc", "valid_loss", "valid_acc", "seconds",
            "tokens_per_s", "step"}
    assert keys <= set(history[0])
    assert [h["epoch"] for h in history] == [1, 2]
    assert history[1]["step"] == 8
    assert capsys.readouterr().out.count("epoch ") == 2


def test_callback_stops_and_resume_continues(tmp_path):
    history = gnnc.train(CONFIG, out_dir=tmp_path / "a", epochs=3,
                         callback=lambda e: e["epoch"] < 1, **DATA, **OPTIONS)
    assert len(history) == 1
    assert (tmp_path / "a" / "epoch-1.safetensors").exists()
    assert not (tmp_path / "a" / "epoch-2.safetensors").exists()
    rest = gnnc.train(CONFIG, out_dir=tmp_path / "a", epochs=3, resume=True,
                      **DATA, **OPTIONS)
    assert [h["epoch"] for h in rest] == [2, 3]
    gnnc.train(CONFIG, out_dir=tmp_path / "b", epochs=3, **DATA, **OPTIONS)
    assert ((tmp_path / "a" / "epoch-3.safetensors").read_bytes() ==
            (tmp_path / "b" / "epoch-3.safetensors").read_bytes())


def test_callback_errors_propagate(tmp_path):
    with pytest.raises(ZeroDivisionError):
        gnnc.train(CONFIG, out_dir=None, epochs=2, callback=lambda e: 1 / 0,
                   **DATA, **OPTIONS)


@pytest.mark.parametrize("options,message", [
    ({"batch_size": 0}, "batch_size"),
    ({"dropout": 1.0}, "dropout"),
    ({"lr_factor": float("nan")}, "lr_factor"),
    ({"epochs": 0}, "epochs"),
    ({"threads": 0}, "threads"),
    ({"learning_rate": 1}, "unknown option 'learning_rate'"),
    ({"device": "tpu"}, "device"),
    ({"init": "x", "resume": True}, "takes no init"),
])
def test_bad_options_are_errors(options, message):
    opts = dict(OPTIONS, **options)
    with pytest.raises(gnnc.Error, match=message):
        gnnc.train(CONFIG, out_dir=None, **DATA, **opts)


def test_bad_files_are_errors(tmp_path):
    with pytest.raises(gnnc.Error):
        gnnc.train(tmp_path / "missing.json", out_dir=None, **DATA, **OPTIONS)
    with pytest.raises(gnnc.Error):
        gnnc.train(CONFIG, TRAINING / "src.txt", tmp_path / "missing.txt",
                   None, **OPTIONS)
    with pytest.raises(gnnc.Error, match="both valid_src and valid_tgt"):
        gnnc.train(CONFIG, out_dir=None, valid_src=TRAINING / "src.txt",
                   **DATA, **OPTIONS)
    with pytest.raises(gnnc.Error, match="train-state|state"):
        gnnc.train(CONFIG, out_dir=tmp_path / "empty", resume=True, **DATA,
                   **OPTIONS)
