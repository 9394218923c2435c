#!/usr/bin/env python3
"""The families' front door: fails (exit 1) when code reaches the harness around it.

  include/gtb/   the public headers a family may use (registration, State, timing, findings,
                 evidence and cost-term names, publish, context); the runtime implements them.

Rules:
  bench/             includes nothing of harness/: only gtb/ (and kernels/, bench/, libraries).
  include/gtb/       includes gtb/, kernels/ and harness/{document,model,runtime}/, never the driver
                     or bench/.
  gtb/ is included only by bench/, include/gtb/, the runtime's sources (harness/runtime/*.cpp, *.cu)
                     and tests/: no harness header includes it (an old path kept as a forwarding
                     header would let a family in through the side), and kernels/, the document,
                     the model and the driver sit below or beside the runtime.

usage: check_front_door.py ROOT
"""
import os
import re
import sys

SOURCE = (".h", ".hpp", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
DOOR = "include/gtb"
SCANNED = ("bench", "include", "harness", "kernels")


def sources(root, top):
    for dirpath, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE):
                path = os.path.join(dirpath, name)
                yield path, os.path.relpath(path, root).replace(os.sep, "/")


def verdict(rel, target):
    """Why `rel` may not include `target`, or None when it may."""
    door = target.startswith("gtb/")
    if rel.startswith("bench/"):
        if target.startswith("harness/"):
            return "a family includes the harness only through its front door, include/gtb/"
        return None
    if rel.startswith(DOOR + "/"):
        if target.startswith(("harness/driver/", "bench/")):
            return "the front door exposes the document, the model and the runtime, never the driver or a family"
        return None
    if not door:
        return None
    if rel.startswith("harness/runtime/") and rel.endswith((".cpp", ".cu")):
        return None
    if rel.startswith("harness/runtime/"):
        return "no harness header includes the front door: a forwarding header is a side door"
    if rel.startswith("harness/"):
        return "only the runtime implements the front door; the document, the model and the driver do not include it"
    if rel.startswith("kernels/"):
        return "kernels know nothing of the harness"
    return None


def main(argv):
    if len(argv) != 2:
        print("usage: check_front_door.py ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    for top in ("bench", DOOR):
        if not os.path.isdir(os.path.join(root, top)):
            print(f"error: {os.path.join(root, top)} is not a folder", file=sys.stderr)
            return 2
    failures, through_door, files = [], set(), 0
    for top in SCANNED:
        for path, rel in sources(root, top):
            files += 1
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if rel.startswith("bench/") and target.startswith("gtb/"):
                        through_door.add(target)
                        if not os.path.isfile(os.path.join(root, "include", target)):
                            failures.append(f"FAIL: {rel}:{n} includes {target}, which the front door does not hold")
                    why = verdict(rel, target)
                    if why:
                        failures.append(f"FAIL: {rel}:{n} includes {target} ({why})")
    if failures:
        print("\n".join(failures + [f"{len(failures)} includes around the front door"]))
    else:
        print(f"ok: {files} files; bench/ includes {len(through_door)} front-door headers and no harness header")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
