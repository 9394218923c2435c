# Fake family binaries that fail in one way each, and checks that do not depend on Python's assert
# (removed under PYTHONOPTIMIZE). Sourced by e2e.sh after lib.sh.

# json_true FILE PYTHON-EXPR : fails the case unless the expression holds (d = the document; os is
# imported, so the expression can read strings from the environment instead of quoting them).
json_true() {
  "$py" -c "import json,os,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" || fail "$1: $2"
}

# gone PID : the process no longer runs (a zombie nobody reaps counts as gone).
gone() {
  ! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# fake_family DIR NAME MODE : writes DIR/gtb-NAME, a family binary that lists one case when asked
# (so the failure happens in the run, not in the listing) and then, in the run:
#   exit3        prints a line and exits 3
#   no_results   exits 0 without writing its results file
#   garbage      exits 0 after writing a results file that is not JSON
#   stubborn     ignores SIGINT and SIGTERM and waits on a child that ignores them too (pids in
#                DIR/NAME.pid and DIR/NAME.grandchild)
#   grandchild   starts a grandchild that ignores SIGTERM (pid in DIR/NAME.grandchild), then waits
#   missing      no binary at all
fake_family() {
  local dir=$1 name=$2 mode=$3 f="$1/gtb-$2"
  mkdir -p "$dir"
  rm -f "$f"
  [ "$mode" = missing ] && return 0
  {
    echo '#!/bin/sh'
    echo 'out='
    echo 'for a in "$@"; do case $a in'
    echo "  --gtb_list) echo '{\"family\": \"$name\", \"workloads\": [{\"cases\": 1}]}'; exit 0 ;;"
    echo '  --gtb_out=*) out=${a#--gtb_out=} ;;'
    echo 'esac; done'
    case $mode in
      exit3) echo 'echo "fake family: giving up"; exit 3' ;;
      no_results) echo 'echo "fake family: nothing to write"; exit 0' ;;
      garbage) echo 'printf "{\"records\": [1, 2" > "$out"; exit 0' ;;
      stubborn) echo "trap '' INT TERM; sleep 1000 & echo \$! > '$dir/$name.grandchild'; echo \$\$ > '$dir/$name.pid'; wait" ;;
      grandchild) echo "(trap '' TERM; exec sleep 1000) & echo \$! > '$dir/$name.grandchild'; echo \$\$ > '$dir/$name.pid'; wait" ;;
      *) fail "fake_family: unknown mode $mode" ;;
    esac
  } > "$f"
  chmod +x "$f"
}

# family_seconds FILE INDEX : the seconds the INDEX-th families entry took, as an integer.
family_seconds() {
  "$py" -c "import json,sys; print(int(json.load(open(sys.argv[1]))['families'][int(sys.argv[2])]['seconds']))" "$1" "$2"
}
