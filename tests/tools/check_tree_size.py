#!/usr/bin/env python3
"""The working tree stays small enough to travel: its files (those git tracks, and the untracked ones
.gitignore does not exclude: what a copy of the working tree carries) add up to at most the limit, so
a machine lent for a GPU check, which receives at most 64 MiB, gets the tree with room beside it for a
build's carried files. results/ keeps only what the docs, tests and README cite (results/README.md).
usage: check_tree_size.py ROOT [--limit-mib N] [--top K]   (default 40 MiB, the 10 largest files named)
Exit 0: within the limit; 1: over it (the largest files named); 77: ROOT is not a git checkout."""
import argparse
import os
import subprocess
import sys

MIB = 1024 * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--limit-mib", type=float, default=40.0)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        print("Skipped: %s is not a git checkout" % root)
        return 77
    sizes = {}
    for rel in out.decode("utf-8", "surrogateescape").split("\0"):
        path = os.path.join(root, rel)
        if rel and rel not in sizes and os.path.isfile(path) and not os.path.islink(path):
            sizes[rel] = os.lstat(path).st_size       # a file deleted but still tracked travels as nothing
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))[:a.top]
    listing = "\n".join("  %8.2f MiB  %s" % (n / MIB, rel) for rel, n in largest)
    if total > a.limit_mib * MIB:
        print("FAIL: the working tree holds %.1f MiB in %d files, over its limit of %g MiB (a lent GPU machine "
              "receives at most 64 MiB of it, a build's carried files included); the largest files:\n%s\n"
              "results/ keeps only what the docs, tests and README cite, one file per machine and purpose "
              "(results/README.md); move a run of your own to results/local/ (ignored)."
              % (total / MIB, len(sizes), a.limit_mib, listing))
        return 1
    print("PASS: the working tree holds %.1f MiB in %d files (limit %g MiB); the largest:\n%s"
          % (total / MIB, len(sizes), a.limit_mib, listing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
