// cuBLASLt GEMM for the GEMM family: a workspace, the heuristic's first algorithm, and what it chose
// (algorithm id, tile, stages, split-k, waves) so a record can say which kernel it timed.
#pragma once

#include <cstddef>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/common/cuda/memory.h"
#include "kernels/gemm/cuda/gemm.h"

namespace gtb::cuda {

// The chosen algorithm's configuration; an attribute cuBLASLt could not report is -1.
struct LtAlgo {
  int algo_id = -1;
  int tile_id = 0;
  std::string tile;          // "128x256", or "id N" for tiles outside the named subset
  int stages_id = 0;
  int splitk = 0;
  int reduction_scheme = 0;
  int cta_swizzling = 0;
  int custom_option = 0;
  int cluster_shape_id = 0;
  float waves_count = 0;     // the heuristic's own estimate (1.0 fills the GPU once)
  std::size_t workspace_bytes = 0;  // what the algorithm needs of the workspace
  int candidates = 0;        // algorithms the heuristic returned
};

std::string lt_tile_name(int tile_id);

// Row-major C = A * B for the operands' precision through cublasLtMatmul (same column-major
// identity as gemm_cublas). The plan (descriptors, algorithm) is made once, at construction, which
// throws gtb::Skip when the heuristic has no algorithm for the problem (gemm_lt_choice.h).
class LtGemm {
 public:
  static constexpr std::size_t kDefaultWorkspace = 32u << 20;  // NVIDIA's advice for Hopper
  LtGemm(const GemmOperands& ops, std::size_t workspace_bytes = kDefaultWorkspace);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  void run(const GemmOperands& ops, cudaStream_t s) const;
  const LtAlgo& algo() const { return algo_; }

 private:
  void plan(const GemmOperands& ops, std::size_t workspace_bytes);
  void release() noexcept;
  cublasLtHandle_t h_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_raw_{};
  LtAlgo algo_;
  DeviceBuffer ws_;
  bool half_scale_ = false;
};

}  // namespace gtb::cuda
