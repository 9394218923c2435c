#!/usr/bin/env python3
"""Every results file committed under results/ was measured from a clean tree (context.build.git_dirty
false), or results/README.md's table lists it as not clean ("**no**" in its row), so a file from a
dirty tree cannot be committed unnoticed.
usage: check_results_clean.py ROOT [RESULTS_DIR]   (RESULTS_DIR: default ROOT/results; the README is
read from it). Exit 0: all clean or declared; 1: a dirty file not declared; 77: ROOT is not a git checkout."""
import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: check_results_clean.py ROOT [RESULTS_DIR]")
    root = os.path.abspath(sys.argv[1])
    results = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else os.path.join(root, "results")
    try:
        listed = subprocess.run(["git", "-C", results, "ls-files", "--", "."], check=True, capture_output=True,
                                text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        print("Skipped: not a git checkout")
        sys.exit(77)
    with open(os.path.join(results, "README.md")) as fh:
        declared = {line.split("|")[1].strip().strip("`") for line in fh if line.startswith("|") and "**no**" in line}
    bad, seen = [], 0
    for rel in listed:
        if not rel.endswith(".json") or "/" in rel:
            continue
        seen += 1
        with open(os.path.join(results, rel)) as fh:
            doc = json.load(fh)
        dirty = doc.get("context", {}).get("build", {}).get("git_dirty")
        if dirty is not False and rel not in declared:
            bad.append(f"results/{rel}: context.build.git_dirty is {json.dumps(dirty)} and results/README.md does "
                       f"not list it as measured from a dirty tree: commit results from a clean tree only")
    for b in bad:
        print("FAIL:", b)
    if not bad:
        print(f"PASS: {seen} committed results files, each clean or declared in results/README.md")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
