#!/usr/bin/env bash
# Planted trees for tree.size (check_tree_size.py), in a scratch git checkout:
#   over:    a tracked file and an untracked, not ignored 41 MiB file: the check must fail naming it;
#   ignored: the same 41 MiB file under an ignored folder (a build's output): it does not travel, the
#            check must pass.
# The big file is sparse (truncate): it costs no disk.
# usage: tree_size_planted.sh over|ignored PYTHON SOURCE_ROOT WORK
set -euo pipefail
mode=$1 py=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work/results"
printf '/build/\n' >"$work/.gitignore"
printf '# Measured results\n' >"$work/results/README.md"
git -C "$work" init -q
git -C "$work" add -A
case $mode in
  over) truncate -s 41M "$work/results/gtb-planted-big.json" ;;
  ignored) mkdir -p "$work/build" && truncate -s 41M "$work/build/gtb-planted-big.json" ;;
  *) echo "usage: tree_size_planted.sh over|ignored PYTHON SOURCE_ROOT WORK" >&2; exit 2 ;;
esac
exec "$py" "$src/tests/tools/check_tree_size.py" "$work"
