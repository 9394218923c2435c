// A stream's work captured once as an executable CUDA Graph and replayed with one launch: one
// definition for the elementwise chains and the training steps.
#pragma once

#include <cstddef>
#include <functional>

#include <cuda_runtime_api.h>

namespace gtb::cuda {

class CapturedGraph {
 public:
  // Runs enqueue(s) under stream capture (nothing executes), then instantiates the graph. An
  // enqueue that throws ends the capture (the stream stays usable) and passes the exception on.
  CapturedGraph(cudaStream_t s, const std::function<void(cudaStream_t)>& enqueue);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(cudaStream_t s) const;
  std::size_t nodes() const { return nodes_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;
};

}  // namespace gtb::cuda
