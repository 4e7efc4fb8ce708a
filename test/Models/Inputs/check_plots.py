"""Reads plot-attention.py's images back and prints, one line per file:
its name, pixel size, the number of panels the PNG says it has, and the
number of heatmap panels counted in its pixels (runs of coloured pixels
wider and taller than tick labels and the colour bar); for a GIF its frame count.

usage: check_plots.py FILE...
"""

import os
import sys

from PIL import Image

WHITE = 245  # brighter in every channel counts as background
MIN_PANEL = 60  # pixels; tick labels and the colour bar are narrower


def coloured_runs(pixels):
    runs, run = [], 0
    for r, g, b in pixels:
        if min(r, g, b) < WHITE and max(r, g, b) - min(r, g, b) > 20:
            run += 1
        else:
            if run:
                runs.append(run)
            run = 0
    if run:
        runs.append(run)
    return [r for r in runs if r >= MIN_PANEL]


def count_panels(image):
    """Panels per row times panel rows: the most runs of heatmap pixels
    along any pixel row, and along any pixel column."""
    image = image.convert("RGB")
    px = image.load()
    across = max(len(coloured_runs(px[x, y] for x in range(image.width)))
                 for y in range(0, image.height, 4))
    down = max(len(coloured_runs(px[x, y] for y in range(image.height)))
               for x in range(0, image.width, 4))
    return across * down


def main():
    for path in sys.argv[1:]:
        image = Image.open(path)
        name = os.path.basename(path)
        if path.endswith(".gif"):
            print("%s %dx%d frames=%d" % (name, image.width, image.height,
                                          image.n_frames))
            continue
        print("%s %dx%d panels=%s counted=%d" % (
            name, image.width, image.height, image.text.get("panels"),
            count_panels(image)))


if __name__ == "__main__":
    main()
