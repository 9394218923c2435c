// The small models the CPU and GPU tests build: the sizes a test states, everything else the
// model's defaults, so that the CPU and the GPU test of one family start from the same helper.
#pragma once

#include "kernels/train/mlp.h"
#include "kernels/transformer/block.h"

namespace gtb::test {

inline mlp::Config mlp_config(int input, int width, int depth, int classes, mlp::Act act = mlp::Act::relu,
                              mlp::Optim optim = mlp::Optim::sgd) {
  mlp::Config c;
  c.input = input, c.width = width, c.depth = depth, c.classes = classes, c.act = act, c.optim = optim;
  return c;
}

inline xfmr::Config xfmr_config(int layers, int d_model, int heads, int seq_len, int batch) {
  xfmr::Config c;
  c.layers = layers, c.d_model = d_model, c.heads = heads, c.seq_len = seq_len, c.batch = batch;
  return c;
}

}  // namespace gtb::test
