// The train family's GPU step (gtb::cuda::mlp::GpuMlp, FP32, eager) inside a training loop with one
// of the habits measured by the pitfalls family: a loss read every k steps, or a redundant copy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/pitfalls/pitfalls.h"
#include "kernels/train/reference.h"

namespace gtb::cuda::mlp {
class GpuMlp;
}

namespace gtb::pitfalls {

class GpuStepLoop {
 public:
  GpuStepLoop(const gtb::mlp::Config& cfg, int batch, Copy copy, int sync_every);
  ~GpuStepLoop();
  GpuStepLoop(const GpuStepLoop&) = delete;
  GpuStepLoop& operator=(const GpuStepLoop&) = delete;

  // One step with the habit in place, verified in float64 by the train family's layer-local checks.
  gtb::mlp::VerifyResult verify_first_step();
  // Enqueues `steps` more steps; only the habit itself waits for the GPU (call sync() to finish).
  void run(std::int64_t steps);
  void sync() const;

  double last_loss() const { return last_loss_; }
  std::int64_t loss_reads() const { return reads_; }

 private:
  void one_step();
  gtb::mlp::Config cfg_;
  int batch_;
  Copy copy_;
  int every_;
  std::unique_ptr<gtb::cuda::mlp::GpuMlp> model_;
  gtb::mlp::Dataset data_;
  std::vector<float> host_weights_, sink_;
  std::int64_t count_ = 0, reads_ = 0;
  double last_loss_ = 0;
};

}  // namespace gtb::pitfalls
