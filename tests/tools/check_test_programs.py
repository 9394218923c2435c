#!/usr/bin/env python3
"""Checks that every program the test command runs is installed by ci/setup.sh or is in Debian's required set.

usage: check_test_programs.py ROOT [--plant]

It reads what the test command runs: the ci/ scripts and their test.d/ steps, the families' ci.sh
files, the tests' shell scripts, the inline `sh -c` bodies and commands of the CMake tests, the
programs the Python test tools start, and the programs the harness spawns by name. Each command word
that is a program (one in PROGRAMS below, or one found on this machine) must come from a Debian
package that ci/setup.sh's DEBIAN_PACKAGES lists or that is required/essential (dpkg says which,
and a minbase root has exactly those). A program not in PROGRAMS fails too: say where it comes from.
--plant drops xz-utils from the set-up's list (the package a minbase root lacked when `tar -xJ` ran
in the GPU check's dry run) and must then fail. Exit 0 all covered, 1 something not covered,
2 bad usage, 77 no dpkg (not Debian: nothing to check against).
"""
import os
import re
import shutil
import subprocess
import sys

# Program -> the Debian 12 package it comes from.
PROGRAMS = {
    "apt-get": "apt", "ar": "binutils", "awk": "mawk", "basename": "coreutils", "bash": "bash",
    "cat": "coreutils", "ccache": "ccache", "chmod": "coreutils", "clang++": "clang", "cmake": "cmake",
    "cmp": "diffutils", "cp": "coreutils", "ctest": "cmake", "cut": "coreutils", "date": "coreutils",
    "diff": "diffutils", "dirname": "coreutils", "dpkg": "dpkg", "dpkg-deb": "dpkg", "dpkg-query": "dpkg",
    "du": "coreutils", "env": "coreutils", "file": "file", "find": "findutils", "g++": "g++",
    "git": "git", "grep": "grep", "gzip": "gzip", "head": "coreutils", "hostname": "hostname",
    "id": "coreutils", "c++": "g++", "uptime": "procps", "ld": "binutils", "ln": "coreutils", "ls": "coreutils", "mkdir": "coreutils",
    "mktemp": "coreutils", "mpirun": "openmpi-bin", "mv": "coreutils", "ninja": "ninja-build",
    "nm": "binutils", "nproc": "coreutils", "objdump": "binutils", "od": "coreutils",
    "pgrep": "procps", "pkill": "procps", "ps": "procps", "python3": "python3", "readelf": "binutils",
    "readlink": "coreutils", "realpath": "coreutils", "rm": "coreutils", "rmdir": "coreutils",
    "sed": "sed", "seq": "coreutils", "setsid": "util-linux", "sh": "dash", "sleep": "coreutils",
    "sort": "coreutils", "stat": "coreutils", "tail": "coreutils", "tar": "tar", "tee": "coreutils",
    "timeout": "coreutils", "touch": "coreutils", "tr": "coreutils", "true": "coreutils",
    "uname": "coreutils", "uniq": "coreutils", "wc": "coreutils", "xargs": "findutils", "xz": "xz-utils",
    "zcat": "gzip", "zstd": "zstd", "sudo": "sudo", "strings": "binutils", "c++filt": "binutils",
    "yes": "coreutils", "printenv": "coreutils", "sha256sum": "coreutils", "md5sum": "coreutils",
    "truncate": "coreutils", "split": "coreutils", "comm": "coreutils", "paste": "coreutils",
    "nohup": "coreutils", "expr": "coreutils", "whoami": "coreutils", "ldd": "libc-bin",
    "getconf": "libc-bin", "lscpu": "util-linux", "flock": "util-linux", "perl": "perl-base",
}
# Found, never installed: the CUDA Toolkit and NVIDIA's driver tools (the scripts look for them and
# say what they skip without them), and the README's own assumption (sudo comes with git before).
NOT_INSTALLED = {"nvcc", "cuobjdump", "nvdisasm", "nvidia-smi", "compute-sanitizer", "nsys", "ncu"}
# Shell words that are not programs.
SHELL_WORDS = set("""
if then else elif fi for in do done while until case esac function select time return exit local
export unset set shift source . eval exec echo printf read cd pwd test [ [[ ]] ] trap wait break
continue declare typeset readonly let true false command type hash getopts mapfile readarray
kill compgen builtin umask ulimit alias shopt jobs disown : ! { } ( ) -- -
""".split())

SCRIPT_GLOBS = [
    ("ci", ".sh"), ("ci/test.d", ".sh"), ("tests/driver", ".sh"), ("tests/tools", ".sh"),
]


def fail_usage(msg):
    print(f"check_test_programs: {msg}", file=sys.stderr)
    sys.exit(2)


def files_of(root, sub, ext, recurse=False):
    d = os.path.join(root, sub)
    out = []
    if not os.path.isdir(d):
        return out
    for dp, dns, fns in os.walk(d):
        out += [os.path.join(dp, f) for f in sorted(fns) if f.endswith(ext)]
        if not recurse:
            break
    return sorted(out)


def unquote(text):
    """The shell text with quoted data blanked (newlines kept): a '...' string goes, a "..." string
    keeps only its $(...) commands; comments and heredoc bodies go too."""
    out, i, n = [], 0, len(text)
    heredoc, pending = None, None
    lines = text.split("\n")
    kept = []
    for line in lines:
        if heredoc:
            kept.append("")
            if line.strip() == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if m:
            heredoc = m.group(1)
        kept.append(line)
    text = "\n".join(kept)
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            out.append("  " if text[i + 1] != "\n" else " \n")
            i += 2
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            while i < n and text[i] != "\n":
                i += 1
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            out.append("''" + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == '"':
            i += 1
            out.append('"')
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 2
                    continue
                if text.startswith("$(", i):
                    depth, j = 1, i + 2
                    while j < n and depth:
                        depth += {"(": 1, ")": -1}.get(text[j], 0)
                        j += 1
                    out.append(";" + text[i + 2:j - 1] + ";")
                    i = j
                    continue
                if text[i] == "\n":
                    out.append("\n")
                i += 1
            out.append('"')
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def shell_commands(text):
    """(line number, command word) for each simple command of a shell text."""
    out = []
    in_array = False
    for n, code in enumerate(unquote(text).split("\n"), 1):
        # A NAME=( ... ) list spread over lines is data.
        if in_array:
            if ")" in code:
                in_array = False
            continue
        if re.search(r"[A-Za-z_][A-Za-z0-9_]*=\([^)]*$", code):
            in_array = True
            continue
        # Each part after a command separator starts with a command.
        for part in re.split(r"\|\||&&|[|;&`]|\$\(|\(|\)|\{|\}|\bthen\b|\bdo\b|\belse\b|\bif\b|\bwhile\b|\buntil\b|!", code):
            words = part.split()
            while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]) or
                             words[0] in ("exec", "time", "command", "nohup", "sudo", "env", "xargs", "setsid")):
                if words[0] == "command" and len(words) > 1 and words[1].startswith("-"):
                    words = []  # `command -v X` asks whether X is there; it runs nothing
                    break
                words = words[1:]
                while words and words[0].startswith("-"):
                    words = words[1:]
            if words and words[0] == "timeout":
                words = [w for w in words[1:] if not w.startswith("-")][1:]
            if not words:
                continue
            w = words[0].strip("\"")
            if re.fullmatch(r"[a-z][a-z0-9+._-]*", w):
                out.append((n, w))
            # tar runs a compressor for some of its options.
            if w == "tar":
                opts = " ".join(words[1:3])
                if re.search(r"(^|\s)-?[a-zA-Z]*J|--xz", opts):
                    out.append((n, "xz"))
                if "--zstd" in opts:
                    out.append((n, "zstd"))
    return out


def cmake_commands(text):
    """Programs a CMake file's tests run: COMMAND's first word, and the bodies of `sh -c` strings."""
    out = []
    for m in re.finditer(r"COMMAND\s+([^\s)]+)", text):
        n = text.count("\n", 0, m.start()) + 1
        w = m.group(1)
        if w in ("${Python3_EXECUTABLE}",):
            out.append((n, "python3"))
        elif re.fullmatch(r"[a-z][a-z0-9+._-]*", w):
            out.append((n, w))
    for m in re.finditer(r"sh -c (\"(?:[^\"\\]|\\.)*\"|\[\[.*?\]\])", text, re.S):
        n0 = text.count("\n", 0, m.start())
        body = m.group(1)[1:-1] if m.group(1).startswith('"') else m.group(1)[2:-2]
        body = body.replace('\\"', '"').replace("\\$", "$")
        out += [(n0 + n, w) for n, w in shell_commands(body)]
    return out


def python_commands(text):
    out = []
    for m in re.finditer(r"(?:run|Popen|call|check_output|check_call)\(\s*\[\s*\"([a-z][a-z0-9+._-]*)\"", text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    for m in re.finditer(r"which\(\"([a-z][a-z0-9+._-]*)\"\)", text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def cpp_commands(text):
    out = []
    for m in re.finditer(r"program\s*=\s*(?:[^;\"]*\?\s*[^;\"]*:\s*)?\"([a-z][a-z0-9+._-]*)\"", text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def setup_packages(root):
    text = open(os.path.join(root, "ci", "setup.sh")).read()
    m = re.search(r"DEBIAN_PACKAGES=\((.*?)\n\)", text, re.S)
    if not m:
        fail_usage("ci/setup.sh has no DEBIAN_PACKAGES=( ... ) list")
    words = []
    for line in m.group(1).splitlines():
        words += re.sub(r"#.*$", "", line).split()
    return set(words)


def required_packages():
    try:
        listing = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Priority}\t${Essential}\n"],
                                 check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    req = set()
    for line in listing.splitlines():
        f = line.split("\t")
        if len(f) == 3 and (f[1] == "required" or f[2] == "yes"):
            req.add(f[0])
    return req


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--plant"):
        fail_usage("usage: check_test_programs.py ROOT [--plant]")
    root = argv[1]
    if not os.path.isfile(os.path.join(root, "ci", "test.sh")):
        fail_usage(f"{root} is not a gtb checkout (no ci/test.sh)")
    required = required_packages()
    if required is None:
        print("Skipped: no dpkg-query: not a Debian machine, no required set to check against")
        return 77
    installed = setup_packages(root)
    if len(argv) == 3:
        installed.discard("xz-utils")

    uses = []  # (file, line, program)
    scripts = [os.path.join(root, ".ci", "run")]
    for sub, ext in SCRIPT_GLOBS:
        scripts += files_of(root, sub, ext)
    scripts += sorted(os.path.join(root, "bench", d, "ci.sh") for d in os.listdir(os.path.join(root, "bench"))
                      if os.path.isfile(os.path.join(root, "bench", d, "ci.sh")))
    for f in scripts:
        uses += [(f, n, w) for n, w in shell_commands(open(f).read())]
    cmakes = [os.path.join(root, "CMakeLists.txt")] + files_of(root, "tests", ".cmake") + files_of(root, "cmake", ".cmake")
    for d in ("bench", "harness", "kernels"):
        for dp, _, fns in os.walk(os.path.join(root, d)):
            cmakes += [os.path.join(dp, f) for f in sorted(fns) if f.endswith(".cmake") or f == "CMakeLists.txt"]
    for f in cmakes:
        uses += [(f, n, w) for n, w in cmake_commands(open(f).read())]
    for f in files_of(root, "tests/tools", ".py") + files_of(root, "ci", ".py") + files_of(root, "plots", ".py", True):
        uses += [(f, n, w) for n, w in python_commands(open(f).read())]
    for dp, _, fns in os.walk(os.path.join(root, "harness")):
        for fn in sorted(fns):
            if fn.endswith(".cpp"):
                f = os.path.join(dp, fn)
                uses += [(f, n, w) for n, w in cpp_commands(open(f).read())]

    # The scripts' own functions are not programs.
    functions = set()
    for f in scripts:
        functions |= set(re.findall(r"^\s*(?:function\s+)?([a-z_][a-z0-9_-]*)\s*\(\)", open(f).read(), re.M))

    bad = []
    seen = {}
    for f, n, w in uses:
        if w in SHELL_WORDS or w in functions or w in NOT_INSTALLED:
            continue
        if w == "gtb" or w.startswith(("gtb-", "test_", "fuzz_")):
            continue  # built by the project
        where = f"{os.path.relpath(f, root)}:{n}"
        pkg = PROGRAMS.get(w)
        if pkg is None:
            if shutil.which(w) or any(os.path.exists(os.path.join(d, w)) for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin")):
                bad.append(f"FAIL: {where} runs {w}, which tests/tools/check_test_programs.py does not know: "
                           "add it to PROGRAMS with its Debian package (and the package to ci/setup.sh)")
            continue
        seen.setdefault(w, where)
        if pkg not in installed and pkg not in required:
            bad.append(f"FAIL: {where} runs {w}, from Debian's {pkg}, which ci/setup.sh does not install "
                       "and which is not in Debian's required set (a minbase root lacks it)")
    for line in dict.fromkeys(bad):
        print(line)
    if bad:
        return 1
    print(f"check_test_programs: {len(seen)} programs the test command runs, each installed by ci/setup.sh "
          f"or required: {' '.join(sorted(seen))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
