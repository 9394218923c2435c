// NCCL communicators (one process over its GPUs, or one GPU per MPI rank) and the collectives over
// them, checked on the host against the pattern's sum.
#include "kernels/parallel/cuda/nccl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/parallel/collective.h"
#include "kernels/parallel/comm.h"
#include "kernels/parallel/cuda/nccl_fill.h"
#include "kernels/train/mlp.h"

#if GTB_HAVE_NCCL
#include <nccl.h>
#endif

namespace gtb::parallel::nccl {

std::size_t elem_bytes(DType d) { return d == DType::fp32 ? 4u : 2u; }

namespace {
int usable_gpus() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}
}  // namespace

KeepDevice::KeepDevice() {
  if (cudaGetDevice(&device_) != cudaSuccess) {
    cudaGetLastError();
    device_ = -1;
  }
}
KeepDevice::~KeepDevice() {
  if (device_ >= 0) cudaSetDevice(device_);
}

Comms::~Comms() {
  const KeepDevice keep;
#if GTB_HAVE_NCCL
  for (std::size_t i = 0; i < comms_.size(); ++i)
    if (comms_[i]) {
      cudaSetDevice(devices_[i]);
      ncclCommDestroy(comms_[i]);
    }
#endif
}

std::unique_ptr<Comms> Comms::solo(int local_rank, int local_ranks) {
  const std::string why = device_shortage(local_rank, local_ranks, usable_gpus());
  if (!why.empty()) throw Unavailable(why);
  std::unique_ptr<Comms> c(new Comms);
  c->devices_ = {local_rank};
  c->ranks_ = {0};
  return c;
}

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

std::unique_ptr<Comms> Comms::this_process() {
  const KeepDevice keep;
  const int gpus = usable_gpus();
  if (gpus < 1) throw Unavailable("no usable GPU for NCCL");
  std::unique_ptr<Comms> c(new Comms);
  c->world_ = gpus;
  c->comms_.assign(std::size_t(gpus), nullptr);
  for (int d = 0; d < gpus; ++d) {
    c->devices_.push_back(d);
    c->ranks_.push_back(d);
  }
  nccl_ok(ncclCommInitAll(c->comms_.data(), gpus, nullptr), "ncclCommInitAll");
  return c;
}

std::unique_ptr<Comms> Comms::world() {
  const int n = mpi::size();
  if (n == 1) return this_process();
  const int gpus = usable_gpus();
  std::unique_ptr<Comms> c(new Comms);
  // Every rank must give up together: one rank left waiting in ncclCommInitRank would hang the run.
  const int local = mpi::local_rank();
  const std::string why = device_shortage(local, mpi::local_size(), gpus);
  if (!mpi::all_true(why.empty()))
    throw Unavailable(why.empty() ? "another rank has no GPU of its own (NCCL needs one per rank)" : why);
  struct {
    std::int32_t ok;
    ncclUniqueId id;
  } msg{};
  // The rank's GPU stays current for the rest of the process: going back to GPU 0 would make every
  // rank open a context there.
  cuda_ok(cudaSetDevice(local), "cudaSetDevice");
  if (mpi::rank() == 0) msg.ok = ncclGetUniqueId(&msg.id) == ncclSuccess ? 1 : 0;
  mpi::broadcast_bytes(&msg, sizeof msg);
  if (!msg.ok) throw std::runtime_error("ncclGetUniqueId failed on rank 0");
  ncclComm_t comm = nullptr;
  nccl_ok(ncclCommInitRank(&comm, n, msg.id, mpi::rank()), "ncclCommInitRank");
  c->world_ = n;
  c->devices_ = {local};
  c->ranks_ = {mpi::rank()};
  c->comms_ = {comm};
  return c;
}

struct LocalGroup::Impl {
  Collective coll;
  DType dtype;
  std::uint64_t seed;
  std::unique_ptr<Comms> comms;
  int n = 0;  // local GPUs
  Counts counts;
  std::vector<cudaStream_t> streams;
  std::vector<void*> send, recv;

  ~Impl() {
    const KeepDevice keep;
    for (std::size_t i = 0; i < streams.size(); ++i) {
      cudaSetDevice(comms->device(int(i)));
      if (send[i]) cudaFree(send[i]);
      if (recv[i]) cudaFree(recv[i]);
      if (streams[i]) cudaStreamDestroy(streams[i]);
    }
  }
  void launch() {
    const ncclDataType_t t = dtype == DType::fp32 ? ncclFloat32 : ncclBfloat16;
    nccl_ok(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < n; ++d) {
      const std::size_t i = std::size_t(d);
      ncclComm_t c = comms->comm(d);
      switch (coll) {
        case Collective::all_reduce:
          nccl_ok(ncclAllReduce(send[i], recv[i], counts.send, t, ncclSum, c, streams[i]), "ncclAllReduce");
          break;
        case Collective::reduce_scatter:
          nccl_ok(ncclReduceScatter(send[i], recv[i], counts.recv, t, ncclSum, c, streams[i]), "ncclReduceScatter");
          break;
        case Collective::all_gather:
          nccl_ok(ncclAllGather(send[i], recv[i], counts.send, t, c, streams[i]), "ncclAllGather");
          break;
      }
    }
    nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  }
  void sync() {
    const KeepDevice keep;
    for (int d = 0; d < n; ++d) {
      cuda_ok(cudaSetDevice(comms->device(d)), "cudaSetDevice");
      cuda_ok(cudaStreamSynchronize(streams[std::size_t(d)]), "cudaStreamSynchronize");
    }
  }
};

LocalGroup::LocalGroup(Collective c, std::size_t bytes, DType dtype, std::uint64_t seed, Scope scope)
    : impl_(new Impl) {
  Impl& m = *impl_;
  m.coll = c;
  m.dtype = dtype;
  m.seed = seed;
  // Decided before any communicator exists, from figures every rank has: the same on all of them.
  const bool mpi_world = scope == Scope::world && mpi::size() > 1;
  m.counts = counts_of(c, bytes, elem_bytes(dtype), mpi_world ? mpi::size() : std::max(usable_gpus(), 1));
  if (m.counts.send == 0 || m.counts.recv == 0) throw Unavailable("size is below one element per GPU");
  m.comms = mpi_world ? Comms::world() : Comms::this_process();  // under MPI, leaves this rank's GPU current
  const KeepDevice keep;
  m.n = m.comms->local();
  m.counts = counts_of(c, bytes, elem_bytes(dtype), m.comms->world_size());
  m.streams.assign(std::size_t(m.n), nullptr);
  m.send.assign(std::size_t(m.n), nullptr);
  m.recv.assign(std::size_t(m.n), nullptr);
  const std::size_t eb = elem_bytes(dtype);
  for (int d = 0; d < m.n; ++d) {
    const std::size_t i = std::size_t(d);
    const int rank = m.comms->rank(d);
    cuda_ok(cudaSetDevice(m.comms->device(d)), "cudaSetDevice");
    cuda_ok(cudaStreamCreateWithFlags(&m.streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
    if (cudaMalloc(&m.send[i], m.counts.send * eb) != cudaSuccess ||
        cudaMalloc(&m.recv[i], m.counts.recv * eb) != cudaSuccess) {
      cudaGetLastError();
      throw std::bad_alloc();
    }
    // Rank r's input; for reduce-scatter and all-gather the pattern index is the position in the large buffer.
    const std::size_t first = c == Collective::all_gather ? std::size_t(rank) * m.counts.send : 0;
    if (dtype == DType::fp32)
      fill_pattern_f32(static_cast<float*>(m.send[i]), m.counts.send, seed, rank, first, m.streams[i]);
    else
      fill_pattern_bf16(static_cast<std::uint16_t*>(m.send[i]), m.counts.send, seed, rank, first, m.streams[i]);
    cuda_ok(cudaGetLastError(), "fill_pattern launch");
  }
  m.sync();
}
LocalGroup::~LocalGroup() = default;
int LocalGroup::ranks() const { return impl_->comms->world_size(); }
int LocalGroup::local_gpus() const { return impl_->n; }
std::size_t LocalGroup::bytes() const {
  const Impl& m = *impl_;
  return (m.coll == Collective::all_gather ? m.counts.recv : m.counts.send) * elem_bytes(m.dtype);
}

CheckResult LocalGroup::run_and_check() {
  const KeepDevice keep;
  Impl& m = *impl_;
  const std::size_t eb = elem_bytes(m.dtype);
  const int world = m.comms->world_size();
  for (int d = 0; d < m.n; ++d) {
    cuda_ok(cudaSetDevice(m.comms->device(d)), "cudaSetDevice");
    cuda_ok(cudaMemsetAsync(m.recv[std::size_t(d)], 0xff, m.counts.recv * eb, m.streams[std::size_t(d)]),
            "poison output");  // 0xffff... is NaN in float32 and bfloat16
  }
  m.launch();
  m.sync();
  // The sum of n exact values is exact in float32; in bfloat16 each addition may round once.
  const double tol_rel = m.dtype == DType::fp32 ? 0.0 : std::ldexp(double(world), -8);
  std::vector<unsigned char> host(m.counts.recv * eb);
  for (int d = 0; d < m.n; ++d) {
    const int rank = m.comms->rank(d);
    cuda_ok(cudaSetDevice(m.comms->device(d)), "cudaSetDevice");
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
        case Collective::all_reduce: ref = pattern_sum(m.seed, world, j); break;
        case Collective::reduce_scatter: ref = pattern_sum(m.seed, world, std::size_t(rank) * m.counts.recv + j); break;
        case Collective::all_gather: ref = double(pattern_value(m.seed, int(j / m.counts.send), j)); break;
      }
      if (!(std::fabs(double(got) - ref) <= tol_rel * std::max(1.0, std::fabs(ref)))) {
        return {false, "rank " + std::to_string(rank) + " (GPU " + std::to_string(m.comms->device(d)) + ") element " +
                           std::to_string(j) + ": got " + std::to_string(got) + ", expected " + std::to_string(ref)};
      }
    }
  }
  return {true, std::string(to_string(m.coll)) + " over " + std::to_string(world) + " GPU(s): every element of every " +
                    "output equals the float64 sum" + (m.dtype == DType::fp32 ? " exactly" : " within n*2^-8 relative")};
}

void LocalGroup::enqueue(std::int64_t reps) {
  const KeepDevice keep;
  for (std::int64_t r = 0; r < reps; ++r) impl_->launch();
}
void LocalGroup::sync() { impl_->sync(); }

#else  // CUDA without NCCL

namespace {
[[noreturn]] void missing() {
  throw Unavailable("built without NCCL (nccl.h and libnccl were not found at configure time)");
}
}  // namespace
bool built() { return false; }
std::string version() { return ""; }
std::unique_ptr<Comms> Comms::world() { missing(); }
std::unique_ptr<Comms> Comms::this_process() { missing(); }
struct LocalGroup::Impl {};
LocalGroup::LocalGroup(Collective, std::size_t, DType, std::uint64_t, Scope) { missing(); }
LocalGroup::~LocalGroup() = default;
int LocalGroup::ranks() const { return 0; }
int LocalGroup::local_gpus() const { return 0; }
std::size_t LocalGroup::bytes() const { return 0; }
CheckResult LocalGroup::run_and_check() { return {}; }
void LocalGroup::enqueue(std::int64_t) {}
void LocalGroup::sync() {}
#endif

}  // namespace gtb::parallel::nccl
