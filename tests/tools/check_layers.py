#!/usr/bin/env python3
"""The harness's four rooms and their layers: fails (exit 1) when an include runs back up.

  harness/document/  the results document (records, statistics, findings, the results JSON)
  harness/model/     the cost model (cost terms, the predicted step, fixes, validations, the verdict)
  harness/runtime/   what a family binary links (registration, state, stopping, timing, context)
  harness/driver/    the gtb command

Layers, bottom to top: document <- model <- runtime <- driver. The document includes no other room;
the model includes the document only; the runtime includes the document and the model, never the
driver; the driver includes the document, the model and, of the runtime, only the headers of
gtb_runtime_base (the part it links: the sources listed in harness/runtime/CMakeLists.txt's
add_library(gtb_runtime_base ...)); it never links gtb_runtime's Google Benchmark, OpenMP or CUDA.
No source sits in harness/ outside the four rooms.

Inside the driver, one folder per command (COMMANDS below) and common/ for what several share: a
command folder includes its own files, common/ and commands.h, never another command's folder;
common/ includes no command folder.

usage: check_layers.py ROOT [--graph]   (--graph also prints the include edges between rooms)
"""
import os
import re
import sys
from collections import Counter

ROOMS = ("document", "model", "runtime", "driver")
SOURCE = (".h", ".hpp", ".cpp", ".cu", ".cuh")
COMMANDS = ("run", "list", "compare", "ab", "report", "plot", "advise", "diagnose")
INCLUDE = re.compile(r'^\s*#\s*include\s*"(harness/[^"]+)"')


def base_headers(root):
    """Header paths of gtb_runtime_base: a header per source file of its add_library()."""
    path = os.path.join(root, "harness", "runtime", "CMakeLists.txt")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise SystemExit(f"error: cannot read {path}: {e}") from None
    m = re.search(r"add_library\(\s*gtb_runtime_base\s+STATIC\s+([^)]*)\)", text)
    if not m:
        raise SystemExit(f"error: {path} declares no gtb_runtime_base library")
    stems = [os.path.splitext(s)[0] for s in m.group(1).split() if s.endswith(".cpp")]
    return {f"harness/runtime/{s}.h" for s in stems}


def allowed(room, target, base):
    """Whether a file in `room` may include the harness header `target`."""
    troom = target.split("/")[1] if target.count("/") >= 2 else ""
    if troom == room:
        return True
    if room == "document":
        return False
    if room == "model":
        return troom == "document"
    if room == "runtime":
        return troom in ("document", "model")
    if room == "driver":
        return troom in ("document", "model") or target in base
    return False


def driver_folder_allowed(rel, target):
    """Whether the driver file `rel` may include the driver header `target` (one folder per command)."""
    parts, tparts = rel.split("/"), target.split("/")
    if len(tparts) < 4 or tparts[1] != "driver":
        return True  # not a driver folder's header (commands.h, other rooms)
    folder = parts[2] if len(parts) >= 4 else ""
    tfolder = tparts[2]
    if tfolder == folder or tfolder == "common" and folder in COMMANDS + ("common",):
        return True
    return False


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root = args[0]
    harness = os.path.join(root, "harness")
    if not os.path.isdir(harness):
        print(f"error: {harness} is not a folder", file=sys.stderr)
        return 2
    base = base_headers(root)
    failures, edges = [], Counter()
    for dirpath, _, files in os.walk(harness):
        for name in sorted(files):
            if not name.endswith(SOURCE):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            parts = rel.split("/")
            room = parts[1] if len(parts) >= 3 else ""
            if room not in ROOMS:
                failures.append(f"FAIL: {rel} is outside the four rooms (harness/{{{','.join(ROOMS)}}}/)")
                continue
            if room == "driver" and len(parts) >= 4 and parts[2] not in COMMANDS + ("common",):
                failures.append(f"FAIL: {rel} is in harness/driver/{parts[2]}/, neither a command's folder "
                                f"({', '.join(COMMANDS)}) nor common/")
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    troom = target.split("/")[1] if target.count("/") >= 2 else "?"
                    edges[(room, troom)] += 1
                    if not allowed(room, target, base):
                        why = {"document": "the document includes no other room",
                               "model": "the model may include the document only",
                               "runtime": "the runtime may include the document and the model, never the driver",
                               "driver": "the driver may include the document, the model and gtb_runtime_base's headers"}[room]
                        failures.append(f"FAIL: {rel}:{n} includes {target} ({why})")
                    elif room == "driver" and not driver_folder_allowed(rel, target):
                        failures.append(f"FAIL: {rel}:{n} includes {target} (a driver command folder includes its "
                                        "own files and common/, never another command's; common/ no command's)")
    if "--graph" in argv:
        for (a, b), k in sorted(edges.items()):
            print(f"{a} -> {b}: {k} includes")
    for f in failures:
        print(f)
    if failures:
        print(f"{len(failures)} layering violations")
        return 1
    print(f"ok: {sum(edges.values())} harness includes, none runs back up")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
