// The figures gtb's native CPU training step chooses its threading by, defined once: the step's
// kernels (kernels/train, kernels/common/cpu/parallel.h) run by them and the cost model
// (harness/model) prices the step by them. Dependency-free, so that both may include it.
#pragma once

namespace gtb::native {

// The MLP step runs a step of fewer FLOPs than this (6 x batch x the layers' in x out) on one thread:
// a second thread would cost more to wake than it saves.
inline constexpr double kSerialStepFlops = 2e7;
// Its FP32 step with at least this many rows per thread (micro-batch rows / threads) runs in rows
// mode: each thread's gradients in a copy of its own, summed before the update.
inline constexpr int kRowsPerThread = 32;
// Below this much work (the caller's units; rows x classes x 8 for the loss) a pass runs on one
// thread: a fork costs more.
inline constexpr double kMinParallelWork = 32768.0;

}  // namespace gtb::native
