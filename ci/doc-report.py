#!/usr/bin/env python3
"""Regenerates the sample report in docs/report.md from a committed results file.

usage: python3 ci/doc-report.py RESULTS.json [--gtb build/bin/gtb] [--doc docs/report.md] [--derive-findings]

The sample is `gtb report RESULTS.json` with its headings two levels down (it sits under the page's
"## Sample"), framed by the provenance markers ci/doc-figures.py checks: a figures block naming the
file, except the "What ran" section (counts of records, not measurements), which is marked
not-measured, and the verdict (predictions from the file's cost terms beside the measured steps),
which is marked predicted. Everything from the first marker after "## Sample" to the end of the page is replaced;
the paragraph introducing the sample is kept (it names the file: keep it in step by hand).
--derive-findings passes the same flag to gtb report: the findings derived again from the file's
records by this version's family binaries (a file written before a finding existed).
Exit status: 0 written, 2 bad usage or gtb report failed.
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--gtb", default=os.path.join(root, "build", "bin", "gtb"))
    ap.add_argument("--doc", default=os.path.join(root, "docs", "report.md"))
    ap.add_argument("--derive-findings", action="store_true")
    a = ap.parse_args()
    rel = os.path.relpath(os.path.abspath(a.results), root)
    run = subprocess.run([a.gtb, "report", rel] + (["--derive-findings"] if a.derive_findings else []), cwd=root,
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"doc-report: gtb report {rel} failed: {run.stderr.strip()}", file=sys.stderr)
        return 2
    report = re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", run.stdout, flags=re.M)
    open_fig, close_fig = f"<!-- figures: {rel} -->", "<!-- /figures -->"
    closing = {"figures": close_fig, "counts": "<!-- /not-measured -->", "verdict": "<!-- /predicted -->"}
    out, inside = [open_fig], "figures"
    for line in report.rstrip("\n").split("\n"):
        if line.startswith("#### "):
            want = ("counts" if re.match(r"^#### What ran$", line) else
                    "verdict" if re.match(r"^#### Verdict\b", line) else "figures")
            if want != inside:
                out.append(closing[inside])
                out.append({"figures": open_fig, "counts": "<!-- not-measured: counts of records, not measurements -->",
                            "verdict": f"<!-- predicted: {rel} -->"}[want])
                inside = want
        out.append(line)
    out.append(closing[inside])
    text = open(a.doc).read()
    head, sep, tail = text.partition("\n## Sample\n")
    if not sep:
        print(f"doc-report: {a.doc} has no '## Sample' section", file=sys.stderr)
        return 2
    intro = tail.split("\n<!-- ", 1)[0]
    with open(a.doc, "w") as fh:
        fh.write(head + sep + intro.rstrip("\n") + "\n\n" + "\n".join(out) + "\n")
    print(f"doc-report: the sample in {a.doc} is now gtb report {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
