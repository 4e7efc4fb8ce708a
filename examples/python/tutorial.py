"""The tutorial's flow in Python with gnnc: build the copy data, train the
tutorial model (printing the epoch lines), decode greedily and with beam
search, and draw one pair's attention maps.

    PYTHONPATH=build/python python3 examples/python/tutorial.py --out /tmp/tutorial
"""

import argparse
import pathlib
import subprocess
import sys

import gnnc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_data(out):
    for name, count, seed in (("train", 9000, 101), ("valid", 500, 102)):
        subprocess.run([sys.executable, str(ROOT / "examples" / "tasks.py"),
                        "copy", "--count", str(count), "--seed", str(seed),
                        "--out", str(out / name)], check=True)


def draw(maps, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        print("matplotlib is not installed: no picture")
        return
    names = sorted(k for k in maps if k.startswith("attn."))
    fig, axes = plt.subplots(1, len(names), figsize=(3 * len(names), 3))
    for ax, name in zip(axes, names):
        ax.imshow(maps[name].mean(0), cmap="viridis")  # mean over heads
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("source position", fontsize=7)
        ax.set_ylabel("destination position", fontsize=7)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(path)
    print(f"attention maps: {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("/tmp/gnnc-tutorial"))
    p.add_argument("--epochs", type=int, default=4)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    make_data(args.out)
    config = ROOT / "examples" / "tutorial" / "config.json"
    history = gnnc.train(config, args.out / "train.src", args.out / "train.ref",
                         args.out / "run", valid_src=args.out / "valid.src",
                         valid_tgt=args.out / "valid.ref", epochs=args.epochs,
                         lr_factor=1, warmup=400, tie_weights=True,
                         verbose=True)
    weights = args.out / "run" / f"epoch-{len(history)}.safetensors"
    model = gnnc.Transformer.load(config, weights)
    sources = (args.out / "valid.src").read_text().splitlines()[:5]
    for mode in ("greedy", "beam"):
        print(f"{mode}:")
        for src, out in zip(sources, model.decode(sources, mode=mode)):
            print(f"  {src}  ->  {out}")
    draw(model.attention(sources[0]), args.out / "attention.png")


if __name__ == "__main__":
    main()
