// The symptoms of a profiler trace, per ProfilerStep and over the whole trace, as one JSON document
// (the `gtb diagnose --format json` output; text and Markdown are renderings of it).
#pragma once

#include "harness/document/types.h"
#include <string>

#include "harness/driver/diagnose/diagnose_trace.h"

namespace gtb::diagnose {

// Kernel-name rules, exposed for tests and documented in docs/diagnose.md.
enum class GemmKind { not_gemm, tensor_core, simt_fp32, simt_fp64, unknown_gemm };
GemmKind gemm_kind(const std::string& kernel_name);
// "tf32", "bf16", "fp16", "fp8", "int8" or "" (tensor-core kernels whose name says no precision).
std::string tensor_core_precision(const std::string& kernel_name);
bool is_communication(const std::string& kernel_name);

// Copy kind from a Kineto memcpy name: "Memcpy HtoD (Pinned -> Device)" -> {"HtoD", "pinned"}.
struct CopyKind {
  std::string direction;  // HtoD, DtoH, DtoD, HtoH, PtoP or "other"
  std::string memory;     // pinned, pageable, device, or "unknown" (the name does not say)
};
CopyKind copy_kind(const std::string& memcpy_name);

// The whole diagnosis: trace facts, rules, overall and per-step symptoms, what cannot be said. `threads`
// build the steps' sections at once (the document is the same for any count).
json diagnose_trace(const Trace& trace, const std::string& trace_label, unsigned threads = 1);

}  // namespace gtb::diagnose
