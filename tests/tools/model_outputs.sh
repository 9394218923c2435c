#!/bin/sh
# The cost model's answers on the committed results files, byte for byte: gtb advise (text, Markdown,
# JSON) for a set of steps, gtb report, gtb diagnose priced through a results file's cost terms, and
# the verdict's headline that ends gtb run. Each answer (stdout, stderr and exit status) is written to
# OUTDIR, and their SHA-256 sums to OUTDIR/manifest.sha256; with MANIFEST the sums are compared to it
# and every answer that differs is named (exit 1).
#
#   usage: model_outputs.sh GTB HEADLINE SOURCE_DIR OUTDIR [MANIFEST]
#   HEADLINE: the program printing render_headline for a results file (tests/tools/model_headline.cpp)
#
# A change meant to alter an answer regenerates the manifest with this script (no MANIFEST) and says
# why in its commit; a refactoring leaves it as it is.
set -u
[ $# -ge 4 ] || { echo "usage: model_outputs.sh GTB HEADLINE SOURCE_DIR OUTDIR [MANIFEST]" >&2; exit 2; }
gtb=$1 headline=$2 src=$3 out=$4 manifest=${5:-}
rm -rf "$out" && mkdir -p "$out" || exit 2
# Absolute paths, then the answers read the inputs by paths relative to SOURCE_DIR (answers that name
# their file then read the same wherever the tree is).
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
gtb=$(abs "$gtb") headline=$(abs "$headline") out=$(abs "$out")
[ -z "$manifest" ] || manifest=$(abs "$manifest")
. "$(cd "$(dirname "$0")" && pwd)/manifest.sh" || exit 2
cd "$src" || exit 2
src=.

# One answer: its name, then the command; stdout, stderr and the exit status in one file.
answer() {
  name=$1; shift
  "$@" > "$out/$name" 2> "$out/$name.err"
  echo "exit $?" >> "$out/$name.err"
}

results="$src/tests/fixtures/real/results_schema1_amd.json $src/results/gtb-cpu-AMD-EPYC-2vcpu-20261201.json
  $src/results/gtb-cpu-AMD-EPYC-2vcpu-20261201-transformer-full.json $src/results/gtb-cpu-AMD-EPYC-2vcpu-20261203-13.json
  $src/results/gtb-cpu-Intel-Xeon-2vcpu-20261202-8.json $src/tests/fixtures/cost/cost_synthetic.json
  $src/tests/fixtures/cost/cost_bad_pair.json $src/tests/fixtures/cost/old_no_terms.json
  $src/tests/fixtures/diagnose/results_synthetic_a100.json $src/tests/fixtures/gpu_base.json
  $src/tests/fixtures/cpu_b.json"

# The steps asked about: every model kind, and the options each fix and each software reads.
step_1="--model mlp --width 256 --depth 4 --batch 32 --input-bytes 76800 --loss-read-every 1"
step_2="--model mlp --width 1024 --depth 4 --batch 256 --workers 2 --sample-us 50 --redundant-copy batch"
step_3="--model transformer --layers 2 --d-model 256 --heads 4 --seq-len 128 --batch 8 --attention fused --optimizer adam"
step_4="--model generic --params 1e8 --flops-per-sample 1e10 --kernels-per-step 500 --batch 64 --gpus 4 --bucket-mb 25 --micro-batches 2 --cuda-graph"
step_5="--model mlp --width 512 --depth 3 --batch 64 --framework pytorch-eager --gpus 2 --overlap --core-share 0.5 --host-memory pinned --precision bf16"
step_6="--model transformer --layers 4 --d-model 512 --heads 8 --seq-len 256 --batch 16 --precision bf16 --optimizer adamw --framework pytorch-compiled --redundant-copy activation"
step_7="--model mlp --width 2048 --depth 6 --batch 1024 --precision tf32 --optimizer adam --framework pytorch-graph --workers 4 --sample-us 10 --input-bytes 4096 --redundant-copy weights"
step_8="--config $src/tests/fixtures/cost/advise_transformer.json"

for f in $results; do
  base=$(basename "$f" .json)
  answer "report-$base.md" "$gtb" report "$f"
  answer "headline-$base.txt" "$headline" "$f"
  for s in 1 2 3 4 5 6 7 8; do
    eval "step=\$step_$s"
    for fmt in text markdown json; do
      # shellcheck disable=SC2086  # the step's options are words
      answer "advise-$base-step$s.$fmt" "$gtb" advise "$f" $step --format "$fmt"
    done
  done
done
for t in a100-event-sync a100-nccl-3steps a100-train-6steps cpu-only mi250-minitoy-train sampled-rank0-2steps; do
  for r in $src/tests/fixtures/diagnose/results_synthetic_a100.json $src/results/gtb-cpu-AMD-EPYC-2vcpu-20261203-13.json; do
    for fmt in text markdown json; do
      answer "diagnose-$t-$(basename "$r" .json).$fmt" "$gtb" diagnose "$src/tests/fixtures/traces/$t.json.gz" --results "$r" --format "$fmt"
    done
  done
done

finish_manifest model_outputs answers "$out" "$manifest"
