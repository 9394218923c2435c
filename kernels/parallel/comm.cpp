// MPI wrappers for the parallel family; without MPI at build time they act as a one-rank world
// and the collectives throw Unavailable.
#include "kernels/parallel/comm.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

#if GTB_HAVE_MPI
#include <mpi.h>
#endif

namespace gtb::parallel::mpi {

#if GTB_HAVE_MPI
namespace {
bool g_started = false;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) + ": " + std::string(text, std::size_t(len)));
}
// MPI counts are int: larger buffers go in chunks.
constexpr std::size_t kMaxCount = std::size_t(INT_MAX) / 2;
int count_of(std::size_t n) {
  if (n > kMaxCount) throw std::invalid_argument("MPI buffer of " + std::to_string(n) + " elements is too large");
  return int(n);
}
MPI_Request& req(std::uintptr_t& h) { return *reinterpret_cast<MPI_Request*>(h); }
}  // namespace

bool built() { return true; }
void init() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) return;
  int provided = 0;
  // Only the main thread calls MPI; OpenMP threads compute.
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_started = true;
}
void finalize() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (g_started && !fin) MPI_Finalize();
  g_started = false;
}
namespace {
bool running() {
  int inited = 0, fin = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&fin);
  return inited && !fin;
}
}  // namespace
int rank() {
  if (!running()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size() {
  if (!running()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
namespace {
// This rank's place among the ranks that share its host (MPI's shared-memory split, which works
// under any launcher, not only Open MPI's OMPI_COMM_WORLD_LOCAL_RANK): {rank, size}.
std::pair<int, int> local_place() {
  if (!running()) return {0, 1};
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  int r = 0, n = 1;
  MPI_Comm_rank(local, &r);
  MPI_Comm_size(local, &n);
  MPI_Comm_free(&local);
  return {r, n};
}
}  // namespace
int local_size() { return local_place().second; }
int local_rank() { return local_place().first; }
std::string library() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, std::size_t(len));
  const auto nl = s.find_first_of(std::string("\r\n\0", 3));
  return nl == std::string::npos ? s : s.substr(0, nl);
}
std::vector<std::string> hosts() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  if (!running()) return {gethostname(name, sizeof name - 1) == 0 ? name : "unknown"};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  const int n = size();
  std::vector<char> all(std::size_t(n) * MPI_MAX_PROCESSOR_NAME, '\0');
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  std::memcpy(mine, name, std::size_t(len));
  check(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                      MPI_COMM_WORLD),
        "MPI_Allgather(host names)");
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r) out.emplace_back(all.data() + std::size_t(r) * MPI_MAX_PROCESSOR_NAME);
  return out;
}
void barrier() {
  if (running()) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}
std::int64_t broadcast(std::int64_t v) {
  if (running()) check(MPI_Bcast(&v, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return v;
}
void broadcast_bytes(void* data, std::size_t bytes) {
  if (running()) check(MPI_Bcast(data, count_of(bytes), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast(bytes)");
}
double max_over_ranks(double v) {
  if (running()) check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce(max)");
  return v;
}
double sum_over_ranks(double v) {
  if (running()) check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce(sum)");
  return v;
}
bool all_true(bool v) {
  int x = v ? 1 : 0;
  if (running()) check(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce(min)");
  return x != 0;
}
std::vector<double> gather_doubles(double v) {
  if (!running()) return {v};
  std::vector<double> out(rank() == 0 ? std::size_t(size()) : 0u);
  check(MPI_Gather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Gather");
  return out;
}
void run(Collective c, const float* send, float* recv, std::size_t send_count, std::size_t recv_count) {
  if (!running()) throw Unavailable("MPI is not initialized");
  switch (c) {
    case Collective::all_reduce:
      check(MPI_Allreduce(send, recv, count_of(send_count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
      return;
    case Collective::reduce_scatter:
      check(MPI_Reduce_scatter_block(send, recv, count_of(recv_count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Reduce_scatter_block");
      return;
    case Collective::all_gather:
      check(MPI_Allgather(send, count_of(send_count), MPI_FLOAT, recv, count_of(send_count), MPI_FLOAT,
                          MPI_COMM_WORLD),
            "MPI_Allgather");
      return;
  }
}

Request::Request(Request&& o) noexcept : handle_(o.handle_) { o.handle_ = 0; }
Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (handle_) delete &req(handle_);
    handle_ = o.handle_;
    o.handle_ = 0;
  }
  return *this;
}
Request::~Request() {
  if (handle_) {
    // A request still in flight at destruction would leave MPI writing into freed memory.
    if (req(handle_) != MPI_REQUEST_NULL) MPI_Wait(&req(handle_), MPI_STATUS_IGNORE);
    delete &req(handle_);
  }
}
Request Request::iallreduce(float* buf, std::size_t count) {
  Request r;
  auto* m = new MPI_Request(MPI_REQUEST_NULL);
  r.handle_ = reinterpret_cast<std::uintptr_t>(m);
  check(MPI_Iallreduce(MPI_IN_PLACE, buf, count_of(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, m), "MPI_Iallreduce");
  return r;
}
bool Request::test() {
  if (!handle_ || req(handle_) == MPI_REQUEST_NULL) return true;
  int done = 0;
  check(MPI_Test(&req(handle_), &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}
void Request::wait() {
  if (handle_ && req(handle_) != MPI_REQUEST_NULL) check(MPI_Wait(&req(handle_), MPI_STATUS_IGNORE), "MPI_Wait");
}
void allreduce_sum(float* buf, std::size_t count) {
  if (!running()) throw Unavailable("MPI is not initialized");
  check(MPI_Allreduce(MPI_IN_PLACE, buf, count_of(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}

#else  // built without MPI

namespace {
[[noreturn]] void missing() {
  throw Unavailable("built without MPI (install Open MPI: openmpi-bin libopenmpi-dev, then reconfigure)");
}
}  // namespace
bool built() { return false; }
void init() {}
void finalize() {}
int rank() { return 0; }
int size() { return 1; }
int local_size() { return 1; }
int local_rank() { return 0; }
std::string library() { return ""; }
std::vector<std::string> hosts() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return {"unknown"};
  return {name};
}
void barrier() {}
std::int64_t broadcast(std::int64_t v) { return v; }
void broadcast_bytes(void*, std::size_t) {}
double max_over_ranks(double v) { return v; }
double sum_over_ranks(double v) { return v; }
bool all_true(bool v) { return v; }
std::vector<double> gather_doubles(double v) { return {v}; }
void run(Collective, const float*, float*, std::size_t, std::size_t) { missing(); }
Request::Request(Request&& o) noexcept : handle_(o.handle_) { o.handle_ = 0; }
Request& Request::operator=(Request&& o) noexcept {
  handle_ = o.handle_;
  o.handle_ = 0;
  return *this;
}
Request::~Request() = default;
Request Request::iallreduce(float*, std::size_t) { missing(); }
bool Request::test() { return true; }
void Request::wait() {}
void allreduce_sum(float*, std::size_t) { missing(); }
#endif

}  // namespace gtb::parallel::mpi
