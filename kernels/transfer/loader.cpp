// The data loader's ring and thread pool (host code; used with a CPU consumer and a GPU consumer).
#include "kernels/transfer/loader.h"

#include <stdexcept>
#include <string>
#include <thread>

#include "kernels/common/clock.h"
#include "kernels/transfer/transfer.h"

namespace gtb::cpu {

BatchRing::BatchRing(std::vector<void*> slots, std::int64_t total_batches)
    : slots_(std::move(slots)), ready_(slots_.size(), -1), total_(total_batches), free_cv_(slots_.size()) {
  if (slots_.empty()) throw std::invalid_argument("BatchRing: depth must be >= 1");
  for (void* s : slots_)
    if (!s) throw std::invalid_argument("BatchRing: null slot buffer");
  if (total_batches < 0) throw std::invalid_argument("BatchRing: negative batch count");
}

std::int64_t BatchRing::claim(void** slot) {
  std::unique_lock<std::mutex> lk(m_);
  if (closed_ || next_claim_ >= total_) return -1;
  const std::int64_t b = next_claim_++;
  const auto d = static_cast<std::int64_t>(slots_.size());
  free_cv_[static_cast<std::size_t>(b % d)].wait(lk, [&] { return closed_ || released_ >= b - d + 1; });
  if (closed_) return -1;
  *slot = slots_[static_cast<std::size_t>(b % d)];
  return b;
}

void BatchRing::publish(std::int64_t batch) {
  {
    std::lock_guard<std::mutex> lk(m_);
    ready_[static_cast<std::size_t>(batch % static_cast<std::int64_t>(slots_.size()))] = batch;
  }
  ready_cv_.notify_one();
}

void* BatchRing::wait_ready(std::int64_t batch) {
  std::unique_lock<std::mutex> lk(m_);
  if (batch != released_)
    throw std::runtime_error("BatchRing: batch " + std::to_string(batch) + " taken out of order (expected " +
                             std::to_string(released_) + ")");
  const auto s = static_cast<std::size_t>(batch % static_cast<std::int64_t>(slots_.size()));
  ready_cv_.wait(lk, [&] { return closed_ || ready_[s] == batch; });
  if (ready_[s] != batch) throw std::runtime_error("BatchRing: closed while waiting for batch " + std::to_string(batch));
  return slots_[s];
}

void BatchRing::release(std::int64_t batch) {
  const auto s = static_cast<std::size_t>(batch % static_cast<std::int64_t>(slots_.size()));
  {
    std::lock_guard<std::mutex> lk(m_);
    if (batch != released_)
      throw std::runtime_error("BatchRing: release of batch " + std::to_string(batch) + " out of order");
    ready_[s] = -1;
    released_ = batch + 1;
  }
  // More than one producer can wait on a slot when workers > depth; only one of them may proceed,
  // the others re-check and sleep again.
  free_cv_[s].notify_all();
}

void BatchRing::close() {
  {
    std::lock_guard<std::mutex> lk(m_);
    closed_ = true;
  }
  ready_cv_.notify_all();
  for (auto& cv : free_cv_) cv.notify_all();
}

void validate(const LoaderConfig& cfg, std::size_t slot_count) {
  if (cfg.workers < 1) throw std::invalid_argument("loader: workers must be >= 1, got " + std::to_string(cfg.workers));
  if (cfg.depth < 1) throw std::invalid_argument("loader: depth must be >= 1, got " + std::to_string(cfg.depth));
  if (cfg.batches < 1) throw std::invalid_argument("loader: batches must be >= 1, got " + std::to_string(cfg.batches));
  if (slot_count != static_cast<std::size_t>(cfg.depth))
    throw std::invalid_argument("loader: " + std::to_string(slot_count) + " slot buffers for depth " +
                                std::to_string(cfg.depth));
}

LoaderRun run_loader(const LoaderConfig& cfg, const std::vector<void*>& slots, const ProduceFn& produce,
                     const ConsumeFn& consume) {
  validate(cfg, slots.size());
  BatchRing ring(slots, cfg.batches);
  std::mutex err_m;
  std::exception_ptr err;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lk(err_m);
      if (!err) err = e;
    }
    ring.close();
  };

  LoaderRun run;
  run.busy_start.reserve(static_cast<std::size_t>(cfg.batches));
  run.busy_end.reserve(static_cast<std::size_t>(cfg.batches));
  const double t0 = host_seconds();
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(cfg.workers));
  for (int w = 0; w < cfg.workers; ++w)
    workers.emplace_back([&] {
      try {
        void* slot = nullptr;
        for (std::int64_t b; (b = ring.claim(&slot)) >= 0;) {
          produce(b, slot);
          ring.publish(b);
        }
      } catch (...) {
        fail(std::current_exception());
      }
    });
  try {
    for (std::int64_t b = 0; b < cfg.batches; ++b) {
      const double w0 = host_seconds();
      if (b > 0) run.busy_end.back() = w0 - t0;
      void* slot = ring.wait_ready(b);
      const double c0 = host_seconds();
      consume(b, slot);
      const double c1 = host_seconds();
      ring.release(b);
      run.wait_seconds += c0 - w0;
      run.busy_start.push_back(c0 - t0);
      run.busy_end.push_back(c1 - t0);
    }
  } catch (...) {
    fail(std::current_exception());
  }
  run.seconds = host_seconds() - t0;
  for (auto& t : workers) t.join();
  if (err) std::rethrow_exception(err);
  run.idle_fraction = transfer::idle_fraction(run.busy_start, run.busy_end);
  return run;
}

}  // namespace gtb::cpu
