#!/usr/bin/env python3
"""Shared code names no family: the harness, ci/, plots/, cmake/ and the top-level CMakeLists.txt
read what a family declares (its gtb_add_family, its registrations, its bench/<family>/ files) and
never test for a family by name.

The families are the folders of bench/ that hold a <family>.cmake. A name counts where it stands as
a word of its own, in code and in comments alike: `family == "gemm"`, `gtb-transfer`,
`bench/train/`, "the parallel family". Inside a longer identifier it does not (`pct_of_gemm_peak`,
`parallel_vs_serial`), nor with another case (`GEMM`, `Ceilings`).

One allow-list, below and nowhere else: results-format and configuration keys that share a family's
name. Each entry is a file (relative to the root) and the exact text allowed on a line of it.

usage: check_family_names.py ROOT [FILE...]
       check_family_names.py ROOT --planted DIR
  FILE...        check these files instead of the shared code under ROOT
  --planted DIR  the planted twin: a copy of a shared file (harness/driver/common/families.cpp) with a test
                 for a family by name added, written to DIR and checked; must fail
Exit 0 when no shared file names a family, 1 otherwise (each hit printed as FILE:LINE: ...), 2 for
bad usage.
"""
import os
import re
import sys

SHARED = ["harness", "ci", "plots", "cmake", "CMakeLists.txt", "bench/CMakeLists.txt"]
TEXT_SUFFIXES = (".c", ".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh", ".py", ".sh", ".cmake", ".txt", ".json",
                 ".yml", ".yaml", ".md", ".in")

# Results-format keys spelled like a family: the context key "ceilings" (the measured ceilings, a
# concept, not the family; harness/document/published.h defines it once), as a literal where it is
# defined or read from a file (published.cpp's legacy declaration, the plot script), and as the
# concept's name in prose: `context.ceilings` and "measured ceilings". "*" applies to every file.
ALLOWED = {
    "*": ["context.ceilings", "measured ceilings"],
    "harness/document/published.h": ['"ceilings"'],
    "harness/document/published.cpp": ['"ceilings"'],
    "plots/gtb_plot.py": ['"ceilings"'],
    # The advise configuration's model kind "transformer" (a model architecture the user describes,
    # beside mlp and generic), read and printed where the configuration is; and the software that runs
    # the step, one word from the option to the JSON: the option --framework, the configuration and
    # `where` key "framework" (cost::kFrameworkKey, defined once), the enum Framework and the step's
    # field of that type, StepConfig::framework (`.framework`).
    "harness/model/cost_model.h": ["mlp | transformer | generic", "// transformer: a stack", 'kFrameworkKey = "framework"',
                                   "Framework framework"],
    "harness/model/step.cpp": ['c.model == "transformer"', '{"mlp", "transformer", "generic"}',
                               "(mlp, transformer or generic)", ".framework"],
    "harness/model/price.cpp": ['c.model == "transformer"', ".framework"],
    "harness/model/price_pytorch.cpp": ['c.model == "transformer"', ".framework"],
    "harness/model/predict.cpp": ['c.model == "transformer"', ".framework"],
    "harness/model/verdict.cpp": [".framework"],
    "harness/driver/advise/advise.cpp": ["mlp|transformer|generic", "transformer: --layers",
                                         "  framework  [--framework native|pytorch-eager", '{"--framework", cost::kFrameworkKey,'],
    "harness/driver/common/render_verdict.cpp": ['c.model == "transformer"', '" transformer blocks (d_model "'],
}


def families(root):
    bench = os.path.join(root, "bench")
    return sorted(d for d in os.listdir(bench) if os.path.isfile(os.path.join(bench, d, d + ".cmake")))


def shared_files(root):
    for top in SHARED:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield path
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for f in sorted(filenames):
                if f.endswith(TEXT_SUFFIXES) or os.path.splitext(f)[1] == "":
                    yield os.path.join(dirpath, f)


def hits(path, rel, pattern):
    allowed = ALLOWED.get(rel, []) + ALLOWED["*"]
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        yield 0, f"unreadable: {e}"
        return
    for no, line in enumerate(lines, 1):
        text = line
        for a in allowed:
            text = text.replace(a, "")
        found = sorted(set(m.group(1) for m in pattern.finditer(text)))
        if found:
            yield no, f"names {', '.join(found)}: {line.strip()[:160]}"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help") or (argv[2:3] == ["--planted"] and len(argv) != 4):
        print("usage: check_family_names.py ROOT [FILE...] | ROOT --planted DIR", file=sys.stderr)
        return 2
    root = argv[1]
    if not os.path.isdir(os.path.join(root, "bench")):
        print(f"check_family_names: {root} has no bench/ folder", file=sys.stderr)
        return 2
    names = families(root)
    if not names:
        print(f"check_family_names: no family found under {root}/bench", file=sys.stderr)
        return 2
    # A word: not inside an identifier ([A-Za-z0-9_] on either side).
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])")
    files = argv[2:] or list(shared_files(root))
    if argv[2:3] == ["--planted"]:
        planted_name = "gemm" if "gemm" in names else names[0]
        source = os.path.join(root, "harness", "driver", "common", "families.cpp")
        os.makedirs(argv[3], exist_ok=True)
        files = [os.path.join(argv[3], "families.cpp")]
        with open(source, encoding="utf-8") as fh, open(files[0], "w", encoding="utf-8") as out:
            out.write(fh.read() + f'\nbool planted(const std::string& family) {{ return family == "{planted_name}"; }}\n')
    bad = 0
    for path in files:
        rel = os.path.relpath(path, root)
        for no, what in hits(path, rel, pattern):
            print(f"{rel}:{no}: {what}")
            bad += 1
    if bad:
        print(f"FAIL: {bad} lines of shared code name a family ({', '.join(names)}); read what the family "
              "declares instead (docs/contributing.md)")
        return 1
    print(f"ok: {len(files)} shared files name no family ({', '.join(names)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
