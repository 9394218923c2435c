# Shared by the driver's end-to-end test scripts: set case_name, py, validate and work, then source.
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
expect_rc() {  # expect_rc WANT CMD... : runs CMD, output to $work/out.txt
  local want=$1; shift
  "$@" >"$work/out.txt" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/out.txt" >&2; fail "exit $rc, wanted $want: $*"; }
}
validate() {  # schema check; without the jsonschema module the case is Skipped (77), never passed
  "$py" "$validate" "$1"; local rc=$?
  [ $rc -eq 77 ] && exit 77
  [ $rc -eq 0 ] || fail "schema: $1"
}
json_check() {  # json_check FILE PYTHON-EXPR (d = the document)
  # An explicit exit, not assert: with PYTHONOPTIMIZE set an assert is compiled out and passes.
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 'false')" "$1" || fail "$2"
}
