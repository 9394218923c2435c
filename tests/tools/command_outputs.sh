#!/bin/sh
# Every gtb command's output, byte for byte: compare (two results files, every format), report
# (plain, every format, --out, --diagnosis), advise, diagnose (one trace, a job, --diff; every format,
# --out), list (text and json, --json the same bytes as --format json, --out), plot (the names of the
# figures it draws, not their bytes), --out onto a folder (exit 2, nothing half-written), a
# single-value option given twice (the last one wins), `gtb` itself, and each command's --help, a
# flag it does not know and a missing argument. Each answer (stdout, stderr and
# exit status, plus a file written with --out) goes to OUTDIR, and their SHA-256 sums to
# OUTDIR/manifest.sha256; with MANIFEST the sums are compared to it and every answer that differs is
# named (exit 1).
#
#   usage: command_outputs.sh GTB SOURCE_DIR OUTDIR [MANIFEST]
#
# The driver's refactorings leave the manifest as it is; a change meant to alter an output
# regenerates it with this script (no MANIFEST) and says which outputs changed, and why, in its
# commit. gtb list asks the self-test family's binary beside GTB; plot needs a Python with matplotlib (the
# figure names are recorded as "no matplotlib" without one, so the manifest then differs).
set -u
[ $# -ge 3 ] || { echo "usage: command_outputs.sh GTB SOURCE_DIR OUTDIR [MANIFEST]" >&2; exit 2; }
gtb=$1 src=$2 out=$3 manifest=${4:-}
rm -rf "$out" && mkdir -p "$out/work" || exit 2
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
gtb=$(abs "$gtb") out=$(abs "$out")
[ -z "$manifest" ] || manifest=$(abs "$manifest")
work=$out/work
# The inputs are read by paths relative to SOURCE_DIR, so answers that name a file read the same
# wherever the tree is; a path under OUTDIR is written WORK in the answers.
. "$(cd "$(dirname "$0")" && pwd)/manifest.sh" || exit 2
cd "$src" || exit 2

answer() {
  name=$1; shift
  "$@" > "$out/$name.tmp" 2> "$out/$name.err.tmp"
  echo "exit $?" >> "$out/$name.err.tmp"
  for f in "$name" "$name.err"; do
    sed "s|$work|WORK|g" "$out/$f.tmp" > "$out/$f" && rm -f "$out/$f.tmp"
  done
}
# An answer whose document goes to --out FILE: the file is kept beside it (absent: "no file").
answer_out() {
  name=$1; shift
  rm -f "$work/doc"
  answer "$name" "$@" --out "$work/doc"
  if [ -f "$work/doc" ]; then mv "$work/doc" "$out/$name.file"; else echo "no file" > "$out/$name.file"; fi
}

r1=tests/fixtures/real/results_schema1_amd.json
r2=results/gtb-cpu-AMD-EPYC-2vcpu-20261201.json
r3=results/gtb-cpu-AMD-EPYC-2vcpu-20261203-13.json
ri=results/gtb-cpu-Intel-Xeon-2vcpu-20261202-8.json
fx=tests/fixtures
tr=tests/fixtures/traces
synth=tests/fixtures/diagnose/results_synthetic_a100.json

# gtb itself.
answer gtb-none "$gtb"
answer gtb-help "$gtb" --help
answer gtb-unknown "$gtb" no-such-command

# Every command: --help, an unknown flag, no argument.
for c in run list compare ab report plot advise diagnose; do
  answer "$c-help" "$gtb" "$c" --help
  answer "$c-bad-flag" "$gtb" "$c" --no-such-flag
done
for c in compare ab report plot advise diagnose; do answer "$c-no-args" "$gtb" "$c"; done

# compare: two results files of one machine, every format and --out; GPU fixtures with a regression;
# two machines; a bad format and a missing file.
for fmt in text markdown json; do
  answer "compare-cpu.$fmt" "$gtb" compare "$r1" "$r2" --format "$fmt"
  answer "compare-gpu-regressed.$fmt" "$gtb" compare "$fx/gpu_base.json" "$fx/gpu_regressed.json" --format "$fmt"
  answer "compare-gpu-improved.$fmt" "$gtb" compare "$fx/gpu_base.json" "$fx/gpu_improved.json" --format "$fmt"
done
answer compare-cpu-default "$gtb" compare "$r1" "$r2"
answer_out compare-cpu-out "$gtb" compare "$r2" "$r3" --format json
answer compare-machines "$gtb" compare "$r1" "$ri"
answer compare-threshold "$gtb" compare "$fx/gpu_base.json" "$fx/gpu_regressed.json" --threshold 20%
answer compare-bad-format "$gtb" compare "$r1" "$r2" --format yaml
answer compare-bad-threshold "$gtb" compare "$r1" "$r2" --threshold 120%
answer compare-missing "$gtb" compare "$r1" "$fx/no-such-file.json"

# report: plain, --out, with a diagnosis, an old file, a bad file.
answer report-r3 "$gtb" report "$r3"
answer report-gpu "$gtb" report "$fx/gpu_base.json"
answer_out report-out "$gtb" report "$ri"
"$gtb" diagnose "$tr/a100-train-6steps.json.gz" --results "$synth" --format json > "$work/diagnosis.json" 2>/dev/null
answer report-diagnosis "$gtb" report "$synth" --diagnosis "$work/diagnosis.json"
answer report-old "$gtb" report "$fx/cpu_a.json"
answer report-bad "$gtb" report "$fx/bad_malformed.json"
# report in every format (markdown, the default, is report-r3 above), --out, a bad format.
for fmt in text markdown json; do
  answer "report-r3.$fmt" "$gtb" report "$r3" --format "$fmt"
  answer "report-diagnosis.$fmt" "$gtb" report "$synth" --diagnosis "$work/diagnosis.json" --format "$fmt"
done
answer_out report-out-json "$gtb" report "$ri" --format json
answer report-bad-format "$gtb" report "$r3" --format yaml

# advise: one step in every format and --out; a bad format and a bad step.
step="--model mlp --width 512 --depth 3 --batch 64 --framework pytorch-eager --gpus 2 --overlap"
for fmt in text markdown json; do
  # shellcheck disable=SC2086  # the step's options are words
  answer "advise.$fmt" "$gtb" advise "$synth" $step --format "$fmt"
done
# shellcheck disable=SC2086
answer_out advise-out "$gtb" advise "$r3" $step --format markdown
answer advise-bad-format "$gtb" advise "$synth" --model mlp --format yaml
answer advise-bad-model "$gtb" advise "$synth" --model nothing

# diagnose: one trace (priced and not), a job (a folder and the files), --diff; every format, --out.
for fmt in text markdown json; do
  answer "diagnose-single.$fmt" "$gtb" diagnose "$tr/a100-nccl-3steps.json.gz" --results "$synth" --format "$fmt"
  answer "diagnose-unpriced.$fmt" "$gtb" diagnose "$tr/mi250-minitoy-train.json.gz" --format "$fmt"
  answer "diagnose-job.$fmt" "$gtb" diagnose "$tr/ddp/job4-straggler" --results "$synth" --format "$fmt" --jobs 2
  answer "diagnose-diff.$fmt" "$gtb" diagnose --diff "$tr/ddp/diff/base.json.gz" "$tr/ddp/diff/slower-loader.json.gz" --format "$fmt"
done
answer diagnose-job-files "$gtb" diagnose "$tr/ddp/job2/rank-0.json.gz" "$tr/ddp/job2/rank-1.json.gz" --jobs 1
answer_out diagnose-out "$gtb" diagnose "$tr/a100-event-sync.json.gz" --format markdown
answer diagnose-bad-format "$gtb" diagnose "$tr/cpu-only.json.gz" --format yaml
answer diagnose-bad-jobs "$gtb" diagnose "$tr/ddp/job2" --jobs 0
answer diagnose-diff-one "$gtb" diagnose --diff "$tr/cpu-only.json.gz"
answer diagnose-missing "$gtb" diagnose "$tr/no-such-trace.json.gz"

# --out onto a folder: the rename fails, exit 2, and nothing is left beside it (no temporary file).
mkdir -p "$work/onto/folder"
answer out-onto-folder-compare "$gtb" compare "$r1" "$r2" --out "$work/onto/folder"
answer out-onto-folder-report "$gtb" report "$r3" --out "$work/onto/folder"
# shellcheck disable=SC2086
answer out-onto-folder-advise "$gtb" advise "$synth" $step --out "$work/onto/folder"
answer out-onto-folder-diagnose "$gtb" diagnose "$tr/cpu-only.json.gz" --format json --out "$work/onto/folder"
(cd "$work/onto" && find . | LC_ALL=C sort) > "$out/out-onto-folder.files"

# list: asked of the self-test family (gtb-selftest beside GTB), whose workloads change with no
# benchmark's.
answer list env GTB_FAMILIES=selftest "$gtb" list
answer list-json env GTB_FAMILIES=selftest "$gtb" list --json
answer list-full env GTB_FAMILIES=selftest "$gtb" list --family selftest --full
answer list-bad-family env GTB_FAMILIES=selftest "$gtb" list --family no-such-family
# list --format: text is the plain listing, json is what --json writes (said in list-json-alias);
# --out; --json with --format refused; a bad format.
answer list-format-text env GTB_FAMILIES=selftest "$gtb" list --format text
answer list-format-json env GTB_FAMILIES=selftest "$gtb" list --format json
if cmp -s "$out/list-json" "$out/list-format-json"; then echo same; else echo differ; fi > "$out/list-json-alias"
answer_out list-out env GTB_FAMILIES=selftest "$gtb" list --format json
answer list-json-and-format env GTB_FAMILIES=selftest "$gtb" list --json --format text
answer list-bad-format env GTB_FAMILIES=selftest "$gtb" list --format markdown
answer out-onto-folder-list env GTB_FAMILIES=selftest "$gtb" list --out "$work/onto/folder"
(cd "$work/onto" && find . | LC_ALL=C sort) > "$out/out-onto-folder-list.files"

# A single-value option given twice: the last one wins, on every command (each value is still
# checked: a refused one is refused wherever it stands).
answer repeated-compare "$gtb" compare "$r1" "$r2" --format json --format text --threshold 50% --threshold 20%
answer repeated-compare-refused "$gtb" compare "$r1" "$r2" --threshold 120% --threshold 20%
answer repeated-report "$gtb" report "$r3" --format json --format markdown
# shellcheck disable=SC2086
answer repeated-advise "$gtb" advise "$synth" $step --width 64 --width 512 --format json --format text
answer repeated-list env GTB_FAMILIES=selftest "$gtb" list --family no-such-family --family selftest

# plot: the figures' names (their pixels depend on matplotlib's version), and the refusals.
py=""
for cand in ${GTB_PYTHON:-python3 /usr/bin/python3}; do
  if "$cand" -c "import matplotlib" >/dev/null 2>&1; then py=$cand; break; fi
done
for f in "$r3" "$fx/gpu_base.json"; do
  name=plot-$(basename "$f" .json)
  if [ -n "$py" ]; then
    GTB_PYTHON=$py answer "$name" "$gtb" plot "$f" --out "$work/plots-$name"
    (cd "$work/plots-$name" 2>/dev/null && find . -type f | LC_ALL=C sort) > "$out/$name.files"
  else
    echo "no matplotlib" > "$out/$name.files"
  fi
done
answer plot-no-out "$gtb" plot "$r3"
answer plot-schema1 "$gtb" plot "$fx/cpu_a.json" --out "$work/plots-schema1"
answer plot-bad-format "$gtb" plot "$r3" --out "$work/plots-bad" --format gif

rm -rf "$work"
finish_manifest command_outputs outputs "$out" "$manifest"
