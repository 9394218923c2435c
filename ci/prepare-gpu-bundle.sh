#!/usr/bin/env bash
# Run on a Debian 12 machine with network: downloads the .deb files ci/gpu-check.sh unpacks on a GPU
# machine that has CUDA, CMake and ninja but none of gtb's -dev packages and no network.
# usage: ci/prepare-gpu-bundle.sh [DIR]   (default DIR: .gpu-bundle in the repository; ~21 MB)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.gpu-bundle}
PACKAGES=(
  libbenchmark-dev libbenchmark1debian nlohmann-json3-dev libcli11-dev
  libopenblas-openmp-dev libopenblas0-openmp libgfortran5 libquadmath0 libgomp1
  libgtest-dev libgmock-dev
  libdnnl-dev libdnnl2 ocl-icd-libopencl1
)
mkdir -p "$dir/debs"
cd "$dir/debs"
apt-get update -qq >/dev/null 2>&1 || true
# apt-get download drops privileges to _apt; a world-writable folder keeps that from failing.
chmod 777 .
apt-get download "${PACKAGES[@]}"
ls -1 *.deb > ../MANIFEST
echo "bundle: $(wc -l < ../MANIFEST) packages, $(du -sh . | cut -f1) in $dir"
