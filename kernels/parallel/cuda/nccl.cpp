// NCCL collectives over every GPU of this process, checked on the host against the pattern's sum.
#include "kernels/parallel/cuda/nccl.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/common/mlp.h"
#include "kernels/parallel/cpu/comm.h"
#include "kernels/parallel/cuda/nccl_fill.h"

#if GTB_HAVE_NCCL
#include <nccl.h>
#endif

namespace gtb::parallel::nccl {

std::size_t elem_bytes(DType d) { return d == DType::fp32 ? 4u : 2u; }

#if GTB_HAVE_NCCL
namespace {
void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}
void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
}  // namespace

bool built() { return true; }
std::string version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "";
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

struct LocalGroup::Impl {
  Collective coll;
  DType dtype;
  std::uint64_t seed;
  int n = 0;
  Counts counts;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<void*> send, recv;

  ~Impl() {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      if (d < int(send.size()) && send[std::size_t(d)]) cudaFree(send[std::size_t(d)]);
      if (d < int(recv.size()) && recv[std::size_t(d)]) cudaFree(recv[std::size_t(d)]);
      if (d < int(streams.size()) && streams[std::size_t(d)]) cudaStreamDestroy(streams[std::size_t(d)]);
    }
    for (ncclComm_t c : comms)
      if (c) ncclCommDestroy(c);
  }
  void launch() {
    const ncclDataType_t t = dtype == DType::fp32 ? ncclFloat32 : ncclBfloat16;
    nccl_ok(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < n; ++d) {
      const std::size_t i = std::size_t(d);
      switch (coll) {
        case Collective::all_reduce:
          nccl_ok(ncclAllReduce(send[i], recv[i], counts.send, t, ncclSum, comms[i], streams[i]), "ncclAllReduce");
          break;
        case Collective::reduce_scatter:
          nccl_ok(ncclReduceScatter(send[i], recv[i], counts.recv, t, ncclSum, comms[i], streams[i]),
                  "ncclReduceScatter");
          break;
        case Collective::all_gather:
          nccl_ok(ncclAllGather(send[i], recv[i], counts.send, t, comms[i], streams[i]), "ncclAllGather");
          break;
      }
    }
    nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  }
  void sync() {
    for (int d = 0; d < n; ++d) {
      cuda_ok(cudaSetDevice(d), "cudaSetDevice");
      cuda_ok(cudaStreamSynchronize(streams[std::size_t(d)]), "cudaStreamSynchronize");
    }
  }
};

LocalGroup::LocalGroup(Collective c, std::size_t bytes, DType dtype, std::uint64_t seed) : impl_(new Impl) {
  Impl& m = *impl_;
  m.coll = c;
  m.dtype = dtype;
  m.seed = seed;
  if (cudaGetDeviceCount(&m.n) != cudaSuccess || m.n < 1) {
    cudaGetLastError();
    throw Unavailable("no usable GPU for NCCL");
  }
  m.counts = counts_of(c, bytes, elem_bytes(dtype), m.n);
  if (m.counts.send == 0 || m.counts.recv == 0) throw Unavailable("size is below one element per GPU");
  m.comms.assign(std::size_t(m.n), nullptr);
  nccl_ok(ncclCommInitAll(m.comms.data(), m.n, nullptr), "ncclCommInitAll");
  m.streams.assign(std::size_t(m.n), nullptr);
  m.send.assign(std::size_t(m.n), nullptr);
  m.recv.assign(std::size_t(m.n), nullptr);
  const std::size_t eb = elem_bytes(dtype);
  for (int d = 0; d < m.n; ++d) {
    const std::size_t i = std::size_t(d);
    cuda_ok(cudaSetDevice(d), "cudaSetDevice");
    cuda_ok(cudaStreamCreateWithFlags(&m.streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
    if (cudaMalloc(&m.send[i], m.counts.send * eb) != cudaSuccess ||
        cudaMalloc(&m.recv[i], m.counts.recv * eb) != cudaSuccess) {
      cudaGetLastError();
      throw std::bad_alloc();
    }
    // Rank d's input; for reduce-scatter and all-gather the pattern index is the position in the large buffer.
    const std::size_t first = c == Collective::all_gather ? i * m.counts.send : 0;
    if (dtype == DType::fp32)
      fill_pattern_f32(static_cast<float*>(m.send[i]), m.counts.send, seed, d, first, m.streams[i]);
    else
      fill_pattern_bf16(static_cast<std::uint16_t*>(m.send[i]), m.counts.send, seed, d, first, m.streams[i]);
    cuda_ok(cudaGetLastError(), "fill_pattern launch");
  }
  m.sync();
}
LocalGroup::~LocalGroup() = default;
int LocalGroup::ranks() const { return impl_->n; }
std::size_t LocalGroup::bytes() const {
  const Impl& m = *impl_;
  return (m.coll == Collective::all_gather ? m.counts.recv : m.counts.send) * elem_bytes(m.dtype);
}

CheckResult LocalGroup::run_and_check() {
  Impl& m = *impl_;
  const std::size_t eb = elem_bytes(m.dtype);
  for (int d = 0; d < m.n; ++d) {
    cuda_ok(cudaSetDevice(d), "cudaSetDevice");
    cuda_ok(cudaMemsetAsync(m.recv[std::size_t(d)], 0xff, m.counts.recv * eb, m.streams[std::size_t(d)]),
            "poison output");  // 0xffff... is NaN in float32 and bfloat16
  }
  m.launch();
  m.sync();
  // The sum of n exact values is exact in float32; in bfloat16 each addition may round once.
  const double tol_rel = m.dtype == DType::fp32 ? 0.0 : std::ldexp(double(m.n), -8);
  std::vector<unsigned char> host(m.counts.recv * eb);
  for (int d = 0; d < m.n; ++d) {
    cuda_ok(cudaSetDevice(d), "cudaSetDevice");
    cuda_ok(cudaMemcpy(host.data(), m.recv[std::size_t(d)], host.size(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    for (std::size_t j = 0; j < m.counts.recv; ++j) {
      float got;
      if (m.dtype == DType::fp32) {
        std::memcpy(&got, host.data() + j * 4, 4);
      } else {
        std::uint16_t b;
        std::memcpy(&b, host.data() + j * 2, 2);
        got = mlp::bf16_bits_to_float(b);
      }
      double ref = 0;
      switch (m.coll) {
        case Collective::all_reduce: ref = pattern_sum(m.seed, m.n, j); break;
        case Collective::reduce_scatter: ref = pattern_sum(m.seed, m.n, std::size_t(d) * m.counts.recv + j); break;
        case Collective::all_gather: ref = double(pattern_value(m.seed, int(j / m.counts.send), j)); break;
      }
      if (!(std::fabs(double(got) - ref) <= tol_rel * std::max(1.0, std::fabs(ref)))) {
        return {false, "GPU " + std::to_string(d) + " element " + std::to_string(j) + ": got " + std::to_string(got) +
                           ", expected " + std::to_string(ref)};
      }
    }
  }
  return {true, std::string(to_string(m.coll)) + " over " + std::to_string(m.n) + " GPU(s): every element of every " +
                    "output equals the float64 sum" + (m.dtype == DType::fp32 ? " exactly" : " within n*2^-8 relative")};
}

double LocalGroup::time(std::int64_t reps) {
  Impl& m = *impl_;
  m.sync();
  const double t0 = now_seconds();
  for (std::int64_t r = 0; r < reps; ++r) m.launch();
  m.sync();
  return now_seconds() - t0;
}

void LocalGroup::enqueue(std::int64_t reps) {
  for (std::int64_t r = 0; r < reps; ++r) impl_->launch();
}
void LocalGroup::sync() { impl_->sync(); }

#else  // CUDA without NCCL

bool built() { return false; }
std::string version() { return ""; }
struct LocalGroup::Impl {};
LocalGroup::LocalGroup(Collective, std::size_t, DType, std::uint64_t) {
  throw Unavailable("built without NCCL (nccl.h and libnccl were not found at configure time)");
}
LocalGroup::~LocalGroup() = default;
int LocalGroup::ranks() const { return 0; }
std::size_t LocalGroup::bytes() const { return 0; }
CheckResult LocalGroup::run_and_check() { return {}; }
double LocalGroup::time(std::int64_t) { return 0; }
void LocalGroup::enqueue(std::int64_t) {}
void LocalGroup::sync() {}
#endif

}  // namespace gtb::parallel::nccl
