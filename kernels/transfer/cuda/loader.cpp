// The data loader's GPU consumer (runtime API host code): copy stream + compute stream, two device
// buffers, per-batch events for the GPU idle fraction.
#include "kernels/transfer/cuda/loader.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/clock.h"
#include "kernels/common/cuda/check.h"
#include "kernels/transfer/transfer.h"

namespace gtb::cuda::transfer {

GpuLoader::GpuLoader(const GpuLoaderConfig& cfg) : cfg_(cfg) {
  if (cfg.batch_bytes == 0) throw std::invalid_argument("loader: batch_bytes must be > 0");
  if (!(cfg.kernel_seconds >= 0) || !std::isfinite(cfg.kernel_seconds))
    throw std::invalid_argument("loader: kernel_seconds must be >= 0");
  if (cfg.memory != MemoryKind::pinned && cfg.memory != MemoryKind::pageable)
    throw std::invalid_argument(std::string("loader: ring memory must be pinned or pageable, got ") +
                                to_string(cfg.memory));
  for (int d = 0; d < cfg.loader.depth; ++d) {
    ring_.push_back(std::make_unique<HostMemory>(cfg.batch_bytes, cfg.memory));
    slots_.push_back(ring_.back()->get());
  }
  cpu::validate(cfg.loader, slots_.size());
  for (auto& b : dbuf_) b = DeviceBuffer(cfg.batch_bytes);
  sums_ = DeviceBuffer(sizeof(unsigned long long) * std::size_t(cfg.loader.batches));
  for (std::int64_t b = 0; b < cfg.loader.batches; ++b) {
    k_start_.push_back(std::make_unique<Event>(true));
    k_end_.push_back(std::make_unique<Event>(true));
  }
  for (int k = 0; k < 2; ++k) {
    copied_[k] = std::make_unique<Event>(false);
    consumed_[k] = std::make_unique<Event>(false);
  }
}
GpuLoader::~GpuLoader() = default;

GpuLoaderRun GpuLoader::run(const cpu::ProduceFn& produce) {
  const auto batches = std::size_t(cfg_.loader.batches);
  GTB_CUDA_CHECK(cudaMemsetAsync(sums_.get(), 0, sizeof(unsigned long long) * batches, compute_s_.get()));
  // Both device buffers start free: mark them consumed so the first copies need not wait.
  for (auto& e : consumed_) e->record(compute_s_.get());
  const auto ns = static_cast<std::uint64_t>(std::llround(cfg_.kernel_seconds * 1e9));
  auto* sums = sums_.as<unsigned long long>();

  GpuLoaderRun out;
  const double t0 = host_seconds();
  out.host = cpu::run_loader(cfg_.loader, slots_, produce, [&](std::int64_t b, void* slot) {
    const auto k = std::size_t(b % 2);
    cudaStream_t cs = copy_s_.get(), ks = compute_s_.get();
    // Device buffer k is rewritten only after the kernel of batch b - 2 has read it.
    GTB_CUDA_CHECK(cudaStreamWaitEvent(cs, consumed_[k]->get(), 0));
    GTB_CUDA_CHECK(cudaMemcpyAsync(dbuf_[k].get(), slot, cfg_.batch_bytes, cudaMemcpyHostToDevice, cs));
    copied_[k]->record(cs);
    GTB_CUDA_CHECK(cudaStreamWaitEvent(ks, copied_[k]->get(), 0));
    k_start_[std::size_t(b)]->record(ks);
    checksum_words(dbuf_[k].get(), cfg_.batch_bytes, sums + b, ks);
    if (ns > 0) spin_kernel(ns, ks);
    k_end_[std::size_t(b)]->record(ks);
    consumed_[k]->record(ks);
    // The host slot goes back to the workers once the copy has read it.
    copied_[k]->sync();
  });
  compute_s_.sync();
  out.seconds = host_seconds() - t0;

  std::vector<double> start(batches), end(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    start[b] = elapsed_seconds(*k_start_[0], *k_start_[b]);
    end[b] = elapsed_seconds(*k_start_[0], *k_end_[b]);
  }
  out.gpu_seconds = end.back();
  out.gpu_idle_fraction = gtb::transfer::idle_fraction(start, end);
  out.checksums.resize(batches);
  GTB_CUDA_CHECK(cudaMemcpy(out.checksums.data(), sums, sizeof(unsigned long long) * batches, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace gtb::cuda::transfer
