// oneDNN 3 loaded at run time (dlopen into a scope of its own) and called through its C API's handle.
// This is the one source compiled with oneDNN 3's headers (cmake/GtbOneDNN3.cmake); it includes no
// header of Debian's oneDNN 2.6, and the C++ API (dnnl.hpp, whose inline functions would call the
// process's linked 2.6) is not used here.
#include "kernels/common/cpu/dnnl3.h"

#include <mutex>
#include <stdexcept>

#include "kernels/common/errors.h"

#if GTB_HAVE_DNNL3
#include "kernels/common/cpu/loader.h"
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_version.h>
static_assert(DNNL_VERSION_MAJOR >= 3, "kernels/common/cpu/dnnl3.cpp must be compiled with oneDNN 3's headers");
#endif

namespace gtb::cpu::dnnl3 {

#if GTB_HAVE_DNNL3
namespace {
struct Api : LoadedLibrary {
  decltype(&::dnnl_version) version = nullptr;
  decltype(&::dnnl_get_effective_cpu_isa) get_isa = nullptr;
  decltype(&::dnnl_sgemm) sgemm = nullptr;
  decltype(&::dnnl_engine_create) engine_create = nullptr;
  decltype(&::dnnl_stream_create) stream_create = nullptr;
  decltype(&::dnnl_stream_wait) stream_wait = nullptr;
  decltype(&::dnnl_stream_destroy) stream_destroy = nullptr;
  decltype(&::dnnl_memory_desc_create_with_strides) md_create = nullptr;
  decltype(&::dnnl_memory_desc_destroy) md_destroy = nullptr;
  decltype(&::dnnl_memory_create) memory_create = nullptr;
  decltype(&::dnnl_memory_destroy) memory_destroy = nullptr;
  decltype(&::dnnl_primitive_attr_create) attr_create = nullptr;
  decltype(&::dnnl_primitive_attr_destroy) attr_destroy = nullptr;
  decltype(&::dnnl_primitive_attr_set_post_ops) attr_set_post_ops = nullptr;
  decltype(&::dnnl_post_ops_create) post_ops_create = nullptr;
  decltype(&::dnnl_post_ops_destroy) post_ops_destroy = nullptr;
  decltype(&::dnnl_post_ops_append_sum) post_ops_append_sum = nullptr;
  decltype(&::dnnl_matmul_primitive_desc_create) matmul_pd_create = nullptr;
  decltype(&::dnnl_primitive_desc_query) pd_query = nullptr;
  decltype(&::dnnl_primitive_desc_destroy) pd_destroy = nullptr;
  decltype(&::dnnl_primitive_create) primitive_create = nullptr;
  decltype(&::dnnl_primitive_destroy) primitive_destroy = nullptr;
  decltype(&::dnnl_primitive_execute) primitive_execute = nullptr;
  dnnl_engine_t engine = nullptr;
};

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    // RTLD_LOCAL keeps its names out of the process's scope (where Debian's oneDNN 2.6 answers the
    // linked code); RTLD_DEEPBIND makes its own calls to the names both export (the C API and
    // dnnl::impl) resolve inside itself rather than in 2.6.
    if (!a.open("oneDNN 3", GTB_DNNL3_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)) return;
    a.bind(a.version, "dnnl_version");
    a.bind(a.get_isa, "dnnl_get_effective_cpu_isa");
    a.bind(a.sgemm, "dnnl_sgemm");
    a.bind(a.engine_create, "dnnl_engine_create");
    a.bind(a.stream_create, "dnnl_stream_create");
    a.bind(a.stream_wait, "dnnl_stream_wait");
    a.bind(a.stream_destroy, "dnnl_stream_destroy");
    a.bind(a.md_create, "dnnl_memory_desc_create_with_strides");
    a.bind(a.md_destroy, "dnnl_memory_desc_destroy");
    a.bind(a.memory_create, "dnnl_memory_create");
    a.bind(a.memory_destroy, "dnnl_memory_destroy");
    a.bind(a.attr_create, "dnnl_primitive_attr_create");
    a.bind(a.attr_destroy, "dnnl_primitive_attr_destroy");
    a.bind(a.attr_set_post_ops, "dnnl_primitive_attr_set_post_ops");
    a.bind(a.post_ops_create, "dnnl_post_ops_create");
    a.bind(a.post_ops_destroy, "dnnl_post_ops_destroy");
    a.bind(a.post_ops_append_sum, "dnnl_post_ops_append_sum");
    a.bind(a.matmul_pd_create, "dnnl_matmul_primitive_desc_create");
    a.bind(a.pd_query, "dnnl_primitive_desc_query");
    a.bind(a.pd_destroy, "dnnl_primitive_desc_destroy");
    a.bind(a.primitive_create, "dnnl_primitive_create");
    a.bind(a.primitive_destroy, "dnnl_primitive_destroy");
    a.bind(a.primitive_execute, "dnnl_primitive_execute");
    if (!a.reason.empty()) return;
    if (a.version()->major < 3) {
      a.reason = std::string("the library at ") + GTB_DNNL3_LIBRARY + " is oneDNN " + std::to_string(a.version()->major) +
                 ", not 3 or later";
      return;
    }
    if (a.engine_create(&a.engine, dnnl_cpu, 0) != dnnl_success) a.reason = "oneDNN 3 could not create its CPU engine";
  });
  return a;
}

void check(dnnl_status_t st, const char* what) {
  if (st == dnnl_success) return;
  throw std::runtime_error(std::string("oneDNN 3: ") + what + " failed with status " + std::to_string(int(st)));
}

const char* isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx2_vnni_2: return "avx2_vnni_2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_fp16: return "avx512_core_fp16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx512_core_amx_fp16: return "avx512_core_amx_fp16";
    default: return "default";
  }
}
}  // namespace

bool built() { return true; }
bool available() { return api().reason.empty(); }
std::string unavailable_reason() { return api().reason; }

std::string version() {
  if (!available()) return "";
  const dnnl_version_t* v = api().version();
  std::string out = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  if (v->hash && *v->hash) out += std::string(" (") + std::string(v->hash).substr(0, 8) + ")";
  return out;
}
std::string isa() { return available() ? isa_name(api().get_isa()) : ""; }
std::string threading() { return "GNU OpenMP (the process's libgomp)"; }

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  require();
  check(api().sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), "dnnl_sgemm");
}

struct Matmul::Impl {
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_desc_t a_md = nullptr, b_md = nullptr, c_md = nullptr;
  dnnl_stream_t stream = nullptr;
  std::string impl;
  std::mutex mu;  // one execution at a time on the stream
  ~Impl() {
    Api& x = api();
    if (prim) x.primitive_destroy(prim);
    if (pd) x.pd_destroy(pd);
    for (dnnl_memory_desc_t md : {a_md, b_md, c_md})
      if (md) x.md_destroy(md);
    if (stream) x.stream_destroy(stream);
  }
};

Matmul::Matmul(bool bf16, bool ta, bool tb, int m, int n, int k, int ldc, float beta) : p_(new Impl) {
  require();
  if (m <= 0 || n <= 0 || k <= 0 || ldc < n)
    throw std::invalid_argument("oneDNN 3 matmul: m, n and k must be positive and ldc at least n");
  Api& x = api();
  Impl& s = *p_;
  const dnnl_data_type_t t = bf16 ? dnnl_bf16 : dnnl_f32;
  const dnnl_dims_t a_dims = {m, k}, b_dims = {k, n}, c_dims = {m, n};
  const dnnl_dims_t a_strides = {ta ? 1 : k, ta ? m : 1}, b_strides = {tb ? 1 : n, tb ? k : 1}, c_strides = {ldc, 1};
  check(x.md_create(&s.a_md, 2, a_dims, t, a_strides), "memory descriptor");
  check(x.md_create(&s.b_md, 2, b_dims, t, b_strides), "memory descriptor");
  check(x.md_create(&s.c_md, 2, c_dims, dnnl_f32, c_strides), "memory descriptor");
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t po = nullptr;
  check(x.attr_create(&attr), "attributes");
  if (beta != 0.0f) {
    check(x.post_ops_create(&po), "post-ops");
    check(x.post_ops_append_sum(po, beta, 0, dnnl_data_type_undef), "sum post-op");
    check(x.attr_set_post_ops(attr, po), "post-ops");
  }
  const dnnl_status_t st = x.matmul_pd_create(&s.pd, x.engine, s.a_md, s.b_md, nullptr, s.c_md, attr);
  if (po) x.post_ops_destroy(po);
  x.attr_destroy(attr);
  if (st == dnnl_unimplemented)
    throw gtb::Skip(version() + " has no " + (bf16 ? "BF16" : "FP32") + " matmul implementation for this CPU (ISA " +
                    isa() + ")");
  check(st, "matmul primitive descriptor");
  const char* info = nullptr;
  check(x.pd_query(s.pd, dnnl_query_impl_info_str, 0, &info), "implementation query");
  s.impl = info ? info : "";
  check(x.primitive_create(&s.prim, s.pd), "matmul primitive");
  check(x.stream_create(&s.stream, x.engine, dnnl_stream_default_flags), "stream");
}

Matmul::~Matmul() = default;

void Matmul::run(const void* a, const void* b, float* c) const {
  Api& x = api();
  Impl& s = *p_;
  std::lock_guard<std::mutex> lock(s.mu);
  dnnl_memory_t am = nullptr, bm = nullptr, cm = nullptr;
  // oneDNN's API takes non-const handles; A and B are only read.
  dnnl_status_t st = x.memory_create(&am, s.a_md, x.engine, const_cast<void*>(a));
  if (st == dnnl_success) st = x.memory_create(&bm, s.b_md, x.engine, const_cast<void*>(b));
  if (st == dnnl_success) st = x.memory_create(&cm, s.c_md, x.engine, c);
  if (st == dnnl_success) {
    const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    st = x.primitive_execute(s.prim, s.stream, 3, args);
    if (st == dnnl_success) st = x.stream_wait(s.stream);
  }
  for (dnnl_memory_t mem : {am, bm, cm})
    if (mem) x.memory_destroy(mem);
  check(st, "matmul execution");
}

std::string Matmul::impl() const { return p_->impl; }

std::string native_bf16_unavailable() {
  static const std::string why = []() -> std::string {
    if (!available()) return unavailable_reason();
    try {
      const Matmul probe(true, false, false, 64, 64, 64, 64, 0.0f);
      if (probe.reference())
        return version() + " has only its reference BF16 matmul (" + probe.impl() + ") on this CPU (ISA " + isa() + ")";
      return "";
    } catch (const gtb::Skip& e) {
      return e.what();
    }
  }();
  return why;
}

#else  // !GTB_HAVE_DNNL3

#ifndef GTB_DNNL3_REASON
#define GTB_DNNL3_REASON "built without oneDNN 3"
#endif
struct Matmul::Impl {};
bool built() { return false; }
bool available() { return false; }
std::string unavailable_reason() { return GTB_DNNL3_REASON; }
std::string version() { return ""; }
std::string isa() { return ""; }
std::string threading() { return ""; }
void sgemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) { require(); }
Matmul::Matmul(bool, bool, bool, int, int, int, int, float) { require(); }
Matmul::~Matmul() = default;
void Matmul::run(const void*, const void*, float*) const { require(); }
std::string Matmul::impl() const { return ""; }
std::string native_bf16_unavailable() { return unavailable_reason(); }

#endif

void require() {
  if (!available()) throw gtb::Skip(unavailable_reason());
}

}  // namespace gtb::cpu::dnnl3
