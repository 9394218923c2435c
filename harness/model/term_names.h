// The names of the cost terms: the one spelling shared by the families that publish a term
// (bench/<family>/findings.cpp) and the model that reads it. A term's name is part of the results
// format (findings.<family>.terms[].name): renaming one here changes what files say, and older files
// keep the old name. docs/advise.md describes each term; harness/model/README.md says how to add one.
#pragma once

namespace gtb::cost::term {

// Input: the batch to the device and the loader.
inline constexpr const char* kH2dCopy = "h2d_copy";
inline constexpr const char* kD2hCopy = "d2h_copy";
inline constexpr const char* kBatchGather = "batch_gather";
inline constexpr const char* kLoader = "loader";
// Compute: GEMMs, their share inside a step, streaming passes, the loss.
inline constexpr const char* kMatmul = "matmul";
inline constexpr const char* kMatmulBatched = "matmul_batched";
inline constexpr const char* kMatmulAutocast = "matmul_autocast";
inline constexpr const char* kMatmulInStep = "matmul_in_step";
inline constexpr const char* kMatmulFromMemory = "matmul_from_memory";
inline constexpr const char* kMatmulOneThread = "matmul_one_thread";
inline constexpr const char* kPassesInStep = "passes_in_step";
inline constexpr const char* kUpdateInStep = "update_in_step";
inline constexpr const char* kStreamBandwidth = "stream_bandwidth";
inline constexpr const char* kSoftmaxXent = "softmax_xent";
inline constexpr const char* kCpuThreads = "cpu_threads";
// Overhead and habits.
inline constexpr const char* kLaunch = "launch";
inline constexpr const char* kHostSync = "host_sync";
inline constexpr const char* kRedundantCopy = "redundant_copy";
// Gradients reduced over ranks (data_parallel parts).
inline constexpr const char* kAllreduce = "allreduce";
inline constexpr const char* kCommOverlap = "comm_overlap";
// PyTorch's own costs (the step run by PyTorch rather than gtb's kernels; the term's `where` names
// the mode): host time per operator, operator counts, its kernels, its optimizer and loader.
inline constexpr const char* kPytorchOp = "framework_op";
inline constexpr const char* kPytorchOps = "framework_ops";
inline constexpr const char* kPytorchStepOp = "framework_step_op";
inline constexpr const char* kPytorchMatmul = "framework_matmul";
inline constexpr const char* kPytorchMatmulBatched = "framework_matmul_batched";
inline constexpr const char* kPytorchOptimizer = "framework_optimizer";
inline constexpr const char* kPytorchOptimizerOps = "framework_optimizer_ops";
inline constexpr const char* kPytorchLoader = "framework_loader";
inline constexpr const char* kPytorchModeTime = "framework_mode_time";

// Every name above, for checks that a term is known (tests compare it with docs/advise.md).
inline constexpr const char* kAll[] = {
    kH2dCopy,        kD2hCopy,          kBatchGather,       kLoader,           kMatmul,
    kMatmulBatched,  kMatmulAutocast,   kMatmulInStep,      kMatmulFromMemory, kMatmulOneThread, kPassesInStep,
    kUpdateInStep,   kStreamBandwidth,  kSoftmaxXent,       kCpuThreads,       kLaunch,
    kHostSync,       kRedundantCopy,    kAllreduce,         kCommOverlap,      kPytorchOp,
    kPytorchOps,     kPytorchStepOp,    kPytorchMatmul,     kPytorchMatmulBatched, kPytorchOptimizer,
    kPytorchOptimizerOps, kPytorchLoader, kPytorchModeTime};

}  // namespace gtb::cost::term
