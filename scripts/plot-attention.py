#!/usr/bin/python3
"""Draws the attention maps that gnn-run --attention-out writes.

    plot-attention.py FILE... --out-dir DIR [--seq S] [--format png|pdf]
                      [--head H] [--vocab VOCAB]

From one file: for each kind (enc, dec, e2d) and layer (or ACT step) of
sequence S, a figure with one heatmap per head (or only head H): source
tokens along x, destination tokens along y, one colour scale shared by the
figure's panels, titled with the layer, kind and head:
DIR/attn-<kind>-<layer>-seq<S>.<format>. For a Universal Transformer also
the histogram of ACT steps per node, encoder and decoder:
DIR/act-steps-seq<S>.<format>.

From several files (one per training checkpoint, in order): for each kind
and layer, an animated GIF of head H (default 0) across the files,
DIR/attn-<kind>-<layer>-seq<S>-head<H>.gif; for a Universal Transformer,
DIR/act-steps-seq<S>-series.<format>: the step histograms of every file.

S defaults to the smallest sequence in the (first) file. Tokens are ids, or
the words of VOCAB (a model config's vocab file: one token per line from id
3, after <sos>, <eos> and <pad>). Every
PNG carries its number of heatmap panels as the text field "panels".
Errors are one line on stderr and exit code 1.

Needs matplotlib and Pillow (Debian: python3-matplotlib python3-pil).
"""

import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "py"))
import safetensors_util  # noqa: E402

KINDS = {"enc": "encoder self-attention", "dec": "decoder self-attention",
         "e2d": "encoder-decoder attention"}
NAME = re.compile(r"^attn\.(enc|dec|e2d)\.(\d+|step\d+)\.(\d+)$")
PANEL_INCHES = 2.6


class Failure(Exception):
    pass


def load(path):
    try:
        tensors = safetensors_util.read(path)
    except OSError as e:
        raise Failure("cannot read '%s': %s" % (path, e.strerror or e))
    except Exception:  # any malformed header or body
        raise Failure("'%s' is not a safetensors file" % path)
    return tensors


def sequences(tensors):
    return sorted({int(m.group(3)) for m in map(NAME.match, tensors) if m})


def layer_key(layer):
    """Layers in order: 0, 1, ... or step0, step1, ..."""
    return int(layer[4:]) if layer.startswith("step") else int(layer)


def maps_of(tensors, path, seq):
    """{(kind, layer): (heads, rows, cols, values)} of sequence `seq`."""
    found = {}
    for name, (dtype, shape, values) in tensors.items():
        m = NAME.match(name)
        if not m or int(m.group(3)) != seq:
            continue
        if dtype != "F32" or len(shape) != 3:
            raise Failure("%s: '%s' is not a float32 [heads, destinations, "
                          "sources] tensor" % (path, name))
        found[(m.group(1), m.group(2))] = (shape, values)
    if not found:
        have = sequences(tensors)
        raise Failure("%s has no attention maps of sequence %d (%s)" % (
            path, seq, "it has " + ", ".join(map(str, have)) if have
            else "it has none: write it with gnn-run --attention-out"))
    return found


def tokens_of(tensors, path, seq, side, vocab):
    name = "tokens.%s.%d" % (side, seq)
    if name not in tensors:
        raise Failure("%s has no '%s'" % (path, name))
    ids = [int(t) for t in tensors[name][2]]
    if vocab is None:
        return [str(t) for t in ids]
    return [vocab[t] if 0 <= t < len(vocab) else "<%d>" % t for t in ids]


def steps_of(tensors, seq):
    out = {}
    for side in ("enc", "dec"):
        name = "steps.%s.%d" % (side, seq)
        if name in tensors:
            out[side] = [int(s) for s in tensors[name][2]]
    return out


def heads_to_draw(shape, head, path):
    if head is None:
        return list(range(shape[0]))
    if not 0 <= head < shape[0]:
        raise Failure("%s: --head %d is out of range: the model has %d "
                      "heads" % (path, head, shape[0]))
    return [head]


def grid(count):
    cols = min(4, count)
    return math.ceil(count / cols), cols


def draw_heatmap(ax, shape, values, head, xlabels, ylabels, vmax):
    _, rows, cols = shape
    start = head * rows * cols
    matrix = [values[start + r * cols:start + (r + 1) * cols]
              for r in range(rows)]
    image = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=vmax,
                      aspect="auto", interpolation="nearest")
    size = 7 if max(rows, cols) <= 20 else 5
    ax.set_xticks(range(cols))
    ax.set_xticklabels(xlabels, rotation=90, fontsize=size)
    ax.set_yticks(range(rows))
    ax.set_yticklabels(ylabels, fontsize=size)
    return image


def labels_for(kind, src, tgt):
    """(x: sources, y: destinations) tick labels of a kind."""
    if kind == "enc":
        return src, src
    if kind == "dec":
        return tgt, tgt
    return src, tgt


def save(fig, path, fmt, panels):
    try:
        if fmt == "png":
            fig.savefig(path, format="png", dpi=100,
                        metadata={"panels": str(panels)})
        else:
            fig.savefig(path, format="pdf")
    except OSError as e:
        raise Failure("cannot write '%s': %s" % (path, e.strerror or e))


def plot_file(plt, path, tensors, seq, fmt, head, vocab, out_dir):
    maps = maps_of(tensors, path, seq)
    src = tokens_of(tensors, path, seq, "src", vocab)
    tgt = tokens_of(tensors, path, seq, "tgt", vocab)
    written = []
    for (kind, layer) in sorted(maps, key=lambda k: (k[0], layer_key(k[1]))):
        shape, values = maps[(kind, layer)]
        heads = heads_to_draw(shape, head, path)
        rows, cols = grid(len(heads))
        fig, axes = plt.subplots(
            rows, cols, squeeze=False,
            figsize=(PANEL_INCHES * cols + 1.2, PANEL_INCHES * rows + 0.9),
            constrained_layout=True)
        vmax = max(values) if values and max(values) > 0 else 1.0
        xlabels, ylabels = labels_for(kind, src, tgt)
        image = None
        for i, ax in enumerate(axes.flat):
            if i >= len(heads):
                ax.axis("off")
                continue
            image = draw_heatmap(ax, shape, values, heads[i], xlabels,
                                 ylabels, vmax)
            ax.set_title("head %d" % heads[i], fontsize=9)
        what = ("ACT step %s" % layer[4:]) if layer.startswith("step") \
            else "layer %s" % layer
        # One panel is narrow: the title goes on two lines.
        gap = "\n" if cols == 1 else " "
        fig.suptitle("%s, %s,%s%s, sequence %d" % (what, kind, gap,
                                                   KINDS[kind], seq),
                     fontsize=10)
        fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
        out = os.path.join(out_dir, "attn-%s-%s-seq%d.%s" % (kind, layer, seq,
                                                              fmt))
        save(fig, out, fmt, len(heads))
        plt.close(fig)
        written.append(out)
    steps = steps_of(tensors, seq)
    if steps:
        out = os.path.join(out_dir, "act-steps-seq%d.%s" % (seq, fmt))
        plot_steps(plt, [steps], [os.path.basename(path)], seq, out, fmt)
        written.append(out)
    return written


def plot_steps(plt, series, names, seq, out, fmt):
    """Histograms of ACT steps per node: one panel per side, one set of bars
    (or, for a series, one line) per file."""
    sides = [s for s in ("enc", "dec") if any(s in steps for steps in series)]
    fig, axes = plt.subplots(1, len(sides), squeeze=False,
                             figsize=(4.2 * len(sides), 3.4),
                             constrained_layout=True)
    top = max(max(v, default=1) for steps in series for v in steps.values())
    for ax, side in zip(axes.flat, sides):
        x = list(range(1, top + 1))
        for steps, name in zip(series, names):
            counts = [steps.get(side, []).count(s) for s in x]
            if len(series) == 1:
                ax.bar(x, counts, color="tab:blue")
            else:
                ax.plot(x, counts, marker="o", label=name)
        ax.set_xticks(x)
        ax.set_xlabel("ACT steps")
        ax.set_ylabel("nodes")
        ax.set_title("%s nodes" % ("encoder" if side == "enc" else "decoder"),
                     fontsize=9)
        if len(series) > 1:
            ax.legend(fontsize=7)
    fig.suptitle("ACT steps per node, sequence %d" % seq, fontsize=10)
    save(fig, out, fmt, len(sides))
    plt.close(fig)


def plot_series(plt, paths, files, seq, fmt, head, vocab, out_dir):
    from matplotlib import animation

    all_maps = [maps_of(t, p, seq) for p, t in zip(paths, files)]
    src = tokens_of(files[0], paths[0], seq, "src", vocab)
    tgt = tokens_of(files[0], paths[0], seq, "tgt", vocab)
    for p, t in zip(paths[1:], files[1:]):
        if (tokens_of(t, p, seq, "src", vocab) != src or
                tokens_of(t, p, seq, "tgt", vocab) != tgt):
            raise Failure("%s holds another sequence %d than %s" %
                          (p, seq, paths[0]))
    head = 0 if head is None else head
    keys = sorted(set().union(*all_maps),
                  key=lambda k: (k[0], layer_key(k[1])))
    written = []
    for kind, layer in keys:
        frames = [m.get((kind, layer)) for m in all_maps]
        shape = next(f[0] for f in frames if f)
        heads_to_draw(shape, head, paths[0])
        fig, ax = plt.subplots(figsize=(PANEL_INCHES + 2.2,
                                        PANEL_INCHES + 1.4),
                               constrained_layout=True)
        xlabels, ylabels = labels_for(kind, src, tgt)
        zero = [0.0] * (shape[0] * shape[1] * shape[2])
        image = draw_heatmap(ax, shape, frames[0][1] if frames[0] else zero,
                             head, xlabels, ylabels, 1.0)
        fig.colorbar(image, ax=ax, label="attention weight")
        what = ("ACT step %s" % layer[4:]) if layer.startswith("step") \
            else "layer %s" % layer

        def update(i):
            _, rows, cols = shape
            values = frames[i][1] if frames[i] else zero
            start = head * rows * cols
            image.set_data([values[start + r * cols:start + (r + 1) * cols]
                            for r in range(rows)])
            ax.set_title("%s, %s, head %d\n%s (%d/%d)" % (
                what, kind, head, os.path.basename(paths[i]), i + 1,
                len(paths)), fontsize=9)
            return [image]

        update(0)
        anim = animation.FuncAnimation(fig, update, frames=len(paths),
                                       blit=False)
        out = os.path.join(out_dir, "attn-%s-%s-seq%d-head%d.gif" % (
            kind, layer, seq, head))
        try:
            anim.save(out, writer=animation.PillowWriter(fps=2), dpi=100)
        except OSError as e:
            raise Failure("cannot write '%s': %s" % (out, e.strerror or e))
        plt.close(fig)
        written.append(out)
    series = [steps_of(t, seq) for t in files]
    if all(series):
        out = os.path.join(out_dir, "act-steps-seq%d-series.%s" % (seq, fmt))
        plot_steps(plt, series, [os.path.basename(p) for p in paths], seq,
                   out, fmt)
        written.append(out)
    return written


def read_vocab(path):
    """A model config's vocab file: the tokens from id 3 on, after <sos>,
    <eos> and <pad>."""
    try:
        with open(path, encoding="utf-8") as f:
            return ["<sos>", "<eos>", "<pad>"] + [
                line.rstrip("\r\n") for line in f if line.strip()]
    except OSError as e:
        raise Failure("cannot read '%s': %s" % (path, e.strerror or e))


class Parser(argparse.ArgumentParser):
    """Usage errors are one-line errors with exit code 1 too."""

    def error(self, message):
        raise Failure(message)


def main(argv):
    parser = Parser(
        description="Draws gnn-run --attention-out maps (see docs/transformer.md, "
        "\"Attention maps\").")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--seq", type=int)
    parser.add_argument("--format", choices=("png", "pdf"), default="png")
    parser.add_argument("--head", type=int)
    parser.add_argument("--vocab")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import PIL  # noqa: F401  (GIF frames)
    except ImportError:
        raise Failure("matplotlib and Pillow are missing: install Debian's "
                      "python3-matplotlib python3-pil and run with "
                      "/usr/bin/python3")
    files = [load(p) for p in args.files]
    seq = args.seq
    if seq is None:
        have = sequences(files[0])
        if not have:
            raise Failure("%s holds no attention maps: write it with gnn-run "
                          "--attention-out" % args.files[0])
        seq = have[0]
    vocab = read_vocab(args.vocab) if args.vocab else None
    try:
        os.makedirs(args.out_dir, exist_ok=True)
    except OSError as e:
        raise Failure("cannot create '%s': %s" % (args.out_dir,
                                                  e.strerror or e))
    if len(files) == 1:
        written = plot_file(plt, args.files[0], files[0], seq, args.format,
                            args.head, vocab, args.out_dir)
    else:
        written = plot_series(plt, args.files, files, seq, args.format,
                              args.head, vocab, args.out_dir)
    for path in written:
        print(path)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Failure as e:
        sys.stderr.write("plot-attention.py: error: %s\n" % e)
        sys.exit(1)
