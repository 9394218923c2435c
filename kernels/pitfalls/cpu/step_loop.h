// The train family's CPU step (gtb::mlp::CpuMlp) inside a training loop with one of the habits
// measured by the pitfalls family: a loss read every k steps, or a redundant copy every step.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/pitfalls/pitfalls.h"
#include "kernels/train/cpu/mlp.h"

namespace gtb::pitfalls {

class CpuStepLoop {
 public:
  // A model of `cfg` trained on `batch` rows of the train family's synthetic clusters.
  CpuStepLoop(const mlp::Config& cfg, int batch, Copy copy, int sync_every);

  // One step with the habit in place, verified in float64 by the train family's layer-local checks.
  mlp::VerifyResult verify_first_step();
  // `steps` more steps. On the CPU the step is synchronous, so a loss read costs only the read.
  void run(std::int64_t steps);

  // The FP32 GEMM library the step runs (default: the model's); set before the first step.
  void set_gemm_lib(cpu::GemmLib lib) { model_.set_gemm_lib(lib); }

  float last_loss() const { return last_loss_; }
  std::int64_t loss_reads() const { return reads_; }
  const mlp::CpuMlp& model() const { return model_; }

 private:
  float one_step();
  mlp::Config cfg_;
  int batch_;
  Copy copy_;
  int every_;
  mlp::CpuMlp model_;
  mlp::Dataset data_;
  std::vector<float> staged_x_, host_weights_, sink_;
  std::vector<int> staged_y_;
  std::int64_t count_ = 0, reads_ = 0;
  float last_loss_ = 0;
};

}  // namespace gtb::pitfalls
