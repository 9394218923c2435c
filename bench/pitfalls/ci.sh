# The pitfalls family in ci/ (ci/families.sh): no role. Its flag kernels are built once per variant
# and name it (GTB_PF_*), so ci/static-checks.sh compiles every kernels/*/cuda/*.cu with these.
ci_roles=()
sc_nvflags+=(-DGTB_PF_VARIANT=static_check '-DGTB_PF_FLAGS="static-checks"')
