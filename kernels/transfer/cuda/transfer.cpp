// GPU side of the transfer family (runtime API host code): memory kinds, copies, pinning,
// batching and overlap. Compiled by the C++ compiler against the CUDA headers.
#include "kernels/transfer/cuda/transfer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/common/cuda/check.h"
#include "kernels/common/errors.h"
#include "kernels/common/random.h"
#include "kernels/transfer/host_memory.h"
#include "kernels/transfer/transfer.h"

namespace gtb::cuda::transfer {

namespace {
void* aligned_pageable(std::size_t bytes) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + cpu::kPageBytes - 1) / cpu::kPageBytes * cpu::kPageBytes;
  void* p = std::aligned_alloc(cpu::kPageBytes, rounded);
  if (!p) throw OutOfMemory("host allocation of " + std::to_string(bytes) + " bytes");
  return p;
}
}  // namespace

HostMemory::HostMemory(std::size_t bytes, MemoryKind kind) : n_(bytes), kind_(kind) {
  const std::size_t avail = cpu::host_available_bytes();
  if (avail != 0 && bytes > avail)
    throw OutOfMemory(std::string(to_string(kind)) + " host buffer of " + std::to_string(bytes) + " bytes > " +
                      std::to_string(avail) + " bytes available");
  switch (kind) {
    case MemoryKind::pageable:
      p_ = aligned_pageable(bytes);
      break;
    case MemoryKind::registered: {
      p_ = aligned_pageable(bytes);
      cpu::prefault(p_, bytes);
      const cudaError_t e = cudaHostRegister(p_, bytes, cudaHostRegisterDefault);
      if (e != cudaSuccess) {
        std::free(p_);
        p_ = nullptr;
        throw_cuda_error(e, "cudaHostRegister", __FILE__, __LINE__);
      }
      break;
    }
    case MemoryKind::pinned:
      GTB_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocDefault));
      break;
    case MemoryKind::write_combined:
      GTB_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocWriteCombined));
      break;
  }
  cpu::prefault(p_, bytes);
}

HostMemory::~HostMemory() {
  if (!p_) return;
  switch (kind_) {
    case MemoryKind::pageable: std::free(p_); break;
    case MemoryKind::registered:
      (void)cudaHostUnregister(p_);
      std::free(p_);
      break;
    case MemoryKind::pinned:
    case MemoryKind::write_combined: (void)cudaFreeHost(p_); break;
  }
}

// ---- copies -------------------------------------------------------------------------------------

CopyCase::CopyCase(Direction dir, MemoryKind kind, std::size_t bytes) : dir_(dir), bytes_(bytes) {
  if (bytes == 0) throw std::invalid_argument("copy size must be > 0");
  if (kind == MemoryKind::write_combined && dir != Direction::h2d)
    throw std::invalid_argument("write_combined host memory is for H2D only: the CPU reads it uncached");
  if (dir != Direction::d2h) {
    h_in_ = std::make_unique<HostMemory>(bytes, kind);
    d_out_ = DeviceBuffer(bytes);
  }
  if (dir != Direction::h2d) {
    d_in_ = DeviceBuffer(bytes);
    h_out_ = std::make_unique<HostMemory>(bytes, kind);
  }
}
CopyCase::~CopyCase() = default;

double CopyCase::bytes_per_rep() const { return double(bytes_) * (dir_ == Direction::bidir ? 2.0 : 1.0); }

void CopyCase::enqueue() {
  if (h_in_) GTB_CUDA_CHECK(cudaMemcpyAsync(d_out_.get(), h_in_->get(), bytes_, cudaMemcpyHostToDevice, s0_.get()));
  if (h_out_) {
    cudaStream_t s = dir_ == Direction::bidir ? s1_.get() : s0_.get();
    GTB_CUDA_CHECK(cudaMemcpyAsync(h_out_->get(), d_in_.get(), bytes_, cudaMemcpyDeviceToHost, s));
  }
}

ErrorReport CopyCase::verify() {
  std::vector<unsigned char> ref_in, ref_out, back;
  if (h_in_) {
    // The source is written from a pageable reference: write-combined memory is never read by the CPU.
    ref_in.resize(bytes_);
    fill_bytes(ref_in.data(), bytes_, 0x7A11);
    std::memcpy(h_in_->get(), ref_in.data(), bytes_);
    GTB_CUDA_CHECK(cudaMemset(d_out_.get(), 0xA5, bytes_));
  }
  if (h_out_) {
    ref_out.resize(bytes_);
    fill_bytes(ref_out.data(), bytes_, 0xD2B);
    GTB_CUDA_CHECK(cudaMemcpy(d_in_.get(), ref_out.data(), bytes_, cudaMemcpyHostToDevice));
    poison_bytes(h_out_->get(), bytes_);
  }
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  enqueue();
  s0_.sync();
  s1_.sync();
  ErrorReport rep;
  rep.ok = true;
  rep.detail = "byte-exact";
  if (h_in_) {
    back.resize(bytes_);
    GTB_CUDA_CHECK(cudaMemcpy(back.data(), d_out_.get(), bytes_, cudaMemcpyDeviceToHost));
    rep = compare_bytes(back.data(), ref_in.data(), bytes_);
    if (!rep.ok) rep.detail = "H2D: " + rep.detail;
  }
  if (rep.ok && h_out_) {
    rep = compare_bytes(h_out_->get(), ref_out.data(), bytes_);
    if (!rep.ok) rep.detail = "D2H: " + rep.detail;
  }
  return rep;
}

bool CopyCase::host_staged() const {
  // A copy from pageable memory is staged by the driver on this thread: behind a held stream it
  // would wait for the blocking kernel, which waits for this thread.
  return (h_in_ && h_in_->kind() == MemoryKind::pageable) || (h_out_ && h_out_->kind() == MemoryKind::pageable);
}

void CopyCase::enqueue_reps(std::int64_t reps, cudaEvent_t start) {
  if (dir_ == Direction::bidir) GTB_CUDA_CHECK(cudaStreamWaitEvent(s1_.get(), start, 0));
  for (std::int64_t r = 0; r < reps; ++r) enqueue();
  if (dir_ == Direction::bidir) {
    e_join_.record(s1_.get());
    GTB_CUDA_CHECK(cudaStreamWaitEvent(s0_.get(), e_join_.get(), 0));
  }
}

void CopyCase::run_once() {
  enqueue();
  s0_.sync();
  if (dir_ == Direction::bidir) s1_.sync();
}

// ---- pinning cost ---------------------------------------------------------------------------------

PinCase::PinCase(PinMethod m, std::size_t bytes) : m_(m), bytes_(bytes) {
  if (bytes == 0) throw std::invalid_argument("pin size must be > 0");
  const std::size_t avail = cpu::host_available_bytes();
  if (avail != 0 && bytes > avail)
    throw OutOfMemory("pinning " + std::to_string(bytes) + " bytes > " + std::to_string(avail) + " bytes available");
  if (m == PinMethod::host_register) pageable_ = std::make_unique<HostMemory>(bytes, MemoryKind::pageable);
}

ErrorReport PinCase::verify() {
  void* p = nullptr;
  if (m_ == PinMethod::host_alloc)
    GTB_CUDA_CHECK(cudaHostAlloc(&p, bytes_, cudaHostAllocDefault));
  else
    GTB_CUDA_CHECK(cudaHostRegister(p = pageable_->get(), bytes_, cudaHostRegisterDefault));
  ErrorReport rep;
  try {
    cudaPointerAttributes a{};
    GTB_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
    const std::size_t n = std::min<std::size_t>(bytes_, 1 << 20);
    std::vector<unsigned char> ref(n), back(n);
    fill_bytes(ref.data(), n, 0x919);
    std::memcpy(p, ref.data(), n);
    DeviceBuffer d(n);
    GTB_CUDA_CHECK(cudaMemcpy(d.get(), p, n, cudaMemcpyHostToDevice));
    poison_bytes(p, n);
    GTB_CUDA_CHECK(cudaMemcpy(p, d.get(), n, cudaMemcpyDeviceToHost));
    std::memcpy(back.data(), p, n);
    rep = compare_bytes(back.data(), ref.data(), n);
    if (rep.ok && a.type != cudaMemoryTypeHost) {
      rep.ok = false;
      rep.detail = "cudaPointerGetAttributes does not report pinned host memory (type " + std::to_string(int(a.type)) + ")";
    }
  } catch (...) {
    if (m_ == PinMethod::host_alloc) (void)cudaFreeHost(p); else (void)cudaHostUnregister(p);
    throw;
  }
  if (m_ == PinMethod::host_alloc)
    GTB_CUDA_CHECK(cudaFreeHost(p));
  else
    GTB_CUDA_CHECK(cudaHostUnregister(p));
  return rep;
}

void PinCase::run_once() {
  if (m_ == PinMethod::host_alloc) {
    void* p = nullptr;
    GTB_CUDA_CHECK(cudaHostAlloc(&p, bytes_, cudaHostAllocDefault));
    GTB_CUDA_CHECK(cudaFreeHost(p));
  } else {
    GTB_CUDA_CHECK(cudaHostRegister(pageable_->get(), bytes_, cudaHostRegisterDefault));
    GTB_CUDA_CHECK(cudaHostUnregister(pageable_->get()));
  }
}

// ---- batching -------------------------------------------------------------------------------------

bool memcpy_batch_available() {
#if CUDART_VERSION >= 12080
  return true;
#else
  return false;
#endif
}

BatchingCase::BatchingCase(BatchMethod m, std::size_t count, std::size_t sample_bytes)
    : m_(m), count_(count), sample_bytes_(sample_bytes) {
  if (count == 0 || sample_bytes == 0) throw std::invalid_argument("batching needs samples > 0 and sample_bytes > 0");
  if (m == BatchMethod::memcpy_batch && !memcpy_batch_available())
    throw Skip("cudaMemcpyBatchAsync needs CUDA 12.8 or newer");
  // Samples sit one page apart at least, as separately allocated dataset items would.
  const std::size_t stride = (sample_bytes + 2 * cpu::kPageBytes - 1) / cpu::kPageBytes * cpu::kPageBytes;
  const std::size_t total = count * sample_bytes;
  samples_ = std::make_unique<HostMemory>(count * stride, MemoryKind::pinned);
  packed_ = std::make_unique<HostMemory>(total, MemoryKind::pinned);
  if (m == BatchMethod::pack_then_copy) staging_ = std::make_unique<HostMemory>(total, MemoryKind::pinned);
  d_ = DeviceBuffer(total);
  auto* base = static_cast<unsigned char*>(samples_->get());
  auto* packed = static_cast<unsigned char*>(packed_->get());
  for (std::size_t i = 0; i < count; ++i) {
    fill_bytes(base + i * stride, sample_bytes, 0xBA7C4 + i);
    std::memcpy(packed + i * sample_bytes, base + i * stride, sample_bytes);
    srcs_.push_back(base + i * stride);
    dsts_.push_back(d_.as<unsigned char>() + i * sample_bytes);
    sizes_.push_back(sample_bytes);
  }
}

void BatchingCase::run_once() {
  const std::size_t total = count_ * sample_bytes_;
  switch (m_) {
    case BatchMethod::per_sample:
      for (std::size_t i = 0; i < count_; ++i)
        GTB_CUDA_CHECK(cudaMemcpyAsync(dsts_[i], srcs_[i], sample_bytes_, cudaMemcpyHostToDevice, s_.get()));
      break;
    case BatchMethod::pack_then_copy:
      cpu::gather(staging_->get(), srcs_.data(), count_, sample_bytes_);
      GTB_CUDA_CHECK(cudaMemcpyAsync(d_.get(), staging_->get(), total, cudaMemcpyHostToDevice, s_.get()));
      break;
    case BatchMethod::prepacked:
      GTB_CUDA_CHECK(cudaMemcpyAsync(d_.get(), packed_->get(), total, cudaMemcpyHostToDevice, s_.get()));
      break;
    case BatchMethod::memcpy_batch: {
#if CUDART_VERSION >= 12080
      cudaMemcpyAttributes attr{};
      attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
      std::size_t attr_idx = 0;
#if CUDART_VERSION >= 13000
      GTB_CUDA_CHECK(cudaMemcpyBatchAsync(dsts_.data(), srcs_.data(), sizes_.data(), count_, &attr, &attr_idx, 1,
                                          s_.get()));
#else
      std::size_t fail_idx = 0;
      GTB_CUDA_CHECK(cudaMemcpyBatchAsync(dsts_.data(), const_cast<void**>(srcs_.data()), sizes_.data(), count_,
                                          &attr, &attr_idx, 1, &fail_idx, s_.get()));
#endif
#endif
      break;
    }
  }
  s_.sync();
}

ErrorReport BatchingCase::verify() {
  const std::size_t total = count_ * sample_bytes_;
  GTB_CUDA_CHECK(cudaMemset(d_.get(), 0xA5, total));
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  run_once();
  std::vector<unsigned char> back(total);
  GTB_CUDA_CHECK(cudaMemcpy(back.data(), d_.get(), total, cudaMemcpyDeviceToHost));
  return compare_bytes(back.data(), packed_->get(), total);
}

// ---- overlap --------------------------------------------------------------------------------------

int async_engine_count() { return gtb::device_attribute(cudaDevAttrAsyncEngineCount); }

OverlapCase::OverlapCase(const OverlapConfig& cfg, const DeviceTimer& timer) : cfg_(cfg) {
  if (cfg.chunk_bytes < 4096 || cfg.chunk_bytes % sizeof(float) != 0)
    throw std::invalid_argument("overlap: chunk_bytes must be a multiple of 4 and >= 4096");
  if (cfg.chunks < 1) throw std::invalid_argument("overlap: chunks must be >= 1");
  if (cfg.streams < 1 || cfg.streams > 8) throw std::invalid_argument("overlap: streams must be in 1..8");
  if (!(cfg.compute_ratio > 0) || !std::isfinite(cfg.compute_ratio))
    throw std::invalid_argument("overlap: compute_ratio must be > 0");
  n_ = cfg.chunk_bytes / sizeof(float);
  const std::size_t total = cfg.chunk_bytes * std::size_t(cfg.chunks);
  h_in_ = std::make_unique<HostMemory>(total, MemoryKind::pinned);
  h_out_ = std::make_unique<HostMemory>(total, MemoryKind::pinned);
  fill_uniform(static_cast<float*>(h_in_->get()), total / sizeof(float), 0x0F1A9, 0.5f, 1.5f);
  for (int k = 0; k < cfg.streams; ++k) {
    d_in_.emplace_back(cfg.chunk_bytes);
    d_out_.emplace_back(cfg.chunk_bytes);
    streams_.push_back(std::make_unique<Stream>());
    done_.push_back(std::make_unique<Event>(false));
  }
  // Kernel time is affine in iters (memory traffic + arithmetic): measure two lengths, solve for
  // the iters that make one chunk's kernel take compute_ratio x one chunk's copies.
  cudaStream_t s = streams_[0]->get();
  auto time_chunk = [&](bool copy, int iters, bool may_hold = true) {
    const int reps = 5;
    return timer(s, reps, may_hold, 2, [&](cudaStream_t q) {
      if (copy) {
        GTB_CUDA_CHECK(cudaMemcpyAsync(d_in_[0].get(), h_in_->get(), cfg_.chunk_bytes, cudaMemcpyHostToDevice, q));
        GTB_CUDA_CHECK(cudaMemcpyAsync(h_out_->get(), d_out_[0].get(), cfg_.chunk_bytes, cudaMemcpyDeviceToHost, q));
      } else {
        overlap_compute(d_in_[0].as<float>(), d_out_[0].as<float>(), n_, iters, q);
      }
    }) / reps;
  };
  GTB_CUDA_CHECK(cudaMemcpy(d_in_[0].get(), h_in_->get(), cfg_.chunk_bytes, cudaMemcpyHostToDevice));
  // Warm-up, not held: the kernel's first launch may load its module lazily, which can wait for
  // the context, and so for a blocking kernel that waits for this thread.
  (void)time_chunk(true, 0, false);
  (void)time_chunk(false, 16, false);
  const double t_copy = time_chunk(true, 0);
  const double t_lo = time_chunk(false, 16), t_hi = time_chunk(false, 1024);
  const double per_iter = std::max((t_hi - t_lo) / (1024 - 16), 1e-12);
  const double base = t_lo - 16 * per_iter;
  const double want = (cfg.compute_ratio * t_copy - base) / per_iter;
  iters_ = static_cast<int>(std::clamp(std::round(want), 1.0, double(1 << 22)));
}
OverlapCase::~OverlapCase() = default;

double OverlapCase::bytes_per_rep() const { return 2.0 * double(cfg_.chunk_bytes) * double(cfg_.chunks); }

void OverlapCase::enqueue_pipeline(bool copies, bool compute, bool overlapped) {
  const int S = overlapped ? cfg_.streams : 1;
  cudaStream_t s0 = streams_[0]->get();
  fork_.record(s0);
  for (int k = 1; k < S; ++k) GTB_CUDA_CHECK(cudaStreamWaitEvent(streams_[std::size_t(k)]->get(), fork_.get(), 0));
  auto* in = static_cast<unsigned char*>(h_in_->get());
  auto* out = static_cast<unsigned char*>(h_out_->get());
  for (int c = 0; c < cfg_.chunks; ++c) {
    // One stream per device buffer: stream order alone makes buffer reuse safe.
    const auto k = std::size_t(c % S);
    cudaStream_t s = streams_[k]->get();
    const std::size_t off = std::size_t(c) * cfg_.chunk_bytes;
    if (copies)
      GTB_CUDA_CHECK(cudaMemcpyAsync(d_in_[k].get(), in + off, cfg_.chunk_bytes, cudaMemcpyHostToDevice, s));
    if (compute) overlap_compute(d_in_[k].as<float>(), d_out_[k].as<float>(), n_, iters_, s);
    if (copies)
      GTB_CUDA_CHECK(cudaMemcpyAsync(out + off, d_out_[k].get(), cfg_.chunk_bytes, cudaMemcpyDeviceToHost, s));
  }
  for (int k = 1; k < S; ++k) {
    done_[std::size_t(k)]->record(streams_[std::size_t(k)]->get());
    GTB_CUDA_CHECK(cudaStreamWaitEvent(s0, done_[std::size_t(k)]->get(), 0));
  }
}

std::int64_t OverlapCase::pipeline_ops(bool copies, bool compute, bool overlapped) const {
  const int S = overlapped ? cfg_.streams : 1;
  return std::int64_t(cfg_.chunks) * ((copies ? 2 : 0) + (compute ? 1 : 0)) + 2 * S;
}

ErrorReport OverlapCase::verify() {
  const std::size_t total = cfg_.chunk_bytes * std::size_t(cfg_.chunks) / sizeof(float);
  auto* out = static_cast<float*>(h_out_->get());
  const auto* in = static_cast<const float*>(h_in_->get());
  poison(out, total);
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  enqueue_pipeline(true, true, true);
  streams_[0]->sync();
  // x -> a x + (1 - a) has fixed point 1, so after k steps x = 1 + a^k (x0 - 1): a float64 reference
  // in closed form, whatever the kernel length.
  const double ak = std::pow(0.9990234375, double(iters_));
  std::vector<double> ref(total);
  for (std::size_t i = 0; i < total; ++i) ref[i] = 1.0 + ak * (double(in[i]) - 1.0);
  // Float rounding of a contraction stays bounded: <= 2^-24 / (1 - a) ~ 6e-5 near 1 at any length.
  return compare_elementwise(out, ref.data(), total, 1e-4, 1e-4);
}

}  // namespace gtb::cuda::transfer
