#!/usr/bin/env python3
"""Checks the pitfalls family's build-flag variants: each was compiled with its own flags and none of
the project's (compile_commands.json and the command line recorded in each object), shares no
inline function with other objects (nm), and the -O0 object really is unoptimised while the -O3
one is vectorized (its disassembly).

usage: check_pitfall_flags.py --compile-commands FILE --object NAME=PATH... [--plant]
  --plant  checks the O3 object as if it were the O0 one: must report a failure.
Every failure line starts with "FAIL:"; exits 1 on any failure, 2 on bad usage.
"""
import argparse
import json
import re
import shlex
import subprocess
import sys

EXPECTED_OPT = {"O0": "-O0", "O2": "-O2", "O3": "-O3", "O3_v3": "-O3", "O3_v4": "-O3"}
EXPECTED_MARCH = {"O3_v3": "x86-64-v3", "O3_v4": "x86-64-v4"}
DEVICE_FLAGS = {"default": set(), "lineinfo": {"-lineinfo"}, "G": {"-G"}, "fast_math": {"--use_fast_math"}}
# Packed single-precision arithmetic (SSE/AVX/AVX-512): what a vectorized float loop contains.
PACKED = re.compile(r"\bv?(mul|add|sub|div|fmadd\d*|max|min)ps\b")
FRAME = re.compile(r"-0x[0-9a-f]+\(%rbp\)")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def variant_of(args):
    for a in args:
        m = re.match(r"-DGTB_PF_VARIANT=(\w+)$", a)
        if m:
            return m.group(1)
    return None


def check_commands(path):
    try:
        with open(path) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")
        return
    host = device = 0
    for e in entries:
        src = e.get("file", "")
        if not src.endswith(("kernels/pitfalls/cpu/flag_kernels.cpp", "kernels/pitfalls/cuda/flag_kernels.cu")):
            continue
        args = e["arguments"] if "arguments" in e else shlex.split(e.get("command", ""))
        name = variant_of(args)
        opts = [a for a in args if re.match(r"-O[0-9sgz]?$", a)]
        if src.endswith(".cpp"):
            host += 1
            if name not in EXPECTED_OPT:
                fail(f"host variant object with unknown variant {name!r}: {src}")
                continue
            if opts != [EXPECTED_OPT[name]]:
                fail(f"host variant {name}: optimisation flags {opts}, expected only {EXPECTED_OPT[name]}")
            march = [a.split("=", 1)[1] for a in args if a.startswith("-march=")]
            want = [EXPECTED_MARCH[name]] if name in EXPECTED_MARCH else []
            if march != want:
                fail(f"host variant {name}: -march {march}, expected {want}")
            if "-DNDEBUG" in args:
                fail(f"host variant {name}: the build type's -DNDEBUG leaked in")
        else:
            device += 1
            if name not in DEVICE_FLAGS:
                fail(f"device variant object with unknown variant {name!r}: {src}")
                continue
            got = {a for a in args if a in ("-G", "-lineinfo", "--use_fast_math", "-use_fast_math")}
            if got != DEVICE_FLAGS[name]:
                fail(f"device variant {name}: device flags {sorted(got)}, expected {sorted(DEVICE_FLAGS[name])}")
            if opts:
                fail(f"device variant {name}: optimisation flags {opts} leaked in")
    if host == 0:
        fail("no host variant of kernels/pitfalls/cpu/flag_kernels.cpp in " + path)
    print(f"check_pitfall_flags: {host} host and {device} device variant compile commands checked")


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def chain_body(obj):
    """Disassembly of the variant's chain loop (its OpenMP outlined body where there is one)."""
    text = run(["objdump", "-d", "--no-show-raw-insn", "-C", obj])
    body, keep = [], False
    for line in text.splitlines():
        if re.match(r"^[0-9a-f]+ <", line):
            keep = "chain" in line
            continue
        if keep:
            body.append(line)
    return body


def check_object(name, obj, as_name):
    try:
        recorded = run(["readelf", "-p", ".GCC.command.line", obj])
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"{as_name} object {obj}: cannot read its recorded command line ({e})")
        return
    want = EXPECTED_OPT.get(as_name)
    seen = set(re.findall(r"(?<![\w-])-O[0-9sgz]?\b", recorded))
    if want and seen != {want}:
        fail(f"{as_name} object {obj}: compiled with {sorted(seen)}, expected only {want}")
    # Inline math shared under one name would be merged across objects at link time: an -O0 loop
    # could then call an -O3 copy. Each variant keeps its math in its own namespace.
    try:
        shared = [l.strip() for l in run(["nm", "-C", obj]).splitlines() if re.search(r" [WVUu] gtb::", l)]
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"{as_name} object {obj}: nm failed ({e})")
        shared = []
    if shared:
        fail(f"{as_name} object {obj} shares {len(shared)} gtb:: symbol(s) with other objects, e.g. {shared[0]}")
    try:
        body = chain_body(obj)
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"{as_name} object {obj}: objdump failed ({e})")
        return
    if not body:
        fail(f"{as_name} object {obj}: no chain function found in its disassembly")
        return
    packed = sum(1 for l in body if PACKED.search(l))
    frame = sum(1 for l in body if FRAME.search(l))
    if as_name == "O0":
        # Unoptimised code keeps every local in the stack frame and does one float at a time.
        if packed:
            fail(f"O0 object {obj} has packed SIMD arithmetic ({packed} instructions): it was optimised")
        if frame < len(body) // 10:
            fail(f"O0 object {obj}: only {frame} of {len(body)} instructions use the stack frame: it was optimised")
    elif as_name in ("O3", "O3_v3", "O3_v4"):
        if not packed:
            fail(f"{as_name} object {obj}: no packed SIMD arithmetic in the chain loop: not vectorized")
    print(f"check_pitfall_flags: {name} checked as {as_name}: {len(body)} instructions, {packed} packed, "
          f"{frame} stack-frame accesses, recorded {sorted(seen)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile-commands", required=True)
    ap.add_argument("--object", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--plant", action="store_true")
    a = ap.parse_args()
    objects = {}
    for spec in a.object:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            print(f"check_pitfall_flags: bad --object {spec!r} (NAME=PATH)", file=sys.stderr)
            return 2
        objects[name] = path
    if "O0" not in objects or "O3" not in objects:
        print("check_pitfall_flags: need at least --object O0=... and --object O3=...", file=sys.stderr)
        return 2
    if a.plant:
        check_object("O3", objects["O3"], "O0")
    else:
        check_commands(a.compile_commands)
        for name, path in objects.items():
            check_object(name, path, name)
    if failures:
        print(f"check_pitfall_flags: {len(failures)} failure(s)")
        return 1
    print("check_pitfall_flags: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
