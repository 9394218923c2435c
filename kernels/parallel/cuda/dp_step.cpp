// The data-parallel GPU step: per layer across local GPUs, buckets averaged in place with NCCL.
#include "kernels/parallel/cuda/dp_step.h"

#include <algorithm>
#include <stdexcept>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/memory.h"
#include "kernels/train/cuda/mlp.h"

#if GTB_HAVE_NCCL
#include <nccl.h>
#endif

namespace gtb::parallel::nccl {

namespace gm = gtb::cuda::mlp;
using gtb::cuda::Event;

struct GpuDpMlp::Replica {
  int device = 0;
  ncclComm* comm = nullptr;
  gm::GpuMlp model;
  gtb::cuda::Stream comm_stream;
  std::vector<std::unique_ptr<Event>> ready, done;  // per bucket: gradients written, bucket reduced
  Event start, step0, bwd0, bwd1, comm_end, end;
  // Built with `device` current: the model's memory, streams and events belong to it.
  Replica(int dev, ncclComm* c, const mlp::Config& cfg, int rows, std::size_t buckets)
      : device(dev), comm(c), model(cfg, rows, 1, gm::Precision::fp32) {
    for (std::size_t b = 0; b < buckets; ++b) {
      ready.push_back(std::make_unique<Event>(false));
      done.push_back(std::make_unique<Event>(false));
    }
  }
};

void GpuDpMlp::on(int i) const { GTB_CUDA_CHECK(cudaSetDevice(reps_[std::size_t(i)]->device)); }

GpuDpMlp::GpuDpMlp(std::shared_ptr<const Comms> comms, const mlp::Config& c, int rows_per_replica,
                   std::vector<Bucket> buckets, bool overlap, const float* x, const int* labels)
    : comms_(std::move(comms)), cfg_(c), lay_(c), buckets_(std::move(buckets)), overlap_(overlap) {
  const KeepDevice keep;
  c.validate();
  if (!comms_) throw std::invalid_argument("GpuDpMlp: no GPUs");
  if (c.optim != mlp::Optim::sgd) throw std::invalid_argument("the data-parallel step uses SGD with momentum");
  if (rows_per_replica < 1) throw std::invalid_argument("data-parallel step needs rows_per_rank >= 1");
  check_cover(lay_, buckets_);
  for (const Bucket& b : buckets_) ranges_.push_back(flat_ranges(lay_, b));
  communicate_ = comms_->comm(0) != nullptr;
  for (int i = 0; i < comms_->local(); ++i) {
    GTB_CUDA_CHECK(cudaSetDevice(comms_->device(i)));
    reps_.push_back(
        std::make_unique<Replica>(comms_->device(i), comms_->comm(i), cfg_, rows_per_replica, buckets_.size()));
    const std::size_t first = shard_first_row(comms_->rank(i), rows_per_replica);
    reps_.back()->model.load_data(x + first * std::size_t(c.input), labels + first, gm::DataSource::device);
  }
}

GpuDpMlp::~GpuDpMlp() {
  const KeepDevice keep;
  for (auto& r : reps_) {
    cudaSetDevice(r->device);
    r.reset();
  }
}

int GpuDpMlp::local() const { return int(reps_.size()); }

namespace {
#if GTB_HAVE_NCCL
void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
#endif
}  // namespace

void GpuDpMlp::step() {
  const KeepDevice keep;
  enqueue_step(true);
}

void GpuDpMlp::reduce(std::size_t b, bool on_comm_stream) {
#if GTB_HAVE_NCCL
  // ncclAvg: each GPU's loss is the mean over its own rows, so the average over equal shards is the
  // global batch's mean gradient (what DDP computes by dividing the sum by the world size).
  nccl_ok(ncclGroupStart(), "ncclGroupStart");
  for (auto& r : reps_) {
    cudaStream_t s = on_comm_stream ? r->comm_stream.get() : r->model.stream();
    float* g = r->model.grad_data();
    for (const FlatRange& f : {ranges_[b].weights, ranges_[b].biases})
      nccl_ok(ncclAllReduce(g + f.offset, g + f.offset, f.count, ncclFloat32, ncclAvg, r->comm, s),
              "ncclAllReduce(bucket)");
  }
  nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
#else
  (void)b, (void)on_comm_stream;
  throw Unavailable("built without NCCL");
#endif
}

void GpuDpMlp::enqueue_step(bool mark_start) {
  const int n = local(), L = lay_.layers();
  for (int i = 0; i < n; ++i) {
    on(i);
    Replica& r = *reps_[std::size_t(i)];
    if (mark_start) r.start.record(r.model.stream());
    r.step0.record(r.model.stream());
    r.model.forward(0);
    r.bwd0.record(r.model.stream());
  }
  // Layer by layer across the GPUs, so that a bucket's group call finds every GPU's gradients queued.
  std::size_t next = 0;
  for (int l = L; l >= 1; --l) {
    for (int i = 0; i < n; ++i) {
      on(i);
      reps_[std::size_t(i)]->model.backward_layer(l, 0);
    }
    if (next < buckets_.size() && buckets_[next].last_layer == l) {
      if (overlap_ && communicate_) {
        for (int i = 0; i < n; ++i) {
          on(i);
          Replica& r = *reps_[std::size_t(i)];
          r.ready[next]->record(r.model.stream());
          GTB_CUDA_CHECK(cudaStreamWaitEvent(r.comm_stream.get(), r.ready[next]->get(), 0));
        }
        reduce(next, true);
        for (int i = 0; i < n; ++i) {
          on(i);
          reps_[std::size_t(i)]->done[next]->record(reps_[std::size_t(i)]->comm_stream.get());
        }
      }
      ++next;
    }
  }
  for (int i = 0; i < n; ++i) {
    on(i);
    reps_[std::size_t(i)]->bwd1.record(reps_[std::size_t(i)]->model.stream());
  }
  if (communicate_) {
    if (overlap_) {
      for (int i = 0; i < n; ++i) {
        on(i);
        Replica& r = *reps_[std::size_t(i)];
        for (auto& d : r.done) GTB_CUDA_CHECK(cudaStreamWaitEvent(r.model.stream(), d->get(), 0));
      }
    } else {
      for (std::size_t b = 0; b < buckets_.size(); ++b) reduce(b, false);
    }
  }
  for (int i = 0; i < n; ++i) {
    on(i);
    Replica& r = *reps_[std::size_t(i)];
    r.comm_end.record(r.model.stream());
    r.model.update();
    r.end.record(r.model.stream());
  }
}

void GpuDpMlp::sync() {
  const KeepDevice keep;
  for (int i = 0; i < local(); ++i) {
    on(i);
    reps_[std::size_t(i)]->model.sync();
    reps_[std::size_t(i)]->comm_stream.sync();
  }
}

GpuStepTimes GpuDpMlp::time_steps(std::int64_t steps) {
  const KeepDevice keep;
  if (steps < 1) throw std::invalid_argument("time_steps: steps must be >= 1");
  sync();
  for (std::int64_t k = 0; k < steps; ++k) enqueue_step(k == 0);
  GpuStepTimes t;
  for (int i = 0; i < local(); ++i) {
    on(i);
    const Replica& r = *reps_[std::size_t(i)];
    t.step_s = std::max(t.step_s, gtb::cuda::elapsed_seconds(r.start, r.end));
    t.last_step_s = std::max(t.last_step_s, gtb::cuda::elapsed_seconds(r.step0, r.end));
    t.backward_s = std::max(t.backward_s, gtb::cuda::elapsed_seconds(r.bwd0, r.bwd1));
    t.comm_s = std::max(t.comm_s, gtb::cuda::elapsed_seconds(r.bwd1, r.comm_end));
  }
  return t;
}

std::vector<float> GpuDpMlp::params(int i) const {
  const KeepDevice keep;
  on(i);
  return reps_[std::size_t(i)]->model.params();
}
void GpuDpMlp::set_params(const std::vector<float>& p) {
  const KeepDevice keep;
  const std::vector<float> zero(lay_.total, 0.0f);
  for (int i = 0; i < local(); ++i) {
    on(i);
    reps_[std::size_t(i)]->model.set_params(p);
    reps_[std::size_t(i)]->model.set_opt_state(zero);
  }
}
void GpuDpMlp::poison() {
  const KeepDevice keep;
  for (int i = 0; i < local(); ++i) {
    on(i);
    reps_[std::size_t(i)]->model.poison();
  }
}

}  // namespace gtb::parallel::nccl
