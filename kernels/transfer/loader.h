// The data loader's threading: W worker threads fill a ring of D batch buffers in batch order while
// one consumer (a CPU computation, or the host thread feeding a GPU) takes them in order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace gtb::cpu {

// Batch b lives in slot b % D. A worker may fill it once batch b - D has been released; the
// consumer takes batches in order, as PyTorch's DataLoader yields them.
class BatchRing {
 public:
  // Throws std::invalid_argument if slots is empty or holds a null pointer.
  BatchRing(std::vector<void*> slots, std::int64_t total_batches);

  std::size_t depth() const { return slots_.size(); }
  // Producer: takes the next batch index and waits for its slot. Returns -1 when every batch has
  // been handed out or the ring was closed.
  std::int64_t claim(void** slot);
  void publish(std::int64_t batch);
  // Consumer: waits until `batch` is ready and returns its slot. Throws std::runtime_error if the
  // ring is closed first (a worker failed) or batches are taken out of order.
  void* wait_ready(std::int64_t batch);
  void release(std::int64_t batch);
  // Wakes every waiter; claim() returns -1 and wait_ready() throws from now on.
  void close();

 private:
  std::vector<void*> slots_;
  std::vector<std::int64_t> ready_;  // per slot: the batch it holds ready, or -1
  std::int64_t total_;
  std::int64_t next_claim_ = 0;
  std::int64_t released_ = 0;  // batches [0, released_) are done
  bool closed_ = false;
  std::mutex m_;
  // Separate wake-ups: a release wakes only the producers waiting for that slot and a publish only
  // the consumer, so W waiting workers are not all woken on every batch (on a busy machine that
  // herd shows up as consumer idle time).
  std::condition_variable ready_cv_;
  std::vector<std::condition_variable> free_cv_;  // per slot
};

struct LoaderConfig {
  int workers = 1;
  int depth = 2;
  std::int64_t batches = 16;
};

struct LoaderRun {
  double seconds = 0;                   // first wait to last release
  double wait_seconds = 0;              // consumer time spent waiting for a ready batch
  // Per batch, seconds from the start of the run: from the moment the consumer has batch b until it
  // starts waiting for batch b + 1 (the last: until its consume returns). The gaps between them
  // are exactly the waits for data; a consumer descheduled by the OS is not counted as starved.
  std::vector<double> busy_start;
  std::vector<double> busy_end;
  double idle_fraction = 0;             // transfer::idle_fraction over the busy intervals
};

// produce(batch, slot) runs on the worker threads (preprocessing + writing the batch);
// consume(batch, slot) runs on the calling thread; when it returns, the slot is reused. An
// exception in either is rethrown here after every thread has joined.
using ProduceFn = std::function<void(std::int64_t batch, void* slot)>;
using ConsumeFn = std::function<void(std::int64_t batch, void* slot)>;
LoaderRun run_loader(const LoaderConfig& cfg, const std::vector<void*>& slots, const ProduceFn& produce,
                     const ConsumeFn& consume);

// Throws std::invalid_argument with the offending field unless workers >= 1, depth >= 1,
// batches >= 1 and slots.size() == depth.
void validate(const LoaderConfig& cfg, std::size_t slot_count);

}  // namespace gtb::cpu
