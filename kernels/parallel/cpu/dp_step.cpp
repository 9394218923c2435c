// The data-parallel CPU step: forward and backward per layer with OpenBLAS, bucketed all-reduce.
#include "kernels/parallel/cpu/dp_step.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common/cpu/blas.h"
#include "kernels/train/cpu/mlp.h"

namespace gtb::parallel {


DpMlp::DpMlp(const mlp::Config& c, int rows, int global_rows, std::vector<Bucket> buckets, bool overlap,
             bool communicate)
    : cfg_(c),
      lay_(c),
      rows_(rows),
      global_rows_(global_rows),
      buckets_(std::move(buckets)),
      overlap_(overlap),
      communicate_(communicate) {
  c.validate();
  if (c.optim != mlp::Optim::sgd) throw std::invalid_argument("the data-parallel step uses SGD with momentum");
  if (rows < 1 || global_rows < rows) throw std::invalid_argument("data-parallel step needs 1 <= rows <= global rows");
  check_cover(lay_, buckets_);
  params_ = mlp::init_params(c, lay_);
  grads_.assign(lay_.total, 0.0f);
  momentum_.assign(lay_.total, 0.0f);
  const int L = lay_.layers();
  for (int l = 1; l <= L; ++l) z_.emplace_back(std::size_t(rows) * std::size_t(lay_.dims[std::size_t(l)]));
  a_.resize(std::size_t(L));
  for (int l = 1; l < L; ++l) a_[std::size_t(l)].resize(std::size_t(rows) * std::size_t(lay_.dims[std::size_t(l)]));
  dz_.resize(std::size_t(rows) * std::size_t(lay_.max_dim()));
  dz_prev_.resize(dz_.size());
  for (const Bucket& b : buckets_) bucket_bufs_.emplace_back(b.elems);
}

void DpMlp::poison() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int l = 1; l <= lay_.layers(); ++l) {
    const std::size_t nw = std::size_t(lay_.dims[std::size_t(l - 1)]) * std::size_t(lay_.dims[std::size_t(l)]);
    std::fill_n(grads_.begin() + std::ptrdiff_t(lay_.w[std::size_t(l - 1)]), nw, nan);
    std::fill_n(grads_.begin() + std::ptrdiff_t(lay_.b[std::size_t(l - 1)]), lay_.dims[std::size_t(l)], nan);
  }
  for (auto& b : bucket_bufs_) std::fill(b.begin(), b.end(), nan);
}

void DpMlp::pack(const Bucket& b, std::vector<float>& buf) const {
  float* o = buf.data();
  for (int l = b.first_layer; l >= b.last_layer; --l) {
    const std::size_t nw = std::size_t(lay_.dims[std::size_t(l - 1)]) * std::size_t(lay_.dims[std::size_t(l)]);
    const std::size_t nb = std::size_t(lay_.dims[std::size_t(l)]);
    std::memcpy(o, grads_.data() + lay_.w[std::size_t(l - 1)], nw * sizeof(float));
    std::memcpy(o + nw, grads_.data() + lay_.b[std::size_t(l - 1)], nb * sizeof(float));
    o += nw + nb;
  }
}
void DpMlp::unpack(const Bucket& b, const std::vector<float>& buf) {
  const float* in = buf.data();
  for (int l = b.first_layer; l >= b.last_layer; --l) {
    const std::size_t nw = std::size_t(lay_.dims[std::size_t(l - 1)]) * std::size_t(lay_.dims[std::size_t(l)]);
    const std::size_t nb = std::size_t(lay_.dims[std::size_t(l)]);
    std::memcpy(grads_.data() + lay_.w[std::size_t(l - 1)], in, nw * sizeof(float));
    std::memcpy(grads_.data() + lay_.b[std::size_t(l - 1)], in + nw, nb * sizeof(float));
    in += nw + nb;
  }
}

void DpMlp::set_gemm_lib(cpu::GemmLib lib) {
  if (!cpu::gemm_lib_available(lib))
    throw std::invalid_argument(std::string("DpMlp: GEMM library ") + cpu::to_string(lib) + " is not available");
  lib_ = lib;
}

float DpMlp::step(const float* x, const int* labels) {
  const int L = lay_.layers(), B = rows_, C = cfg_.classes;
  const double t0 = host_seconds();
  // Forward.
  for (int l = 1; l <= L; ++l) {
    const int in = lay_.dims[std::size_t(l - 1)], out = lay_.dims[std::size_t(l)];
    const float* A = l == 1 ? x : a_[std::size_t(l - 1)].data();
    float* Z = z_[std::size_t(l - 1)].data();
    const float* bias = params_.data() + lay_.b[std::size_t(l - 1)];
    cpu::sgemm(lib_, false, false, B, out, in, 1.0f, A, in, params_.data() + lay_.w[std::size_t(l - 1)], out, 0.0f, Z, out);
    float* An = l < L ? a_[std::size_t(l)].data() : nullptr;
    const mlp::Act act = cfg_.act;
#pragma omp parallel for schedule(static)
    for (int r = 0; r < B; ++r) {
      float* zr = Z + std::size_t(r) * std::size_t(out);
      for (int j = 0; j < out; ++j) zr[j] += bias[j];
      if (An) {
        float* ar = An + std::size_t(r) * std::size_t(out);
        for (int j = 0; j < out; ++j) ar[j] = mlp::act_forward<float>(act, zr[j]);
      }
    }
  }
  // Loss and dLoss/dlogits, normalized by the global batch so that the sum over ranks is the mean.
  double loss = 0;
  {
    const float* Z = z_.back().data();
    float* dz = dz_.data();
    const float scale = 1.0f / float(global_rows_);
#pragma omp parallel for schedule(static) reduction(+ : loss)
    for (int r = 0; r < B; ++r) {
      const float* zr = Z + std::size_t(r) * std::size_t(C);
      float* gr = dz + std::size_t(r) * std::size_t(C);
      loss += mlp::softmax_xent_row<float>(
          C, labels[r], scale, [&](int j) { return zr[j]; }, [&](int j, float g) { gr[j] = g; });
    }
  }
  const double t_bwd = host_seconds();
  // Backward, layer by layer; a bucket leaves as soon as its last layer is done.
  std::vector<mpi::Request> inflight(buckets_.size());
  std::size_t next_bucket = 0;
  for (int l = L; l >= 1; --l) {
    const int in = lay_.dims[std::size_t(l - 1)], out = lay_.dims[std::size_t(l)];
    const float* A = l == 1 ? x : a_[std::size_t(l - 1)].data();
    float* dW = grads_.data() + lay_.w[std::size_t(l - 1)];
    float* db = grads_.data() + lay_.b[std::size_t(l - 1)];
    cpu::sgemm(lib_, true, false, in, out, B, 1.0f, A, in, dz_.data(), out, 0.0f, dW, out);
    for (int j = 0; j < out; ++j) db[j] = 0.0f;
    for (int r = 0; r < B; ++r) {
      const float* g = dz_.data() + std::size_t(r) * std::size_t(out);
      for (int j = 0; j < out; ++j) db[j] += g[j];
    }
    if (l > 1) {
      cpu::sgemm(lib_, false, true, B, in, out, 1.0f, dz_.data(), out, params_.data() + lay_.w[std::size_t(l - 1)], out,
                 0.0f, dz_prev_.data(), in);
      const float* Zp = z_[std::size_t(l - 2)].data();
      float* d = dz_prev_.data();
      const mlp::Act act = cfg_.act;
      const std::size_t n = std::size_t(B) * std::size_t(in);
#pragma omp parallel for schedule(static)
      for (std::size_t k = 0; k < n; ++k) d[k] *= mlp::act_derivative<float>(act, Zp[k]);
      dz_.swap(dz_prev_);
    }
    // A one-rank baseline (no communication) keeps its gradients where they are: copying them into
    // buckets and back is the cost of communicating, not of the step.
    if (communicate_ && next_bucket < buckets_.size() && buckets_[next_bucket].last_layer == l) {
      pack(buckets_[next_bucket], bucket_bufs_[next_bucket]);
      if (overlap_ && communicate_)
        inflight[next_bucket] = mpi::Request::iallreduce(bucket_bufs_[next_bucket].data(), buckets_[next_bucket].elems);
      ++next_bucket;
    }
    // Open MPI progresses a non-blocking collective only inside MPI calls: poke it between layers.
    if (overlap_ && communicate_)
      for (auto& r : inflight) r.test();
  }
  const double t_comm = host_seconds();
  for (std::size_t i = 0; communicate_ && i < buckets_.size(); ++i) {
    if (overlap_) inflight[i].wait();
    else mpi::allreduce_sum(bucket_bufs_[i].data(), buckets_[i].elems);
    unpack(buckets_[i], bucket_bufs_[i]);
  }
  const double t_opt = host_seconds();
  // SGD with momentum, the train family's update; padding stays zero because its gradient is zero, and
  // a gradient left unwritten (NaN from poison()) turns its weight into NaN for the check to see.
  {
    float* w = params_.data();
    float* v = momentum_.data();
    const float* g = grads_.data();
    const float lr = cfg_.lr, mu = cfg_.momentum;
    const std::size_t n = lay_.total;
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      mlp::sgd_momentum<float>(w[i], v[i], g[i], lr, mu);
      v[i] = mlp::flush_denormal(v[i]);
    }
  }
  const double t1 = host_seconds();
  times_.backward_s = t_comm - t_bwd;
  times_.comm_s = t_opt - t_comm;
  times_.total_s = t1 - t0;
  return float(loss / double(global_rows_));
}

}  // namespace gtb::parallel
