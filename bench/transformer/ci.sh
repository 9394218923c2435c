# The transformer family in ci/ (roles: ci/families.sh). Its PyTorch yardstick
# (bench/transformer/torch-cpu-step.py --check) runs as a CTest test, correctness only, skipped where
# torch is not installed. Its GPU records run in ci/gpu-check.sh's GPU passes like every family's.
ci_roles=()
