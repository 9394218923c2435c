// oneDNN matmul in FP32/BF16/FP16 for the CPU side of the GEMM family (a skip where oneDNN is missing).
#include "kernels/gemm/cpu/gemm_dnnl.h"

#include <stdexcept>

#include "kernels/common/errors.h"

#if GTB_HAVE_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace gtb::cpu {

#if GTB_HAVE_DNNL

struct DnnlMatmul::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory a, b, c;
  int m = 0, n = 0;
};

DnnlMatmul::DnnlMatmul(Type type, int m, int n, int k, const float* a, const float* b) : p_(new Impl) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("DnnlMatmul: m, n and k must be positive");
  const dt t = type == Type::f32 ? dt::f32 : type == Type::bf16 ? dt::bf16 : dt::f16;
  const char* tname = type == Type::f32 ? "f32" : type == Type::bf16 ? "bf16" : "f16";
  const dnnl::memory::dims ad = {m, k}, bd = {k, n}, cd = {m, n};
  const dnnl::memory::desc a_md(ad, t, tag::ab), b_md(bd, t, tag::ab), c_md(cd, t, tag::ab);
  Impl& s = *p_;
  s.m = m, s.n = n;
  try {
    s.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), s.eng);
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented)
      throw gtb::Skip(std::string("oneDNN ") + dnnl_version() + " has no " + tname +
                      " matmul implementation for this CPU (" + e.what() + ")");
    throw std::runtime_error(std::string("oneDNN matmul ") + tname + ": " + e.what());
  }
  s.prim = dnnl::matmul(s.pd);
  s.a = dnnl::memory(s.pd.src_desc(), s.eng);
  s.b = dnnl::memory(s.pd.weights_desc(), s.eng);
  s.c = dnnl::memory(s.pd.dst_desc(), s.eng);
  // The f32 sources are only read by the reorders; oneDNN's API takes a non-const handle.
  dnnl::memory a32({ad, dt::f32, tag::ab}, s.eng, const_cast<float*>(a));
  dnnl::memory b32({bd, dt::f32, tag::ab}, s.eng, const_cast<float*>(b));
  dnnl::reorder(a32, s.a).execute(s.strm, a32, s.a);
  dnnl::reorder(b32, s.b).execute(s.strm, b32, s.b);
  s.strm.wait();
}

DnnlMatmul::~DnnlMatmul() = default;

void DnnlMatmul::run() {
  p_->prim.execute(p_->strm, {{DNNL_ARG_SRC, p_->a}, {DNNL_ARG_WEIGHTS, p_->b}, {DNNL_ARG_DST, p_->c}});
  p_->strm.wait();
}

void DnnlMatmul::result(float* c) const {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  Impl& s = *p_;
  dnnl::memory c32({{s.m, s.n}, dt::f32, tag::ab}, s.eng, c);
  dnnl::reorder(s.c, c32).execute(s.strm, s.c, c32);
  s.strm.wait();
}

std::string DnnlMatmul::impl() const { return p_->pd.impl_info_str(); }

int DnnlMatmul::threads() const { return omp_get_max_threads(); }

#else  // !GTB_HAVE_DNNL


struct DnnlMatmul::Impl {};

DnnlMatmul::DnnlMatmul(Type type, int, int, int, const float*, const float*) {
  if (type == Type::f32) throw gtb::Skip("built without oneDNN (libdnnl-dev)");
  throw gtb::Skip(std::string("built without oneDNN (libdnnl-dev): no CPU library here provides ") +
                  (type == Type::bf16 ? "BF16" : "FP16") + " GEMM (OpenBLAS 0.3.21 exports no sbgemm)");
}
DnnlMatmul::~DnnlMatmul() = default;
void DnnlMatmul::run() {}
void DnnlMatmul::result(float*) const {}
std::string DnnlMatmul::impl() const { return ""; }
int DnnlMatmul::threads() const { return 0; }

#endif

}  // namespace gtb::cpu
