#!/usr/bin/env python3
"""doc-figures: every measured figure in gtb's docs comes from a committed results file, or says
where it was published.

Markers (HTML comments on lines of their own, outside tables and code fences):

  <!-- figures: FILE [FILE ...] [scope=GLOB[,GLOB...]] [labels=N] -->
  ... prose or a table quoting FILE ...
  <!-- /figures -->

  <!-- external: CITATION -->  ... figures published elsewhere ...  <!-- /external -->
  <!-- not-measured -->  ... numbers that are definitions, limits or parameters ...  <!-- /not-measured -->
  <!-- predicted: FILE -->  ... what a gtb command predicted from FILE (the report's verdict, gtb
  advise): FILE must be committed and clean like a figures block's, but a predicted number need not
  be a value of it ...  <!-- /predicted -->

--check fails (exit 1) when
  - a number in a figures block is in none of its files: "doc:line: 12.3 GB/s not in FILE". A number
    is found when some value of the file, in the number's unit, rounds to it at the printed
    precision (41.8 GB/s matches 41.816 GB/s; 24 ms matches 0.0241 s; 44% matches a fraction 0.44 or
    44.1%; 0.14x a ratio). A value's unit comes from the file: a record's "unit", a counter's, the
    stats' seconds, a findings column's unit or hint, a key's suffix (host_copy_gbps, latency_us,
    idle_fraction, *_over_*), or the unit printed beside a number inside a string; a value of unknown
    unit (params, info, check) matches at face value. The values are every number of a JSON file
    (records' value, params, counters, info, check, the stats' median; findings, context, families,
    comparisons; numbers in prose strings) except raw samples and bookkeeping (reps, warm-up counts,
    scales); the other stats (mean, min, q1, ...) only when scope= names stats. A file that is not
    JSON (a log) contributes every number in its text. scope= limits the values to paths matching
    the globs (fnmatch, "*" also matches "/"): records are addressed by id (records/<family>/<workload>/*),
    the rest by keys (findings/<family>, context/<key>, families).
  - a named file is missing, not tracked by git (git ls-files), or is a JSON results file whose
    context.build.git_dirty is true (blocks name clean files only);
  - outside every block, a sentence looks like a measured claim (see UNMARKED below);
  - a marker is malformed, unclosed or nested.
Not checked as figures, inside blocks: inline code and code fences (ids, commands), link targets,
the first N cells of a table row (labels=N, default 1: the row label) and the table's header row,
and numbers that are part of a word or an expression: H200, fp32, sm_90, x86-64, versions (2.6.3),
dates and times, issue numbers (#212), powers (2^24, 10^9, 2048³).

UNMARKED: outside blocks, code and comments, a sentence (a table row is one) is a measured claim when
  - it holds a number with the unit of a measurement (GB/s, TB/s, MB/s, GFLOP/s, TFLOP/s, samples/s;
    ms, us, µs, ns, s, min, minutes, seconds; %; a ratio written 2.4x or 2.4×; in a table the unit
    may be in the column's header) that no limit word precedes (above, below, under, over, at least,
    at most, more than, less than, up to, within, default, limit, budget, threshold, beyond, <, >, =),
  - and a word reports a measurement: in the sentence (measured on/in/at/by/here/while/during/
    with/from, took, ran at, gave, got, reached, achieved, observed, did, fell, rose, stayed,
    flagged, came to, dropped), in the section's heading (measured, how long, timings, sample,
    figures on/from), or, for a table, in the paragraph just before it;
  - or a number follows "measured" or "observed" directly ("observed ~3e-7").
Numbers that are definitions, limits, defaults or parameters are not figures; where the scanner
misfires, wrap the paragraph in <!-- not-measured --> ... <!-- /not-measured -->.

Docs: the Markdown files (or folders of them) given, by default README.md, docs/*.md, results/README.md;
named files are relative to --root (default: the tree this script is in).
--report prints every figure with its source (file and the value's path, or the citation).
--list-unmarked prints the unmarked claims only.
Exit status: 0 ok, 1 a check failed, 2 bad usage, 77 the root is not a git checkout (--check).
Python 3 standard library only.
"""
import argparse
import bisect
import fnmatch
import glob
import json
import math
import os
import re
import subprocess
import sys

MARK = re.compile(r"^\s*<!--\s*(/?)(figures|external|not-measured|predicted)\b\s*(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# A number: not part of a word, a version, a date, an issue number (#212) or an expression; an optional
# k (thousands) or an
# attached x (a ratio) may follow.
NUM = re.compile(r"(?<![\w.^#])(?<![\w.]-)(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(k|x)?(?![\w^³²]|\.\d|[-:]\d)")
UNIT = re.compile(r"\s?(GB/s|TB/s|MB/s|GFLOP/s|TFLOP/s|MFLOP/s|samples/s|MHz|GHz|KiB|MiB|GiB|kB|KB|MB|GB|TB"
                  r"|ms|µs|us|ns|minutes|min|seconds|s|%|×(?!\s?\d))(?![\w/])")
# A figure's unit -> the units of file values it may come from, with the factor to the figure's unit.
# A value whose unit is unknown matches at factor 1; a figure without a unit matches any value at 1.
ACCEPT = {"GB/s": [("GB/s", 1.0)], "TB/s": [("GB/s", 1e-3)], "MB/s": [("GB/s", 1e3)],
          "TFLOP/s": [("TFLOP/s", 1.0)], "GFLOP/s": [("TFLOP/s", 1e3)], "MFLOP/s": [("TFLOP/s", 1e6)],
          "s": [("s", 1.0), ("ms", 1e-3), ("us", 1e-6)], "ms": [("s", 1e3), ("ms", 1.0), ("us", 1e-3)],
          "us": [("s", 1e6), ("ms", 1e3), ("us", 1.0)], "ns": [("s", 1e9), ("us", 1e3)],
          "min": [("s", 1 / 60.0)], "%": [("%", 1.0), ("fraction", 100.0)],
          "KiB": [("bytes", 2.0 ** -10)], "MiB": [("bytes", 2.0 ** -20)], "GiB": [("bytes", 2.0 ** -30)],
          "kB": [("bytes", 1e-3)], "MB": [("bytes", 1e-6)], "GB": [("bytes", 1e-9)], "TB": [("bytes", 1e-12)],
          "GHz": [("MHz", 1e-3)]}
NORMAL = {"µs": "us", "seconds": "s", "minutes": "min", "×": "x", "KB": "kB"}
HINT_UNIT = {"ratio": "x", "fraction": "fraction", "percent": "%", "bytes": "bytes", "count": "count"}
KEY_UNIT = [(re.compile(p), u) for p, u in (
    (r"gbps$", "GB/s"), (r"tflops", "TFLOP/s"), (r"(^|_)ms$", "ms"), (r"(^|_)us($|_)", "us"),
    (r"(^|_)(s|seconds)$", "s"), (r"bytes", "bytes"), (r"pct|percent", "%"), (r"fraction", "fraction"),
    (r"speedup|ratio|_over_|slowdown|efficiency|gain", "x"), (r"mhz", "MHz"))]


def unit_of_key(key):
    for rx, u in KEY_UNIT:
        if rx.search(key.lower()):
            return u
    return None


MEASURED_UNITS = {"GB/s", "TB/s", "MB/s", "GFLOP/s", "TFLOP/s", "MFLOP/s", "samples/s", "ms", "us",
                  "µs", "ns", "s", "seconds", "min", "minutes", "%", "x", "×"}
CUE = re.compile(r"\b(measured (?:on|in|at|by|here|while|during|with|from)|took|ran at|gave|got|reached|achieved|"
                 r"observed|did|fell|rose|stayed|flagged|came to|dropped)\b", re.I)
HEADING_CUE = re.compile(r"^#+ .*\b(measured|how long|timings?|sample|figures (?:on|from))\b", re.I)
LIMIT = re.compile(r"(\b(above|below|under|over|at least|at most|more than|less than|fewer than|up to|within|"
                   r"default|limit|budget|threshold|beyond|exceeds?)|[≥≤<>=])\s*[~≈]?\s*$", re.I)
AFTER_CUE = re.compile(r"\b(?:measured|observed)\s+(?:at\s+|as\s+|about\s+|~|≈\s*)?\d")
# Never figures: raw samples and bookkeeping. Of the stats only the median counts, unless the block's
# scope names stats (scope=records/ID/stats): a doc that prints 30.3 ms where the median is 30.4 ms
# must not pass on the first quartile.
SKIP_KEYS = {"samples_s", "metric_scale", "reps_per_sample", "warmup_samples", "order", "schema_version",
             "exit_code", "thresholds"}
STATS_KEPT = {"median", "count", "unit"}


class Figure:
    def __init__(self, line, text, value, decimals, unit):
        self.line, self.text, self.value, self.unit = line, text, value, unit
        self.tol = 0.5 * 10.0 ** (-decimals) * (1 + 1e-9)


def parse_number(m, rest):
    body, suffix = m.group(1), m.group(2)
    mant, _, exp = body.lower().partition("e")
    if exp and abs(int(exp)) > 30:
        return None                                      # a hash like 42760619e822
    decimals = len(mant.partition(".")[2]) - (int(exp) if exp else 0)
    value = float(body)
    unit = None
    if suffix == "k":
        value, decimals = value * 1000, decimals - 3
    elif suffix == "x":
        unit = "x"
    if unit is None:
        u = UNIT.match(rest)
        if u:
            unit = u.group(1)
    return value, decimals, unit


def clean(text):
    """Drops what is never a figure: inline code, HTML, link targets."""
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"<[^>]*>", " ", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def numbers_in(text, line, unit_hint=None):
    out = []
    for m in NUM.finditer(text):
        p = parse_number(m, text[m.end():])
        if p:
            value, decimals, unit = p
            f = Figure(line, m.group(0), value, decimals, unit or unit_hint)
            f.before = text[:m.start()]
            out.append(f)
    return out


def is_separator(row):
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    return all(re.fullmatch(r":?-+:?", c) for c in cells if c) and any(cells)


def cells_of(row):
    return row.strip().strip("|").split("|")


def block_figures(lines, labels):
    """lines: [(line number, text)] of one figures block -> the Figures it quotes."""
    figs, fenced, header_units = [], False, []
    for i, (no, text) in enumerate(lines):
        if FENCE.match(text):
            fenced = not fenced
            continue
        if fenced:
            continue
        if text.lstrip().startswith("|"):
            if is_separator(text):
                continue
            nxt = lines[i + 1][1] if i + 1 < len(lines) else ""
            if nxt.lstrip().startswith("|") and is_separator(nxt):      # the header row
                header_units = []
                for c in cells_of(text):
                    u = re.search(r"(GB/s|TFLOP/s|GFLOP/s|samples/s|\bms\b|\bus\b|µs|%|\bseconds\b|\bs\b)",
                                  clean(c))
                    header_units.append({"seconds": "s"}.get(u.group(1), u.group(1)) if u else None)
                continue
            for j, c in enumerate(cells_of(text)):
                if j >= labels:
                    hint = header_units[j] if j < len(header_units) else None
                    figs += numbers_in(clean(c), no, hint)
        else:
            header_units = []
            figs += numbers_in(clean(text), no)
    return figs


def sentences(par):
    """par: [(line number, text)] -> [(line number, sentence)]; a table row is a sentence."""
    out, buf, start = [], "", None
    for no, text in par:
        if text.lstrip().startswith("|"):
            if buf:
                out.append((start, buf))
                buf, start = "", None
            out.append((no, text))
            continue
        for piece in re.split(r"(?<=[.;!?])\s+(?=[A-Z(`*\[])", text):
            if start is None:
                start = no
            buf += " " + piece
            if re.search(r"[.;!?]\s*$", piece):
                out.append((start, buf))
                buf, start = "", None
    if buf:
        out.append((start, buf))
    return out


def claims(figs):
    """The figures of text that look measured: a unit of a measurement, not preceded by a limit word."""
    return [f for f in figs if f.unit in MEASURED_UNITS and not LIMIT.search(f.before)]


def unmarked_claims(par, context_cue):
    """par: one paragraph [(line number, text)]; context_cue: its heading, or for a table the
    paragraph before it, reports a measurement."""
    hits = []
    if par[0][1].lstrip().startswith("|"):
        rows = {}
        for f in block_figures(par, 1):
            rows.setdefault(f.line, []).append(f)
        for no, text in par:
            c = clean(text)
            if (claims(rows.get(no, [])) and (context_cue or CUE.search(c))) or AFTER_CUE.search(c):
                hits.append((no, " ".join(c.split())))
        return hits
    for no, s in sentences(par):
        c = clean(s)
        if (claims(numbers_in(c, no)) and (context_cue or CUE.search(c))) or AFTER_CUE.search(c):
            hits.append((no, " ".join(c.split())))
    return hits


# ---------------------------------------------------------------------------------------------
class Source:
    """The numbers of one named file, by path."""

    def __init__(self, root, rel, all_stats=False):
        self.all_stats, self.synthetic = all_stats, False
        self.rel, self.path, self.error, self.dirty, self.values = rel, os.path.join(root, rel), None, False, []
        if not os.path.isfile(self.path):
            self.error = "%s is missing" % rel
            return
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        try:
            doc = json.loads(text)
        except ValueError:
            if rel.endswith(".json"):
                self.error = "%s is not valid JSON" % rel
                return
            for no, line in enumerate(text.splitlines(), 1):
                for f in numbers_in(line, no):
                    self.values.append(("line %d" % no, f.value, NORMAL.get(f.unit, f.unit)))
            return
        ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
        self.dirty = bool(ctx.get("build", {}).get("git_dirty"))
        self.synthetic = bool(ctx.get("synthetic") or doc.get("synthetic")) if isinstance(doc, dict) else False
        self._walk(doc, "")

    def _walk(self, obj, path, unit=None):
        if isinstance(obj, bool) or obj is None:
            return
        if isinstance(obj, (int, float)):
            if math.isfinite(obj):
                self.values.append((path, float(obj), unit))
        elif isinstance(obj, str) and " " in obj.strip():       # prose, not a name like 80-real,90
            for f in numbers_in(obj, 0):
                self.values.append((path, f.value, NORMAL.get(f.unit, f.unit)))
        elif isinstance(obj, dict):
            own = obj.get("unit") if isinstance(obj.get("unit"), str) and obj.get("unit") else None
            if own is None and isinstance(obj.get("hint"), str):
                own = HINT_UNIT.get(obj["hint"])
            cols = obj.get("columns") if isinstance(obj.get("rows"), list) else None
            leafy = not any(isinstance(v, (dict, list)) for v in obj.values())
            for k, v in obj.items():
                if k in SKIP_KEYS or (path.endswith("/stats") and k not in STATS_KEPT and not self.all_stats):
                    continue
                sub = path + "/" + k if path else k
                if k == "rows" and isinstance(cols, list):
                    units = [(c.get("unit") or HINT_UNIT.get(c.get("hint"))) if isinstance(c, dict) else None for c in cols]
                    for i, row in enumerate(v):
                        for j, cell in enumerate(row if isinstance(row, list) else []):
                            self._walk(cell, "%s/%d/%d" % (sub, i, j), units[j] if j < len(units) else None)
                    continue
                # a "unit" (or "hint") names the unit of "value", and of every number beside it in a
                # flat object (stats, a counter); else the key says it (host_copy_gbps), else the parent
                u = {"count": "count", "cv": "fraction"}.get(k) or \
                    (own if own and (k == "value" or leafy) else None) or unit_of_key(k) or unit
                self._walk(v, sub, NORMAL.get(u, u))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                key = v.get("id") if path == "records" and isinstance(v, dict) else None
                self._walk(v, "%s/%s" % (path, key if key else i), unit)

    def pool(self, scope):
        """-> {unit: (sorted absolute values, their paths)} of the values in scope."""
        by = {}
        for p, v, u in self.values:
            if not scope or any(fnmatch.fnmatchcase(p, g) or fnmatch.fnmatchcase(p, g + "/*") for g in scope):
                by.setdefault(u, []).append((abs(v), p))
        return {u: ([v for v, _ in sorted(l)], [p for _, p in sorted(l)]) for u, l in by.items()}


def find(fig, pools):
    """The (file, path) whose value, in the figure's unit, rounds to the figure (the closest one)."""
    best = None
    unit = NORMAL.get(fig.unit, fig.unit)
    for rel, by in pools:
        if unit is None:                        # prefer values of unknown unit, then any
            tries = [(u, 1.0, u is not None) for u in by]
        else:                                   # prefer values of the figure's unit
            tries = [(u, s, 0) for u, s in ACCEPT.get(unit, []) + [(unit, 1.0)]] + [(None, 1.0, 1)]
        for u, s, rank in tries:
            if u not in by:
                continue
            keys, paths = by[u]
            lo, hi = (fig.value - fig.tol) / s, (fig.value + fig.tol) / s
            i = bisect.bisect_left(keys, lo * (1 - 1e-12))
            while i < len(keys) and keys[i] <= hi * (1 + 1e-12):
                d = (rank, "/stats/" in paths[i], abs(keys[i] * s - fig.value))
                if best is None or d < best[0]:
                    best = (d, rel, paths[i])
                i += 1
    return best[1:] if best else None


# ---------------------------------------------------------------------------------------------
def git_state(root, rel):
    """None when git tracks rel, else what is wrong."""
    r = subprocess.run(["git", "-C", root, "ls-files", "--error-unmatch", "--", rel],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return None if r.returncode == 0 else "%s is not committed (git ls-files does not list it)" % rel


def parse_doc(path, shown):
    """-> (blocks, unmarked, errors). A block: dict(kind, line, arg, lines)."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    blocks, errors, par, unmarked = [], [], [], []
    cur, fenced, state = None, False, {"heading": False, "before": False}

    def flush():
        if par:
            table = par[0][1].lstrip().startswith("|")
            unmarked.extend(unmarked_claims(par, state["heading"] or (table and state["before"])))
            state["before"] = not table and bool(CUE.search(clean(" ".join(t for _, t in par))))
            par.clear()

    for no, text in enumerate(lines, 1):
        if FENCE.match(text):
            fenced = not fenced
            if cur:
                cur["lines"].append((no, text))
            else:
                flush()
            continue
        m = None if fenced else MARK.match(text)
        if not fenced and not m and re.search(r"<!--\s*/?(figures|external|not-measured|predicted)\b", re.sub(r"`[^`]*`", "", text)):
            errors.append("%s:%d: malformed marker (it must be alone on its line): %s" % (shown, no, text.strip()))
            continue
        if m:
            closing, kind, arg = m.group(1), m.group(2), (m.group(3) or "").strip()
            if closing:
                if not cur or cur["kind"] != kind:
                    errors.append("%s:%d: <!-- /%s --> closes no open %s block" % (shown, no, kind, kind))
                else:
                    blocks.append(cur)
                    cur = None
                continue
            if cur:
                errors.append("%s:%d: a %s block inside the %s block of line %d" % (shown, no, kind, cur["kind"], cur["line"]))
                continue
            if kind in ("figures", "external", "predicted") and not arg:
                errors.append("%s:%d: <!-- %s: ... --> needs %s" % (shown, no, kind, "a citation" if kind == "external" else "its results file(s)"))
            flush()
            cur = {"kind": kind, "line": no, "arg": arg, "lines": []}
            continue
        if cur:
            cur["lines"].append((no, text))
        elif fenced:
            continue
        elif not text.strip():
            flush()
        elif text.startswith("#"):
            flush()
            state["heading"], state["before"] = bool(HEADING_CUE.match(text)), False
        else:
            if par and par[0][1].lstrip().startswith("|") != text.lstrip().startswith("|"):
                flush()
            par.append((no, text))
    flush()
    if cur:
        errors.append("%s:%d: the %s block is never closed (<!-- /%s -->)" % (shown, cur["line"], cur["kind"], cur["kind"]))
    return blocks, unmarked, errors


def parse_args_of(arg):
    files, scope, labels, bad = [], [], 1, []
    for tok in arg.split():
        if tok.startswith("scope="):
            scope += [g for g in tok[6:].split(",") if g]
        elif tok.startswith("labels="):
            try:
                labels = int(tok[7:])
            except ValueError:
                bad.append(tok)
        elif "=" in tok:
            bad.append(tok)
        else:
            files.append(tok)
    return files, scope, labels, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("docs", nargs="*", help="Markdown files or folders of them (default: README.md, docs/, results/README.md)")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the source tree the named files are relative to (default: this script's)")
    ap.add_argument("--check", action="store_true", help="fail on any figure without its source")
    ap.add_argument("--report", action="store_true", help="print every figure with its source")
    ap.add_argument("--list-unmarked", action="store_true", help="print the unmarked measured claims")
    a = ap.parse_args()
    if not (a.check or a.report or a.list_unmarked):
        ap.error("give --check, --report or --list-unmarked")
    root = os.path.abspath(a.root)
    docs = [d for p in a.docs for d in (sorted(glob.glob(os.path.join(p, "*.md"))) if os.path.isdir(p) else [p])]
    docs = docs or [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) \
        + [os.path.join(root, "results", "README.md")]
    if a.check:
        try:
            inside = subprocess.run(["git", "-C", root, "rev-parse", "--is-inside-work-tree"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        except OSError:                                         # no git at all
            inside = False
        if not inside:
            print("doc-figures: %s is not a git checkout: cannot tell whether the named files are committed" % root)
            return 77
    sources, errors, report, counts = {}, [], [], {"figures": 0, "blocks": 0, "external": 0, "predicted": 0}
    unlisted = []
    for doc in docs:
        if not os.path.isfile(doc):
            print("doc-figures: no such file: %s" % doc, file=sys.stderr)
            return 2
        absdoc = os.path.abspath(doc)
        shown = os.path.relpath(absdoc, root) if absdoc.startswith(root + os.sep) else doc
        blocks, unmarked, errs = parse_doc(doc, shown)
        errors += errs
        for no, s in unmarked:
            unlisted.append("%s:%d: unmarked measured figure: %s" % (shown, no, s[:160]))
        for b in blocks:
            if b["kind"] == "not-measured":
                continue
            if b["kind"] == "external":
                counts["external"] += 1
                for f in block_figures(b["lines"], 1):
                    report.append("%s:%d: %s  external: %s" % (shown, f.line, f.text.strip() + (" " + f.unit if f.unit and f.unit != "x" else ""), b["arg"]))
                continue
            counts["blocks"] += 1
            files, scope, labels, bad = parse_args_of(b["arg"])
            for tok in bad:
                errors.append("%s:%d: unknown marker option %s (scope=GLOB,... or labels=N)" % (shown, b["line"], tok))
            pools, names, synthetic = [], [], {}
            for rel in files:
                key = (rel, any("stats" in g for g in scope))
                if key not in sources:
                    sources[key] = Source(root, rel, key[1])
                src = sources[key]
                names.append(rel)
                problem = src.error or (git_state(root, rel) if a.check else None)
                if problem:
                    errors.append("%s:%d: %s" % (shown, b["line"], problem))
                    continue
                if src.dirty:
                    errors.append("%s:%d: %s says context.build.git_dirty: true (measured from a tree with "
                                  "uncommitted changes): a figures block names clean files only" % (shown, b["line"], rel))
                    continue
                pools.append((rel, src.pool(scope)))
                synthetic[rel] = src.synthetic
            if not pools:
                continue
            for f in block_figures(b["lines"], labels):
                counts["figures"] += 1
                hit = find(f, pools)
                label = f.text.strip() + (" " + f.unit if f.unit and f.unit != "x" else "")
                if b["kind"] == "predicted" and not hit:
                    counts["predicted"] += 1
                    report.append("%s:%d: %s  predicted from %s" % (shown, f.line, label, " and ".join(names)))
                    continue
                if hit:
                    tag = " (synthetic)" if synthetic[hit[0]] else ""
                    report.append("%s:%d: %s  %s%s  %s" % (shown, f.line, label, hit[0], tag, hit[1]))
                else:
                    errors.append("%s:%d: %s not in %s" % (shown, f.line, label, " or ".join(names)))
                    report.append("%s:%d: %s  NOT FOUND in %s" % (shown, f.line, label, " or ".join(names)))
    if a.report:
        print("\n".join(report))
    if a.list_unmarked:
        print("\n".join(unlisted) if unlisted else "doc-figures: no unmarked measured figure")
    if a.check:
        for e in errors + unlisted:
            print(e)
        if errors or unlisted:
            print("doc-figures: FAIL: %d problem(s)" % (len(errors) + len(unlisted)))
            return 1
        print("doc-figures: ok: %d figures in %d blocks, each found in its committed file or a prediction from one (%d); "
              "%d external block(s); no unmarked measured figure"
              % (counts["figures"], counts["blocks"], counts["predicted"], counts["external"]))
    elif errors:
        for e in errors:
            print(e, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
