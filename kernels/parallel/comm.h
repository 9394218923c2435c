// The MPI side of the parallel family: the world of ranks, the CPU collectives, and the small
// agreements (broadcast, max, all-true) that keep every rank on the same case and sample count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/parallel/collective.h"

namespace gtb::parallel {

namespace mpi {

bool built();                // false: built without MPI; every call below then acts as one rank
void init();                 // MPI_Init_thread (idempotent); no-op without MPI
void finalize();             // MPI_Finalize if init() started it
int rank();
int size();
int local_size();            // ranks on this host (1 without MPI)
int local_rank();            // this rank's index among the ranks on its host (0 without MPI)
std::string library();       // e.g. "Open MPI v4.1.4, ..."; "" without MPI
std::vector<std::string> hosts();  // host name of every rank, by rank (collective)

void barrier();
std::int64_t broadcast(std::int64_t v);  // rank 0's value
void broadcast_bytes(void* data, std::size_t bytes);  // rank 0's bytes into every rank's buffer
double max_over_ranks(double v);
double sum_over_ranks(double v);
bool all_true(bool v);
std::vector<double> gather_doubles(double v);  // rank 0 receives every rank's value; others get {}

// One collective on float32 buffers of the sizes counts_of() gives; in place is not used so a
// stale output cannot pass the check.
void run(Collective c, const float* send, float* recv, std::size_t send_count, std::size_t recv_count);

// Non-blocking sum all-reduce in place; wait or test the handle.
class Request {
 public:
  Request() = default;
  Request(Request&& o) noexcept;
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();
  static Request iallreduce(float* buf, std::size_t count);
  bool test();  // true once complete; also drives Open MPI's progress engine
  void wait();
  bool active() const { return handle_ != 0; }
 private:
  std::uintptr_t handle_ = 0;  // an MPI_Request, kept opaque so this header needs no <mpi.h>
};
void allreduce_sum(float* buf, std::size_t count);  // blocking, in place

}  // namespace mpi
}  // namespace gtb::parallel
