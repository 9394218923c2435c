# Sourced by the byte-identity scripts (command_outputs.sh, model_outputs.sh): sum every answer in
# OUTDIR into OUTDIR/manifest.sha256 and, given a MANIFEST, name each answer whose sum differs.
#
#   finish_manifest SCRIPT NOUN OUTDIR [MANIFEST]   exits 0 (as before, or no MANIFEST) or 1
finish_manifest() {
  fm_script=$1 fm_noun=$2 fm_out=$3 fm_manifest=${4:-}
  (cd "$fm_out" && find . -maxdepth 1 -type f ! -name 'manifest.sha256*' | sed 's|^\./||' | LC_ALL=C sort |
    xargs sha256sum) > "$fm_out/manifest.sha256.tmp"
  mv "$fm_out/manifest.sha256.tmp" "$fm_out/manifest.sha256"
  if [ -z "$fm_manifest" ]; then
    echo "$fm_script: $(wc -l < "$fm_out/manifest.sha256") $fm_noun in $fm_out/manifest.sha256"
    exit 0
  fi
  if cmp -s "$fm_manifest" "$fm_out/manifest.sha256"; then
    echo "$fm_script: $(wc -l < "$fm_manifest") $fm_noun as before"
    exit 0
  fi
  echo "$fm_script: $fm_noun that differ from $fm_manifest (outputs in $fm_out):"
  diff "$fm_manifest" "$fm_out/manifest.sha256" | sed -n 's/^[<>] [0-9a-f]*  //p' | LC_ALL=C sort -u | sed 's/^/  /'
  exit 1
}
