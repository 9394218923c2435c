#!/usr/bin/env python3
"""Planted twins of ci/doc-figures.py --check: each writes a doc with one defect into WORKDIR and runs
the check on it, which must fail (tests/tools/expect_fail.sh asserts exit 1 and the message).

usage: doc_figures_planted.py MODE SOURCE_DIR WORKDIR
  value        docs/vectorize.md with one figure changed (14.8 -> 14.2 GB/s): "... 18.4 GB/s not in FILE"
  unmarked     docs/vectorize.md with a measured claim added outside every block: "unmarked measured figure"
  dirty        a block naming a committed results file whose context.build.git_dirty is true
  uncommitted  a block naming a results file git does not track
The last two run in a scratch git repository made in WORKDIR, so they need no such file in the tree.
Exit 2 when the twin cannot be made (the planted text is gone from the doc: update this script).
"""
import json
import os
import shutil
import subprocess
import sys

VALUE_FROM, VALUE_TO = "| `axpy` | 14.8 GB/s |", "| `axpy` | 14.2 GB/s |"
CLAIM = "\nThe quick suite took 42.5 s of family time when measured on this machine.\n"


def run_check(src, root, doc):
    return subprocess.call([sys.executable, os.path.join(src, "ci", "doc-figures.py"), "--check", "--root", root, doc])


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=planted", "-c", "user.email=planted@example.invalid"] + list(args),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    mode, src, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if mode in ("value", "unmarked"):
        with open(os.path.join(src, "docs", "vectorize.md"), encoding="utf-8") as fh:
            text = fh.read()
        if mode == "value":
            if text.count(VALUE_FROM) != 1:
                print("cannot plant: %r is not in docs/vectorize.md once" % VALUE_FROM)
                return 2
            text = text.replace(VALUE_FROM, VALUE_TO)
        else:
            text += CLAIM
        doc = os.path.join(work, "vectorize.md")
        with open(doc, "w", encoding="utf-8") as fh:
            fh.write(text)
        return run_check(src, src, doc)
    if mode in ("dirty", "uncommitted"):
        if shutil.which("git") is None:
            print("Skipped: no git (the check needs it to tell committed files)")
            return 77
        git(work, "init", "-q")
        os.makedirs(os.path.join(work, "results"))
        results = {"schema": "gtb-results", "schema_version": 3,
                   "context": {"build": {"git_commit": "0" * 40, "git_dirty": mode == "dirty"}},
                   "records": [{"id": "x/y/z/cpu/n=1", "value": 12.34, "unit": "GB/s"}]}
        with open(os.path.join(work, "results", "r.json"), "w") as fh:
            json.dump(results, fh)
        with open(os.path.join(work, "doc.md"), "w") as fh:
            fh.write("# t\n\n<!-- figures: results/r.json -->\nThe copy ran at 12.3 GB/s.\n<!-- /figures -->\n")
        if mode == "dirty":
            git(work, "add", "results/r.json", "doc.md")
            git(work, "commit", "-q", "-m", "planted")
        return run_check(src, work, os.path.join(work, "doc.md"))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
