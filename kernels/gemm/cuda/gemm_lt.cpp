// cuBLASLt GEMM with a workspace and a heuristic algorithm choice, recording what was chosen.
#include "kernels/gemm/cuda/gemm_lt.h"

#include <cstdint>
#include <stdexcept>

#include "kernels/common/cuda/blas.h"
#include "kernels/common/errors.h"
#include "kernels/gemm/cuda/gemm_lt_choice.h"
#include "kernels/gemm/gemm.h"

namespace gtb::cuda {

static_assert(CUBLAS_STATUS_SUCCESS == kLtStatusSuccess && CUBLAS_STATUS_NOT_SUPPORTED == kLtStatusNotSupported,
              "gemm_lt_choice.h's status codes must be cuBLAS's");

std::string lt_tile_name(int id) {
  // The tiles cuBLASLt's tensor-core and SIMT kernels use most; the enum has hundreds more.
  static const char* const names[] = {"undefined", "8x8",     "8x16",    "16x8",    "8x32",    "16x16",
                                      "32x8",      "8x64",    "16x32",   "32x16",   "64x8",    "32x32",
                                      "32x64",     "64x32",   "32x128",  "64x64",   "128x32",  "64x128",
                                      "128x64",    "64x256",  "128x128", "256x64",  "64x512",  "128x256",
                                      "256x128",   "512x64",  "64x96",   "96x64",   "96x128",  "128x160",
                                      "160x128",   "192x128", "128x192", "128x96",  "32x256",  "256x32"};
  if (id >= 0 && id < int(sizeof(names) / sizeof(names[0]))) return names[id];
  if (id == CUBLASLT_MATMUL_TILE_256x256) return "256x256";
  return "id " + std::to_string(id);
}

namespace {
// Each attribute has its own width (CLUSTER_SHAPE_ID is 16-bit, the others 32-bit): a read with the
// wrong size fails. -1 says "could not be read", so a failed read never passes for a real 0.
template <class T>
int config_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS ||
      written != sizeof v)
    return -1;
  return int(v);
}
}  // namespace

LtGemm::LtGemm(const GemmOperands& o, std::size_t workspace_bytes) {
  // A constructor that throws runs no destructor: release what was made before rethrowing (an
  // out-of-memory workspace or an unsupported shape must not leak a handle per skipped case).
  try {
    plan(o, workspace_bytes);
  } catch (...) {
    release();
    throw;
  }
}

void LtGemm::plan(const GemmOperands& o, std::size_t workspace_bytes) {
  const Precision p = o.precision();
  const cudaDataType_t in = input_type(p), out = output_type(p);
  const cublasComputeType_t ct = compute_type(p);
  half_scale_ = ct == CUBLAS_COMPUTE_16F;
  const cudaDataType_t scale = half_scale_ ? CUDA_R_16F : CUDA_R_32F;
  GTB_CUBLAS_CHECK(cublasLtCreate(&h_));
  GTB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, ct, scale));
  // Column-major view: C^T (n x m) = B^T (n x k) * A^T (k x m).
  GTB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, in, std::uint64_t(o.n()), std::uint64_t(o.k()), o.n()));
  GTB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb_, in, std::uint64_t(o.k()), std::uint64_t(o.m()), o.k()));
  GTB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc_, out, std::uint64_t(o.n()), std::uint64_t(o.m()), o.n()));
  cublasLtMatmulPreference_t pref = nullptr;
  GTB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int returned = 0;
  const cublasStatus_t st = [&] {
    const std::uint64_t limit = workspace_bytes;  // the attribute is a uint64_t
    cublasStatus_t s =
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    return cublasLtMatmulAlgoGetHeuristic(h_, desc_, la_, lb_, lc_, lc_, pref, 8, results, &returned);
  }();
  cublasLtMatmulPreferenceDestroy(pref);
  LtHeuristicAnswer answer;
  answer.status = int(st);
  answer.status_name = cublasGetStatusName(st);
  answer.returned = returned;
  if (returned > 0) {
    answer.first_state = int(results[0].state);
    answer.first_state_name = cublasGetStatusName(results[0].state);
  }
  const std::string problem = std::string(to_string(p)) + " m=" + std::to_string(o.m()) + " n=" +
                              std::to_string(o.n()) + " k=" + std::to_string(o.k()) + " (row-major, " +
                              std::to_string(workspace_bytes) + "-byte workspace, cuBLASLt " + cublas_version() + ")";
  const LtChoice choice = choose_lt_algorithm(answer, problem);
  if (choice.kind == LtChoice::Kind::skip) throw Skip(choice.detail);
  if (choice.kind == LtChoice::Kind::fail) throw std::runtime_error(choice.detail);
  // The heuristic's first choice: what frameworks using cuBLASLt without autotuning get.
  const cublasLtMatmulHeuristicResult_t& best = results[0];
  algo_raw_ = best.algo;
  algo_.candidates = returned;
  algo_.waves_count = best.wavesCount;
  algo_.workspace_bytes = best.workspaceSize;
  algo_.algo_id = config_attr<std::int32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_ID);
  algo_.tile_id = config_attr<std::uint32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_TILE_ID);
  algo_.tile = lt_tile_name(algo_.tile_id);
  algo_.stages_id = config_attr<std::uint32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  algo_.splitk = config_attr<std::int32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  algo_.reduction_scheme = config_attr<std::uint32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  algo_.cta_swizzling = config_attr<std::uint32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  algo_.custom_option = config_attr<std::uint32_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  algo_.cluster_shape_id = config_attr<std::uint16_t>(algo_raw_, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  if (workspace_bytes > 0) ws_ = DeviceBuffer(workspace_bytes);
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() noexcept {
  if (lc_) cublasLtMatrixLayoutDestroy(lc_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  if (h_) cublasLtDestroy(h_);
  lc_ = lb_ = la_ = nullptr;
  desc_ = nullptr;
  h_ = nullptr;
}

void LtGemm::run(const GemmOperands& o, cudaStream_t s) const {
  const float one = 1.0f, zero = 0.0f;
  const std::uint16_t one_h = gemm::float_to_half(1.0f), zero_h = 0;
  const void* alpha = half_scale_ ? static_cast<const void*>(&one_h) : static_cast<const void*>(&one);
  const void* beta = half_scale_ ? static_cast<const void*>(&zero_h) : static_cast<const void*>(&zero);
  GTB_CUBLAS_CHECK(cublasLtMatmul(h_, desc_, alpha, o.b(), la_, o.a(), lb_, beta, o.c(), lc_, o.c(), lc_, &algo_raw_,
                                  ws_.get(), ws_.bytes(), s));
}

}  // namespace gtb::cuda
