"""Fails when a relative link in the README or any page under docs/ points
at a file that is not in the repository (or outside it).

usage: check_links.py REPO_ROOT
Checks Markdown links `[text](target)` whose target is not a URL or an
anchor; `#section` suffixes are ignored. Prints one line per broken link.
"""

import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def main():
    root = os.path.realpath(sys.argv[1])
    pages = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    for folder, subfolders, files in os.walk(docs):
        subfolders.sort()
        pages += [os.path.join(folder, f) for f in sorted(files)
                  if f.endswith(".md")]
    broken = 0
    for page in pages:
        text = open(page, encoding="utf-8").read()
        # Code spans and blocks are not links.
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        text = re.sub(r"`[^`]*`", "", text)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            full = os.path.realpath(os.path.join(os.path.dirname(page), path))
            inside = full == root or full.startswith(root + os.sep)
            if not inside or not os.path.exists(full):
                print("%s: broken link %s" % (os.path.relpath(page, root),
                                              target))
                broken += 1
    print("%d pages, %d broken links" % (len(pages), broken))
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
