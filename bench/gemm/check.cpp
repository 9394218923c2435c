// Records a GEMM accuracy check on its case.
#include "bench/gemm/check.h"

#include <cmath>

#include "kernels/gemm/cpu/gemm.h"

namespace gtb::gemm {

bool record_gemm_check(gtb::State& st, const float* c, int m, int n, const std::vector<int>& rows,
                       const std::vector<double>& ref_rows, double tol) {
  const cpu::GemmCheck chk = cpu::check_gemm(c, m, n, rows, ref_rows, tol);
  json data = {{"tolerance", chk.tolerance}, {"rows_checked", chk.rows_checked}, {"nonfinite", chk.nonfinite}};
  // A NaN in C makes the error NaN; results files never hold non-finite numbers, the detail says it.
  if (std::isfinite(chk.rel_fro_err)) data["rel_fro_err"] = chk.rel_fro_err;
  st.check(chk.ok, chk.detail, data);
  if (std::isfinite(chk.rel_fro_err)) st.counter("rel_fro_err", chk.rel_fro_err, "");
  st.counter("tolerance", chk.tolerance, "");
  return chk.ok;
}

}  // namespace gtb::gemm
