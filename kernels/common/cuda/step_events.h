// What the CUDA training steps share: setup copies ordered on the step's stream, the events around
// each operation of a step while a profiling window is open (a busy fraction, a per-part breakdown),
// and the step captured once into a CUDA Graph. Include only from code compiled when GTB_HAVE_CUDA
// is defined.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/graph.h"
#include "kernels/common/cuda/memory.h"

namespace gtb::cuda {

// Setup copies are ordered on the model's stream and waited for: the stream is non-blocking, so work
// on the legacy default stream (plain cudaMemcpy) would not be ordered before the step's kernels.
inline void h2d_sync(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
  GTB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
  GTB_CUDA_CHECK(cudaStreamSynchronize(s));
}
inline std::vector<float> d2h_sync(const float* src, std::size_t n, cudaStream_t s) {
  std::vector<float> h(n);
  GTB_CUDA_CHECK(cudaMemcpyAsync(h.data(), src, n * 4, cudaMemcpyDeviceToHost, s));
  GTB_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

// A pair of events around each operation enqueued while the window is open; outside it an
// operation runs bare. The events a window needs are made before it opens (reserve), so that
// creating them is not counted in it.
class OpEvents {
 public:
  void reserve(std::size_t events) {
    while (events_.size() < events) events_.push_back(std::make_unique<Event>());
  }
  bool open() const { return open_; }
  // Enqueues the operation `f` on `s`, between two recorded events while the window is open.
  template <class F>
  void around(cudaStream_t s, F&& f) {
    if (!open_) {
      f();
      return;
    }
    reserve(used_ + 2);
    events_[used_]->record(s);
    f();
    events_[used_ + 1]->record(s);
    used_ += 2;
  }
  // Opens the window, runs `run` (which enqueues and synchronizes), closes it, also on a throw.
  template <class F>
  void window(F&& run) {
    open_ = true;
    used_ = 0;
    try {
      run();
    } catch (...) {
      open_ = false;
      throw;
    }
    open_ = false;
  }
  // The operations of the last window and the device seconds of the i-th.
  std::size_t ops() const { return used_ / 2; }
  double seconds(std::size_t i) const { return elapsed_seconds(*events_[2 * i], *events_[2 * i + 1]); }

 private:
  bool open_ = false;
  std::vector<std::unique_ptr<Event>> events_;
  std::size_t used_ = 0;
};

// One training step captured into a CUDA Graph (the first capture stays) and replayed.
class StepGraph {
 public:
  bool captured() const { return graph_ != nullptr; }
  std::size_t nodes() const { return graph_ ? graph_->nodes() : 0; }
  void reset() { graph_.reset(); }
  // Drains `s`, then captures the step `enqueue` puts on it; nothing when a graph is captured.
  void capture(cudaStream_t s, const std::function<void(cudaStream_t)>& enqueue) {
    if (graph_) return;
    GTB_CUDA_CHECK(cudaStreamSynchronize(s));
    graph_ = std::make_unique<CapturedGraph>(s, enqueue);
  }
  // `owner` names the model in the error when nothing was captured.
  void replay(cudaStream_t s, const char* owner) const {
    if (!graph_) throw std::logic_error(std::string(owner) + "::replay: no graph captured");
    graph_->launch(s);
  }

 private:
  std::unique_ptr<CapturedGraph> graph_;
};

}  // namespace gtb::cuda
