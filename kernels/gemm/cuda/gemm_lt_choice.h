// What cuBLASLt's heuristic answer means for a case: use its first algorithm, skip (no algorithm for
// this problem), or fail. No cuBLAS header, so that the rule is tested on machines without CUDA.
#pragma once

#include <string>

namespace gtb::cuda {

// cublasStatus_t values the rule needs (gemm_lt.cpp checks them against cublas_api.h).
inline constexpr int kLtStatusSuccess = 0;        // CUBLAS_STATUS_SUCCESS
inline constexpr int kLtStatusNotSupported = 15;  // CUBLAS_STATUS_NOT_SUPPORTED

// What cublasLtMatmulAlgoGetHeuristic said, with the names of its codes (cublasGetStatusName).
struct LtHeuristicAnswer {
  int status = kLtStatusSuccess;
  std::string status_name;
  int returned = 0;                     // results it returned
  int first_state = kLtStatusSuccess;   // results[0].state, when returned > 0
  std::string first_state_name;
};

struct LtChoice {
  enum class Kind { use_first, skip, fail };
  Kind kind = Kind::fail;
  std::string detail;  // for skip and fail: what the heuristic answered, for which problem
};

// No algorithm at all (NOT_SUPPORTED, or success with no usable result: cuBLASLt has no kernel for
// this shape, precision and alignment, as for some odd 16-bit shapes) is a property of the library,
// not a fault: the case is skipped with the answer. Any other status is an error. `problem` names
// the precision and shape ("fp16_fp32acc m=2047 n=2047 k=2047 ...").
inline LtChoice choose_lt_algorithm(const LtHeuristicAnswer& a, const std::string& problem) {
  LtChoice c;
  const std::string said = "cublasLtMatmulAlgoGetHeuristic returned " + a.status_name + " with " +
                           std::to_string(a.returned) + " result(s)";
  if (a.status == kLtStatusSuccess && a.returned > 0 && a.first_state == kLtStatusSuccess) {
    c.kind = LtChoice::Kind::use_first;
    return c;
  }
  if (a.status == kLtStatusNotSupported || (a.status == kLtStatusSuccess && a.returned <= 0)) {
    c.kind = LtChoice::Kind::skip;
    c.detail = "cuBLASLt has no algorithm for " + problem + ": " + said;
    return c;
  }
  if (a.status == kLtStatusSuccess) {  // results, but the first is not usable
    c.kind = LtChoice::Kind::skip;
    c.detail = "cuBLASLt has no usable algorithm for " + problem + ": " + said + ", the first in state " +
               a.first_state_name;
    return c;
  }
  c.kind = LtChoice::Kind::fail;
  c.detail = "cuBLASLt heuristic failed for " + problem + ": " + said;
  return c;
}

}  // namespace gtb::cuda
