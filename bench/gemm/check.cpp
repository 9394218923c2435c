// Records a GEMM accuracy check on its case.
#include "bench/gemm/check.h"

#include <cmath>
#include <stdexcept>

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

long first_wrong_sgd_update(const std::vector<float>& w0, const std::vector<float>& v0, const float* g,
                            const std::vector<float>& w, const std::vector<float>& v, float lr, float mu) {
  if (v0.size() != w0.size() || w.size() != w0.size() || v.size() != w0.size())
    throw std::invalid_argument("first_wrong_sgd_update: the weights, momenta and their updates differ in size");
  for (std::size_t i = 0; i < w0.size(); ++i) {
    const double vm = double(mu) * double(v0[i]) + double(g[i]);
    const double wm = double(w0[i]) - double(lr) * vm;
    // Written so that a NaN fails: every comparison with it is false.
    if (!(std::fabs(v[i] - vm) <= 1e-5 * (std::fabs(vm) + 1.0) && std::fabs(w[i] - wm) <= 1e-6 * (std::fabs(wm) + 1.0)))
      return long(i);
  }
  return -1;
}

}  // namespace gtb::gemm
