// A training step captured once as a CUDA Graph and replayed: one definition for every GPU step.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/check.h"

namespace gtb::cuda {

class StepGraph {
 public:
  StepGraph() = default;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  ~StepGraph() { reset(); }

  // Captures what `step` enqueues on `s`, once (later calls keep the first graph). A step that
  // throws ends the capture, drops what was captured and passes the exception on.
  void capture(cudaStream_t s, const std::function<void()>& step) {
    if (exec_) return;
    GTB_CUDA_CHECK(cudaStreamSynchronize(s));
    GTB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      step();
    } catch (...) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(s, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    GTB_CUDA_CHECK(cudaStreamEndCapture(s, &graph_));
    GTB_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
    GTB_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &nodes_));
  }
  // `owner` names the step in the error when nothing was captured.
  void replay(cudaStream_t s, const char* owner) const {
    if (!exec_) throw std::logic_error(std::string(owner) + ": no graph captured");
    GTB_CUDA_CHECK(cudaGraphLaunch(exec_, s));
  }
  void reset() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr, graph_ = nullptr, nodes_ = 0;
  }
  bool captured() const { return exec_ != nullptr; }
  std::size_t nodes() const { return nodes_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;
};

}  // namespace gtb::cuda
