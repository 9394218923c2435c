#!/usr/bin/env python3
"""Checks that every program the test command runs is installed by ci/setup.sh or is in Debian's required set.

usage: check_test_programs.py ROOT [--plant]

It reads what the test command runs: the ci/ scripts and their test.d/ steps, the families' ci.sh
files, the tests' shell scripts, the inline `sh -c` bodies and commands of the CMake tests, the
programs the Python test tools start, and the programs the harness spawns by name. Shell is read as
the shell reads it (ShellReader): a word inside an interpreter's quoted program (python3 -c "print(1)",
a here-document, awk '{ print }') is no program; the text of `sh -c '...'` is shell. Each command word
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
    "igzip": "isal",
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


# A word that assigns (NAME=..., NAME+=..., NAME[i]=...), before a command or alone.
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
# Words that run the next word as a program (`command -v X` only asks whether X is there).
WRAPPERS = ("exec", "time", "command", "nohup", "sudo", "env", "xargs", "setsid", "timeout")
# Reserved words after which the next word is still a command's first word.
LEADING = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done"}
# Shells whose `-c` argument is shell text, read as such.
SHELLS = {"sh", "bash", "dash"}
OPERATORS = sorted([";;&", "&>>", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", ">>", "<<", "<>", ">&", "<&", ">|",
                    ";", "&", "|", "<", ">", "(", ")", "\n"], key=len, reverse=True)


class Commands:
    """What one ShellReader.parse knows between words: the current simple command's words, the open
    subshells and cases, what the next words are, and whether it is inside [[ ... ]]."""

    def __init__(self, reader):
        self.reader = reader
        self.cmd = []        # the current simple command's words: (text, literal, position)
        self.frames = []     # "(" for a subshell, ["case", "pattern" | "command"] for a case
        self.expect = None   # "for": words up to the next separator are data; "case", "in", "function"
        self.cond = False    # inside [[ ... ]]: words and operators are data

    def done(self):
        if self.cmd:
            self.reader.command(self.cmd)
            self.cmd.clear()

    def in_pattern(self):
        return bool(self.frames) and self.frames[-1] != "(" and self.frames[-1][1] == "pattern"


class ShellReader:
    """Reads shell text as the shell does, as far as finding the programs it runs goes: quoting
    ('...', "...", $'...', backslashes), command and process substitutions ($(...), `...`, <(...)),
    arithmetic, [[ ... ]], here-documents (their bodies are data; an unquoted delimiter's body has its
    substitutions run), comments, case patterns, for lists, function definitions and NAME=(...) lists.
    A quoted word is an argument: the program an interpreter reads from it (python3 -c '...',
    awk '...', perl -e '...') or from a here-document (python3 - <<'PY') runs no program of the
    shell's; the argument of `sh -c` / `bash -c` is shell, and is read as such."""

    def __init__(self, text, out, first_line=1):
        self.t, self.n, self.i = text, len(text), 0
        self.out = out  # (line, word) for each command word
        self.first_line = first_line
        self.newlines = [k for k, c in enumerate(text) if c == "\n"]
        self.heredocs = []  # (delimiter, strip tabs, quoted) waiting for the next newline

    def line(self, pos):
        lo, hi = 0, len(self.newlines)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.newlines[mid] < pos:
                lo = mid + 1
            else:
                hi = mid
        return self.first_line + lo

    # -- words --------------------------------------------------------------------------------
    def blanks(self):
        t = self.t
        while self.i < self.n:
            if t[self.i] in " \t":
                self.i += 1
            elif t.startswith("\\\n", self.i):
                self.i += 2
            else:
                break

    def word(self):
        """One word from self.i: (its text without the quotes, substitutions as written; literal:
        False when the text holds a substitution or expansion)."""
        t, out, literal = self.t, [], True
        while self.i < self.n:
            c = t[self.i]
            if c == "(" and ASSIGNMENT.fullmatch("".join(out)):
                self.i += 1
                self.array()
                out.append("(...)")
                literal = False
                continue
            if c in " \t\n;&|<>()":
                break
            if c == "\\":
                if t.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                out.append(t[self.i + 1:self.i + 2])
                self.i += 2
            elif c == "'":
                j = t.find("'", self.i + 1)
                j = self.n if j < 0 else j
                out.append(t[self.i + 1:j])
                self.i = j + 1
            elif c == '"':
                self.i += 1
                text, lit = self.double_quoted()
                out.append(text)
                literal = literal and lit
            else:
                literal = self.expansion_or_char(out) and literal
        return "".join(out), literal

    def expansion_or_char(self, out):
        """At a `$`, a backtick or any other character of a word: appends its text to out and says
        whether it is literal (no substitution or expansion)."""
        c = self.t[self.i]
        if c == "$":
            text, lit = self.dollar()
            out.append(text)
            return lit
        if c == "`":
            out.append(self.backtick())
            return False
        out.append(c)
        self.i += 1
        return True

    def double_quoted(self):
        t, out, literal = self.t, [], True
        while self.i < self.n and t[self.i] != '"':
            c = t[self.i]
            if c == "\\":
                nxt = t[self.i + 1:self.i + 2]
                out.append(nxt if nxt in ('$', '`', '"', '\\') else ("" if nxt == "\n" else "\\" + nxt))
                self.i += 2
            else:
                literal = self.expansion_or_char(out) and literal
        self.i += 1
        return "".join(out), literal

    def dollar(self):
        """At a `$`: the expansion's text as written, and whether it is literal (only a lone `$`,
        $'...' and $"..." strings are)."""
        t, start = self.t, self.i
        nxt = t[self.i + 1:self.i + 2]
        if nxt == "'":  # $'...': C escapes, no expansion
            j = self.i + 2
            while j < self.n and t[j] != "'":
                j += 2 if t[j] == "\\" else 1
            self.i = j + 1
            return t[start + 2:j], True
        if nxt == '"':
            self.i += 2
            return self.double_quoted()
        if t.startswith("$((", self.i):
            self.i += 1
            self.arithmetic()
            return t[start:self.i], False
        if nxt == "(":
            self.i += 2
            self.parse(end=")")
            return t[start:self.i], False
        if nxt == "{":
            self.i += 2
            depth = 1
            while self.i < self.n and depth:
                c = t[self.i]
                if c == "\\":
                    self.i += 2
                elif c == "'":
                    j = t.find("'", self.i + 1)
                    self.i = (self.n if j < 0 else j) + 1
                elif c == '"':
                    self.i += 1
                    self.double_quoted()
                elif c == "$" or c == "`":
                    self.dollar() if c == "$" else self.backtick()
                else:
                    depth += {"{": 1, "}": -1}.get(c, 0)
                    self.i += 1
            return t[start:self.i], False
        m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", t[self.i + 1:self.i + 64])
        if m:
            self.i += 1 + len(m.group(0))
            return t[start:self.i], False
        self.i += 1
        return "$", True

    def arithmetic(self):
        """From a `((`, past its matching `))` (data: arithmetic runs no program)."""
        depth = 0
        while self.i < self.n:
            c = self.t[self.i]
            if c == "$" and self.t.startswith("$(", self.i) and not self.t.startswith("$((", self.i):
                self.dollar()
                continue
            self.i += 1
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                return

    def backtick(self):
        """A `...` substitution: its body (backslashes undone) is read as shell on its own."""
        t, start = self.t, self.i
        j = self.i + 1
        while j < self.n and t[j] != "`":
            j += 2 if t[j] == "\\" else 1
        body = re.sub(r"\\([\\`$])", r"\1", t[start + 1:j])
        ShellReader(body, self.out, self.line(start + 1)).parse()
        self.i = j + 1
        return t[start:self.i]

    def array(self):
        """The elements of a NAME=( ... ) list, to its `)`: data (their substitutions run)."""
        while self.i < self.n:
            c = self.t[self.i]
            if c in " \t\n":
                self.i += 1
            elif c == "#":
                while self.i < self.n and self.t[self.i] != "\n":
                    self.i += 1
            elif c == ")":
                self.i += 1
                return
            else:
                before = self.i
                self.word()
                if self.i == before:
                    self.i += 1

    def heredoc_bodies(self):
        pending, self.heredocs = self.heredocs, []
        for delim, strip, quoted in pending:
            while self.i < self.n:
                e = self.t.find("\n", self.i)
                e = self.n if e < 0 else e
                line = self.t[self.i:e]
                if (line.lstrip("\t") if strip else line) == delim:
                    self.i = e + 1
                    break
                if quoted:
                    self.i = e + 1
                    continue
                # An unquoted delimiter: the body's substitutions run.
                while self.i < e:
                    c = self.t[self.i]
                    if c == "\\":
                        self.i += 2
                    elif c == "$":
                        self.dollar()
                    elif c == "`":
                        self.backtick()
                    else:
                        self.i += 1
                self.i = max(self.i, e + 1)

    # -- commands -----------------------------------------------------------------------------
    def parse(self, end=None):
        """Reads commands from self.i to the end of the text, or past the `)` that closes a $( ... )
        or <( ... ) when end is ")"."""
        t, st = self.t, Commands(self)
        while True:
            self.blanks()
            if self.i >= self.n:
                st.done()
                return
            if t[self.i] == "#":
                while self.i < self.n and t[self.i] != "\n":
                    self.i += 1
                continue
            op = next((o for o in OPERATORS if t.startswith(o, self.i)), None)
            if op is None:
                self.command_word(st)
            elif self.operator(st, op, end):
                return

    def operator(self, st, op, end):
        """At an operator: steps past it (and a redirection's target, a here-document's delimiter,
        a process substitution's body); True at the `)` that ends this parse."""
        t = self.t
        if st.cond and op != "\n":
            self.i += len(op)
        elif op in ("<", ">") and t.startswith("(", self.i + 1):  # <( ... ): a process substitution
            pos = self.i
            self.i += 2
            self.parse(end=")")
            st.cmd.append((t[pos:self.i], False, pos))
        elif op == "\n":
            self.i += 1
            st.done()
            if st.expect == "for":
                st.expect = None
            self.heredoc_bodies()
        elif op in (";", "&", "&&", "||", "|", "|&"):
            self.i += len(op)
            st.done()
            if st.expect == "for":
                st.expect = None
        elif op in (";;", ";&", ";;&"):
            self.i += len(op)
            st.done()
            if st.frames and st.frames[-1] != "(":
                st.frames[-1][1] = "pattern"
        elif op == "(":
            if st.in_pattern():
                self.i += 1
            elif not st.cmd and t.startswith("((", self.i):
                pos = self.i
                self.arithmetic()
                st.cmd.append(("((", False, pos))
            elif len(st.cmd) == 1 and re.match(r"\(\s*\)", t[self.i:]):  # name () { ... }: a definition
                self.i = t.index(")", self.i) + 1
                st.cmd.clear()
            else:
                self.i += 1
                st.done()
                st.frames.append("(")
        elif op == ")":
            self.i += 1
            if st.in_pattern():
                st.frames[-1][1] = "command"
                st.cmd.clear()
                return False
            st.done()
            if st.frames and st.frames[-1] == "(":
                st.frames.pop()
            elif end == ")":
                return True
        elif op in ("<<", "<<-"):
            self.i += len(op)
            self.blanks()
            start = self.i
            delim, _ = self.word()
            self.heredocs.append((delim, op == "<<-", any(q in t[start:self.i] for q in "'\"\\")))
        else:  # a redirection: the next word is its target, not a command
            self.i += len(op)
            self.blanks()
            self.word()
        return False

    def command_word(self, st):
        """A word where a command may be: data (a for list, a case pattern, inside [[ ... ]]), a
        reserved word that changes what follows, or a word of the current simple command."""
        t, pos = self.t, self.i
        text, literal = self.word()
        if self.i == pos:  # nothing this reader knows: step over it
            self.i += 1
            return
        if literal and text.isdigit() and t[self.i:self.i + 1] in ("<", ">"):
            return  # a file descriptor before a redirection (2>&1)
        if st.cond:
            st.cond = not (literal and text == "]]")
            return
        if st.in_pattern():
            if literal and text == "esac":
                st.frames.pop()
            return
        if st.expect == "case":
            st.expect = "in"
            return
        if st.expect == "in":
            st.frames.append(["case", "pattern"])
            st.expect = None
            return
        if st.expect == "for":
            if literal and text == "do":
                st.expect = None
            return
        if st.expect == "function":
            st.expect = None
            self.blanks()
            if re.match(r"\(\s*\)", t[self.i:]):
                self.i = t.index(")", self.i) + 1
            return
        if not st.cmd and literal:
            if text in LEADING:
                return
            if text == "esac":
                if st.frames and st.frames[-1] != "(":
                    st.frames.pop()
                return
            if text in ("case", "for", "select", "function"):
                st.expect = {"case": "case", "function": "function"}.get(text, "for")
                self.blanks()
                if st.expect == "for" and t.startswith("((", self.i):
                    self.arithmetic()
                return
            if text == "[[":
                st.cond = True
                st.cmd.append((text, False, pos))
                return
        st.cmd.append((text, literal, pos))

    def command(self, cmd):
        """Records the program a simple command runs (past assignments and wrappers)."""
        words = list(cmd)
        while words and (ASSIGNMENT.match(words[0][0]) or (words[0][1] and words[0][0] in WRAPPERS)):
            w, pos0 = words[0][0], words[0][2]
            words = words[1:]
            if ASSIGNMENT.match(w):
                continue
            if w not in ("exec", "time", "command"):  # a program itself
                self.out.append((self.line(pos0), w))
            if w == "command" and words and words[0][0].startswith("-"):
                return  # `command -v X` asks whether X is there; it runs nothing
            with_value = ("-k", "-s", "-u", "-n", "-I", "-C", "-S") if w in ("timeout", "env", "xargs", "sudo") else ()
            while words and words[0][0].startswith("-"):
                words = words[1 + (words[0][0] in with_value and len(words) > 1):]
            if w == "timeout":
                words = words[1:]  # the duration
        if not words:
            return
        w, literal, pos = words[0]
        if not literal or not re.fullmatch(r"[a-z][a-z0-9+._-]*", w):
            return
        n = self.line(pos)
        self.out.append((n, w))
        args = [a for a, _, _ in words[1:]]
        # tar runs a compressor for some of its options.
        if w == "tar":
            opts = " ".join(args[:2])
            if re.search(r"(^|\s)-?[a-zA-Z]*J|--xz", opts):
                self.out.append((n, "xz"))
            if "--zstd" in opts:
                self.out.append((n, "zstd"))
        # A shell's -c argument is shell text.
        if w in SHELLS and "-c" in args[:-1]:
            ShellReader(args[args.index("-c") + 1], self.out, n).parse()


def shell_commands(text):
    """(line number, command word) for each simple command of a shell text."""
    out = []
    ShellReader(text, out).parse()
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
