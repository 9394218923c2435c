// CUDA Graph capture and replay (runtime API only, so compiled as host C++).
#include "kernels/common/cuda/graph.h"

#include "kernels/common/cuda/check.h"

namespace gtb::cuda {

CapturedGraph::CapturedGraph(cudaStream_t s, const std::function<void(cudaStream_t)>& enqueue) {
  GTB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue(s);
  } catch (...) {
    // End the capture so the stream is usable again; the partial graph is discarded. An invalidated
    // capture's end fails and leaves its error as the thread's last error, which the next launch
    // check would report as its own: cleared.
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(s, &partial) == cudaSuccess) {
      if (partial) cudaGraphDestroy(partial);
    } else {
      (void)cudaGetLastError();
    }
    throw;
  }
  const cudaError_t ended = cudaStreamEndCapture(s, &graph_);
  if (ended != cudaSuccess) {
    (void)cudaGetLastError();  // reported here, not by the next launch check
    if (graph_) cudaGraphDestroy(graph_);
    graph_ = nullptr;
    throw_cuda_error(ended, "cudaStreamEndCapture(s, &graph_)", __FILE__, __LINE__);
  }
  try {
    GTB_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &nodes_));
    GTB_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  } catch (...) {
    cudaGraphDestroy(graph_);
    throw;
  }
}

CapturedGraph::~CapturedGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void CapturedGraph::launch(cudaStream_t s) const { GTB_CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

}  // namespace gtb::cuda
