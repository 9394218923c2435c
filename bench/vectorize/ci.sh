# The vectorize family in ci/ (roles: ci/families.sh), and what ci/static-checks.sh checks of it:
# its vec4 kernels load and store 128 bits at a time (PTX, SASS); its scalar CPU loops are scalar
# and its vectorized ones are not (in the family's kernel library, --cpu-lib).
ci_roles=(aa-ab calibrate calibrate-ab)
sc_vec4_sources+=(kernels/vectorize/cuda/vectorize.cu)
sc_vec4_pattern=vec4_kernel      # the kernels that must use 128-bit accesses
sc_vec4_planted=scalar_kernel    # --plant vec4: one-thread-per-element kernels, which must fail
sc_scalar_fns+=(gtb::cpu::axpy_scalar gtb::cpu::chain_scalar)
sc_vector_fns+=(gtb::cpu::axpy_autovec gtb::cpu::chain_autovec gtb::cpu::axpy_openmp gtb::cpu::chain_openmp)
sc_cpu_planted=(gtb::cpu::axpy_autovec gtb::cpu::chain_autovec)  # --plant cpu: checked as scalar, must fail
sc_cpu_lib_target=gtb_vectorize_kernels  # the library --cpu-lib names
