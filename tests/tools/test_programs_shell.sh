#!/bin/sh
# check_test_programs.py reads shell as shell: a word inside an interpreter's quoted program
# (python3 -c "print(...)", a python3 here-document, awk '{ print }', perl -e) is no program, even
# where a program of that name is installed (Debian's mailcap gives /usr/bin/print). A `print` run
# as a command (plainly, in $( ... ), in sh -c '...', in an unquoted here-document's substitution)
# is still found, and the set-up's planted lack of xz still fails with `print` on PATH.
# usage: test_programs_shell.sh PYTHON CHECK_TEST_PROGRAMS.py ROOT WORKDIR
# Exit 0 passed, 1 failed, 77 skipped (not Debian: nothing to check against).
set -u
[ $# -eq 4 ] || { echo "usage: test_programs_shell.sh PYTHON CHECK ROOT WORKDIR"; exit 2; }
py=$1 check=$2 root=$3 work=$4
rm -rf "$work" && mkdir -p "$work/bin" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# A `print` on PATH, as mailcap installs it.
printf '#!/bin/sh\nexit 0\n' >"$work/bin/print" && chmod +x "$work/bin/print"
PATH="$work/bin:$PATH"
export PATH

# A checkout of one test step whose every `print` is an interpreter's.
fake=$work/root
mkdir -p "$fake/ci/test.d" "$fake/.ci" "$fake/bench"
: >"$fake/CMakeLists.txt"
printf '#!/bin/sh\ntrue\n' >"$fake/ci/test.sh"
printf '#!/bin/sh\ntrue\n' >"$fake/.ci/run"
printf 'DEBIAN_PACKAGES=(\n  python3\n)\n' >"$fake/ci/setup.sh"
cat >"$fake/ci/test.d/10-quoted.sh" <<'EOF'
#!/usr/bin/env bash
python3 -c "print('a')"
python3 -c 'import sys; print(sys.argv)' x
v=$(python3 -c "import json; print(json.dumps({'a': 1}))")
python3 - "$v" <<'PY'
import sys
print(sys.argv[1])
PY
python3 - <<PY
print("$HOME")
PY
awk '{ print $1 }' /dev/null
perl -e 'print "x\n"'
pyq='import json, sys; d = json.load(sys.stdin)'
r="$(sim "$pyq; print(' '.join(f for f in d))" --deadline 480)"
case $r in
  print) echo "a case pattern" ;;
esac
cat <<EOF2
print this: a here-document's text
EOF2
EOF
out=$("$py" "$check" "$fake" 2>&1); rc=$?
echo "$out"
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "a print inside an interpreter's quoted program was taken for a program (exit $rc)"

# The same checkout with `print` run as a command, four ways: each is found, on its line.
cat >"$fake/ci/test.d/20-commands.sh" <<'EOF'
print hello
v=$(print hello)
sh -c 'true; print hello'
cat <<EOF2
$(print hello)
EOF2
EOF
out=$("$py" "$check" "$fake" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "print run as a command was not found (exit $rc, not 1)"
for n in 1 2 3 5; do
  echo "$out" | grep -q "^FAIL: ci/test.d/20-commands.sh:$n runs print," || fail "print run on line $n was not found"
done
[ "$(echo "$out" | grep -c '^FAIL: ')" -eq 4 ] || fail "other lines than the four commands were reported"

# The whole tree with `print` on PATH passes, and its planted lack of xz still fails.
out=$("$py" "$check" "$root" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "the tree fails with a print on PATH (exit $rc)"
out=$("$py" "$check" "$root" --plant 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -Eq "FAIL: ci/gpu-check-lib.sh:[0-9]+ runs xz, from Debian's xz-utils" ||
  fail "the planted lack of xz was not caught with a print on PATH (exit $rc)"
echo "ok: interpreters' programs are no programs; commands named print are found; the planted xz fails"
