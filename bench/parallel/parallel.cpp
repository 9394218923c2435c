// Parallel family: collective bandwidth (MPI on the CPU, NCCL on GPUs) and a data-parallel MLP step
// with DDP-style gradient buckets, with and without overlap; rank 0 writes every rank's figures.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gtb/stats.h"
#include "gtb/blas_core.h"
#include "gtb/gtb.h"
#include "kernels/common/cpu/blas.h"
#include "kernels/common/verify.h"
#include "kernels/parallel/collective.h"
#include "kernels/parallel/comm.h"
#include "kernels/parallel/cpu/dp_step.h"
#include "kernels/train/cpu/mlp.h"
#include "kernels/train/mlp.h"
#if GTB_HAVE_CUDA
#include "gtb/cuda_timing.h"
#include "kernels/parallel/cuda/dp_step.h"
#include "kernels/parallel/cuda/nccl.h"
#include "kernels/train/cuda/mlp.h"
#endif

namespace {

namespace par = gtb::parallel;
namespace mpi = gtb::parallel::mpi;
namespace mlp = gtb::mlp;

constexpr std::uint64_t kSeed = 1313;

// The world size the launcher asked for, read before main() so it can be a declared axis (and so
// part of every record id): Open MPI, PMI (MPICH, Slurm's srun) and Slurm's own variable.
std::int64_t launched_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* s = std::getenv(v)) {
      const long n = std::strtol(s, nullptr, 10);
      if (n >= 1) return n;
    }
  return 1;
}
const std::int64_t kRanks = launched_ranks();

// The driver sets this when it could not launch the ranks it was asked for (no mpirun): every record
// is then skipped with that reason rather than passed off as a smaller run.
void skip_if_not_launched() {
  if (const char* why = std::getenv("GTB_LAUNCH_SKIP"); why && *why) throw gtb::Skip(why);
}
void require_world() {
  skip_if_not_launched();
  if (!mpi::built()) throw gtb::Skip("built without MPI (install openmpi-bin and libopenmpi-dev, then reconfigure)");
  if (mpi::size() != kRanks)
    throw std::runtime_error("MPI world has " + std::to_string(mpi::size()) + " ranks but the launcher announced " +
                             std::to_string(kRanks));
}

// Its kernels use OpenBLAS: its core type is selected before any case.
const bool kOpenblasCore = gtb::install_openblas_core_selection();
bool g_mpi_started = false;  // mpi::init() ran (a skipped launch never starts MPI)
const bool kGroup = gtb::set_process_group(
    "parallel", {[] {
                   if (const char* why = std::getenv("GTB_LAUNCH_SKIP"); why && *why) return;
                   mpi::init();
                   g_mpi_started = true;
                   // Rank 0 speaks for the run; the others' console lines would repeat its own.
                   if (mpi::rank() != 0 && !std::freopen("/dev/null", "w", stdout))
                     throw std::runtime_error("cannot silence rank " + std::to_string(mpi::rank()));
                   // A rank's BLAS gets the cores its OpenMP has (mpirun binds a rank to its share).
                   gtb::cpu::set_blas_threads(omp_get_max_threads());
                 },
                 [](gtb::json& ctx) {
                   gtb::json p = {{"ranks", mpi::size()}, {"hosts", mpi::hosts()}, {"local_ranks", mpi::local_size()}};
                   p["mpi"] = mpi::built() ? gtb::json(mpi::library()) : gtb::json("not built");
#if GTB_HAVE_CUDA
                   p["nccl"] = par::nccl::built() ? gtb::json(par::nccl::version()) : gtb::json("not built");
#endif
                   ctx["parallel"] = p;
                 },
                 [] { return mpi::rank() == 0; }, [] { mpi::finalize(); },
                 // Rank 0's clock on every rank: with lockstep_exec's samples (the slowest rank's), every
                 // rank's harness decides the same, and the overlap and bucket A/Bs are measured as pairs.
                 [](double x) {
                   if (g_mpi_started) mpi::broadcast_bytes(&x, sizeof x);
                   return x;
                 }});

// Every rank runs the harness's timing loop, which decides warm-up, repetitions, samples and rounds
// on rank 0's clock (the group's agree); a sample is the slowest rank's time after a common barrier,
// the same on every rank, so every rank decides the same and runs the same collectives. Returns true
// on rank 0 (which owns the record). Ranks in lockstep are a self-timed batch: `body` runs `reps`
// repetitions and returns their seconds, read with the harness's helpers.
bool lockstep_exec(gtb::State& st, const std::function<double(std::int64_t)>& body,
                   gtb::Clock clock = gtb::Clock::host_wall) {
  st.exec_batch_self_timed(clock, [&](std::int64_t reps) {
    mpi::barrier();
    return mpi::max_over_ranks(body(reps));
  });
  return mpi::rank() == 0;
}
// Every rank agrees on the check: one rank's failure makes the record invalid on all of them.
bool agreed_check(gtb::State& st, bool ok, const std::string& detail, gtb::json data = gtb::json::object()) {
  const bool all = mpi::all_true(ok);
  st.check(all, all ? detail : (ok ? "the check failed on another rank" : detail), std::move(data));
  return all;
}
// Runs a case's setup on every rank; when it throws on any rank, every rank throws (a rank that failed
// its own error), so no rank is left waiting in the case's next collective.
template <class F>
void on_every_rank(F&& setup) {
  std::exception_ptr err;
  try {
    setup();
  } catch (...) {
    err = std::current_exception();
  }
  if (mpi::all_true(!err)) return;
  if (err) std::rethrow_exception(err);
  throw std::runtime_error("rank " + std::to_string(mpi::rank()) + ": the setup failed on another rank");
}
[[noreturn]] void follower_done() {
  throw gtb::Skip("rank " + std::to_string(mpi::rank()) + ": its figures are in rank 0's record");
}

const gtb::RuleChange kQuickRule = gtb::RuleChange().budget_seconds(0.15).min_samples(5);

// ---- collectives on the CPU: MPI ----
void cpu_collective(gtb::State& st) {
  require_world();
  const par::Collective c = par::collective_from_string(st.get_string("collective"));
  const auto bytes = std::size_t(st.get_int("bytes"));
  const int n = mpi::size(), me = mpi::rank();
  const par::Counts k = par::counts_of(c, bytes, sizeof(float), n);
  if (k.send == 0 || k.recv == 0) throw gtb::Skip("size is below one element per rank");
  std::vector<float> send(k.send), recv(k.recv);
  const std::size_t first = c == par::Collective::all_gather ? std::size_t(me) * k.send : 0;
  for (std::size_t i = 0; i < k.send; ++i) send[i] = par::pattern_value(kSeed, me, first + i);
  gtb::poison(recv.data(), recv.size());
  mpi::run(c, send.data(), recv.data(), k.send, k.recv);
  std::size_t bad = recv.size();
  for (std::size_t j = 0; j < recv.size() && bad == recv.size(); ++j) {
    double ref = 0;
    switch (c) {
      case par::Collective::all_reduce: ref = par::pattern_sum(kSeed, n, j); break;
      case par::Collective::reduce_scatter: ref = par::pattern_sum(kSeed, n, std::size_t(me) * k.recv + j); break;
      case par::Collective::all_gather: ref = double(par::pattern_value(kSeed, int(j / k.send), j)); break;
    }
    if (double(recv[j]) != ref) bad = j;
  }
  const bool ok = bad == recv.size();
  const std::string detail = ok ? "every output element equals the float64 sum exactly (inputs are multiples of 1/64)"
                                : "rank " + std::to_string(me) + " element " + std::to_string(bad) + ": got " +
                                      std::to_string(recv[bad]);
  if (!agreed_check(st, ok, detail)) return;
  const double size = double(par::effective_bytes(c, bytes, sizeof(float), n));
  st.set_work(size);
  const bool plain = st.record().variant == "mpi_plain_loop";
  // The plain loop is what a user would write: no barrier, no slowest-rank agreement, rank 0's clock.
  auto body = [&](std::int64_t reps) {
    return gtb::batch_seconds(reps, [&] { mpi::run(c, send.data(), recv.data(), k.send, k.recv); });
  };
  if (plain) {
    // Every rank's harness takes rank 0's time of the sample, sent after it, so all decide the same.
    st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t reps) {
      double t = body(reps);
      mpi::broadcast_bytes(&t, sizeof t);
      return t;
    });
    if (me != 0) follower_done();
  } else if (!lockstep_exec(st, body)) {
    follower_done();
  }
  const double med = st.record().stats->median;
  st.counter("time_us", med * 1e6, "us");
  st.counter("busbw", par::busbw_gbps(c, n, size, med), "GB/s");
  st.counter("bus_factor", par::bus_factor(c, n), "x");
  st.info("ranks", n);
  if (n == 1) st.info("note", "one rank: MPI copies locally; busbw is 0 by definition, not a multi-rank figure");
}

// ---- the data-parallel step on the CPU ----
struct DpCase {
  mlp::Config cfg;
  int rows = 0;
};
DpCase dp_case(gtb::State& st) {
  DpCase d;
  d.cfg = mlp::bench_config(st.get_int("width", 1), st.get_int("depth", 1));
  d.rows = st.get_int("rows_per_rank", 1);
  return d;
}

// The step's FP32 GEMM library: the fastest available one on rank 0's step alone (a model that does not
// communicate, timed briefly outside any timed region, the train family's 5 % rule), broadcast so that
// every rank, and every variant of one width, depth and rows per rank (both sides of the overlap and
// bucket A/Bs, the one-rank baseline), runs the same one.
struct DpLibrary {
  gtb::cpu::GemmLib lib = gtb::cpu::GemmLib::openblas;
  gtb::json candidates = gtb::json::object();  // rank 0's timings
};
const DpLibrary& dp_library(gtb::State& st, const DpCase& d, int global, const float* x, const int* y) {
  static std::map<std::tuple<int, int, int>, DpLibrary> chosen;
  const auto key = std::make_tuple(d.cfg.width, d.cfg.depth, d.rows);
  if (const auto it = chosen.find(key); it != chosen.end()) return it->second;
  DpLibrary c;
  std::int64_t pick = 0;
  if (mpi::rank() == 0) {
    const std::vector<gtb::cpu::LibraryTiming> timed = gtb::cpu::time_libraries([&](gtb::cpu::GemmLib lib) {
      par::DpMlp alone(d.cfg, d.rows, global, par::plan_buckets(mlp::Layout(d.cfg), 1.0, 25.0), false, false);
      alone.set_gemm_lib(lib);
      return st.probe([&] { alone.step(x, y); }, gtb::ProbeRule{3, 5e-3, 0});
    });
    for (const auto& t : timed)
      c.candidates[gtb::cpu::to_string(t.lib)] =
          t.available ? gtb::json{{"step_ms", t.seconds * 1e3}} : gtb::json{{"available", false}};
    pick = static_cast<std::int64_t>(gtb::cpu::fastest_library(timed));
  }
  c.lib = static_cast<gtb::cpu::GemmLib>(mpi::broadcast(pick));
  return chosen.emplace(key, std::move(c)).first->second;
}

// The harness's median of a rank's own per-step figures; 0 for a rank that took no step (one_rank's
// waiting ranks).
double median_of(const std::vector<double>& v) { return v.empty() ? 0.0 : gtb::median(v); }
// The check of every data-parallel step, CPU or GPU: a float64 single-process step on the whole global
// batch from the same initial weights. Float32 GEMMs and a float32 sum over ranks against float64: the
// update is lr * grad, so the allowed error scales with the update's size.
struct DpReference {
  std::vector<double> after;
  int global = 0;
  DpReference(const mlp::Config& cfg, const std::vector<float>& p0, const mlp::Dataset& data, int global_rows)
      : global(global_rows) {
    const mlp::Layout lay(cfg);
    const std::vector<double> pd(p0.begin(), p0.end()), od(lay.total, 0.0);
    after = mlp::reference_step(cfg, pd, od, 0, data.x.data(), data.y.data(), global).params_after;
  }
  bool check(const std::vector<float>& w, std::string& detail) const {
    const gtb::ErrorReport e = gtb::compare_elementwise(w.data(), after.data(), after.size(), 1e-5, 1e-6);
    detail = "weights after one step vs a float64 single-process step on the global batch of " +
             std::to_string(global) + " rows (|w - w_ref| <= 1e-6 + 1e-5 |w_ref|): " + e.detail;
    return e.ok;
  }
};
// The step's counters, CPU or GPU: per-rank medians over the rank's own steps, then the worst rank.
void dp_counters(gtb::State& st, const mlp::Layout& lay, std::size_t buckets, int n, int global, bool overlap,
                 double comm_med, double frac_med, double bwd_med) {
  st.counter("step_ms", st.record().stats->median * 1e3, "ms");
  st.counter("comm_ms", comm_med * 1e3, "ms");
  st.counter("comm_fraction", frac_med, "fraction");
  st.counter("backward_ms", bwd_med * 1e3, "ms");
  st.counter("gradient_bytes", double(lay.parameters()) * 4.0, "bytes");
  st.counter("buckets", double(buckets), "count");
  st.info("ranks", n);
  st.info("global_batch", global);
  st.info("comm_ms_means", overlap ? "time waiting for in-flight all-reduces after backward"
                                   : "blocking all-reduces of every bucket after backward");
}

void cpu_dp_step(gtb::State& st) {
  require_world();
  const DpCase d = dp_case(st);
  const bool one_rank = st.record().variant == "one_rank";
  const int n = one_rank ? 1 : mpi::size(), me = mpi::rank();
  const bool overlap = !one_rank && st.get_string("overlap") == "on";
  const double cap = one_rank ? 25.0 : st.get_double("bucket_mb");
  const int global = d.rows * n;
  const mlp::Dataset data = mlp::make_clusters(global, d.cfg.input, d.cfg.classes, kSeed);
  const mlp::Layout lay(d.cfg);
  par::DpMlp model(d.cfg, d.rows, global, par::plan_buckets(lay, 1.0, cap), overlap, !one_rank);
  // One rank alone: rank 0 steps while the others wait, so it has the machine to itself as it would in a
  // one-rank run with the same per-rank resources.
  const bool active = !one_rank || me == 0;
  const std::size_t off = one_rank ? 0 : par::shard_first_row(me, d.rows);
  const float* x = data.x.data() + off * std::size_t(d.cfg.input);
  const int* y = data.y.data() + off;
  const DpLibrary& library = dp_library(st, d, global, x, y);
  model.set_gemm_lib(library.lib);
  st.info("gemm_library", gtb::cpu::to_string(library.lib));
  if (me == 0) st.info("gemm_candidates", library.candidates);
  // Check one step against a float64 single-process step on the whole global batch.
  bool ok = true;
  std::string detail;
  if (active) {
    const std::vector<float> p0 = model.params();
    model.poison();
    model.step(x, y);
    ok = DpReference(d.cfg, p0, data, global).check(model.params(), detail);
    model.params() = p0;  // the timed steps start from the same weights
  }
  if (!agreed_check(st, ok, one_rank && me != 0 ? "rank 0 steps alone" : detail,
                    {{"buckets", model.buckets().size()}, {"ranks", n}}))
    return;
  st.set_work(double(global));
  std::vector<double> comm, frac, bwd;  // per step on this rank
  auto body = [&](std::int64_t reps) {
    if (!active) return 0.0;
    return gtb::batch_seconds(reps, [&] {
      model.step(x, y);
      comm.push_back(model.last_times().comm_s);
      frac.push_back(model.last_times().comm_s / model.last_times().total_s);
      bwd.push_back(model.last_times().backward_s);
    });
  };
  const bool leader = lockstep_exec(st, body);
  // Each rank's medians over its own steps, then the worst rank: the fraction comes from the same steps
  // as its communication time, not from the record's samples (those are the slowest rank's sums).
  const double comm_med = mpi::max_over_ranks(median_of(comm)), bwd_med = mpi::max_over_ranks(median_of(bwd));
  const double frac_med = mpi::max_over_ranks(median_of(frac));
  if (!leader) follower_done();
  dp_counters(st, lay, model.buckets().size(), n, global, overlap, comm_med, frac_med, bwd_med);
}

#if GTB_HAVE_CUDA
// Host seconds of `reps` collectives from a drained queue to a drained queue, as nccl-tests times them.
double time_collectives(par::nccl::LocalGroup& g, std::int64_t reps) {
  return gtb::batch_seconds(reps, [&] { g.enqueue(1); }, [&] { g.sync(); });
}

// One process: every local GPU. Several ranks: one GPU per rank, the communicator set up over MPI;
// every rank checks its own output and the record is invalid if any rank's is wrong, and a sample is
// the slowest rank's time.
void gpu_collective(gtb::State& st) {
  skip_if_not_launched();
  const par::Collective c = par::collective_from_string(st.get_string("collective"));
  const par::nccl::DType dt = par::nccl::dtype_from_string(st.get_string("dtype"));
  std::unique_ptr<par::nccl::LocalGroup> g;
  try {
    on_every_rank([&] { g = std::make_unique<par::nccl::LocalGroup>(c, std::size_t(st.get_int("bytes")), dt, kSeed); });
  } catch (const par::Unavailable& e) {
    throw gtb::Skip(e.what());
  }
  const par::nccl::CheckResult r = g->run_and_check();
  if (!agreed_check(st, r.ok, r.detail)) return;
  const double size = double(g->bytes());
  st.set_work(size);
  if (!lockstep_exec(st, [&](std::int64_t reps) { return time_collectives(*g, reps); })) follower_done();
  const double med = st.record().stats->median;
  st.counter("time_us", med * 1e6, "us");
  st.counter("busbw", par::busbw_gbps(c, g->ranks(), size, med), "GB/s");
  st.info("gpus", g->ranks());
  st.info("processes", mpi::size());
  st.info("nccl", par::nccl::version());
  if (g->ranks() == 1) st.info("note", "one GPU: NCCL's one-rank path is a local copy; busbw is 0 by definition");
}
// The data-parallel step on GPUs: every local GPU of one process, or one GPU per rank; one_rank: the
// GPU of rank 0 alone, without communication. Timed with CUDA events on each GPU's compute stream
// (the slowest GPU of the slowest rank). No blocking kernel holds the stream: NCCL's work must not
// queue behind one, so a launch-bound step shows its enqueue time, as an eager training loop does.
void gpu_dp_step(gtb::State& st) {
  skip_if_not_launched();
  namespace nc = par::nccl;
  const DpCase d = dp_case(st);
  const bool one_rank = st.record().variant == "one_rank";
  const bool overlap = !one_rank && st.get_string("overlap") == "on";
  const double cap = one_rank ? 25.0 : st.get_double("bucket_mb");
  const int me = mpi::rank();
  std::shared_ptr<const nc::Comms> comms;
  if (one_rank) {
    // Rank 0 steps alone; the others wait, as in the CPU one-rank record.
    const int local = mpi::local_rank(), locals = mpi::local_size();
    bool ok = true;
    std::string why;
    if (me == 0) try {
        comms = nc::Comms::solo(local, locals);
      } catch (const par::Unavailable& e) {
        ok = false;
        why = e.what();
      }
    if (!mpi::all_true(ok)) throw gtb::Skip(me == 0 ? why : "rank 0 has no GPU");
  } else {
    try {
      on_every_rank([&] { comms = nc::Comms::world(); });
    } catch (const par::Unavailable& e) {
      throw gtb::Skip(e.what());
    }
  }
  const int n = one_rank ? 1 : comms->world_size();
  const int global = d.rows * n;
  const mlp::Dataset data = mlp::make_clusters(global, d.cfg.input, d.cfg.classes, kSeed);
  const mlp::Layout lay(d.cfg);
  const std::vector<par::Bucket> buckets = par::plan_buckets(lay, 1.0, cap);
  std::unique_ptr<nc::GpuDpMlp> model;
  on_every_rank([&] {
    if (comms)
      model = std::make_unique<nc::GpuDpMlp>(comms, d.cfg, d.rows, buckets, overlap, data.x.data(), data.y.data());
  });
  bool ok = true;
  std::string detail = "rank 0 steps alone";
  if (model) {
    const std::vector<float> p0 = model->params(0);
    model->poison();
    model->step();
    model->sync();
    const DpReference ref(d.cfg, p0, data, global);
    for (int i = 0; i < model->local() && ok; ++i) {
      ok = ref.check(model->params(i), detail);
      detail = "GPU " + std::to_string(comms->device(i)) + " (rank " + std::to_string(comms->rank(i)) + "): " + detail;
    }
    model->set_params(p0);
  }
  if (!agreed_check(st, ok, detail, {{"buckets", buckets.size()}, {"ranks", n}})) return;
  st.set_work(double(global));
  std::vector<double> comm, frac, bwd;
  auto body = [&](std::int64_t reps) {
    if (!model) return 0.0;
    const nc::GpuStepTimes t = model->time_steps(reps);
    comm.push_back(t.comm_s);
    frac.push_back(t.comm_s / t.last_step_s);
    bwd.push_back(t.backward_s);
    return t.step_s;
  };
  const bool leader = lockstep_exec(st, body, gtb::Clock::cuda_event);
  const double comm_med = mpi::max_over_ranks(median_of(comm)), bwd_med = mpi::max_over_ranks(median_of(bwd));
  const double frac_med = mpi::max_over_ranks(median_of(frac));
  if (!leader) follower_done();
  dp_counters(st, lay, buckets.size(), n, global, overlap, comm_med, frac_med, bwd_med);
  st.info("gpus", n);
  st.info("processes", mpi::size());
  st.info("phases", "comm_ms, backward_ms and comm_fraction are those of the last step of each sample");
}

// One GPU: the step's backward alone, and with bucket-sized all-reduces in flight on NCCL's own
// stream (compute and communication share the SMs and the memory). Forward runs once, outside the
// timed region. The whole step is checked in float64 first; backward under contention must give the
// same gradients as backward alone. Under several ranks rank 0 measures it alone with its own
// process's GPUs (nothing here is collective over MPI); the other ranks wait in the next case.
void gpu_interference(gtb::State& st) {
  skip_if_not_launched();
  if (mpi::rank() != 0) follower_done();
  namespace gm = gtb::cuda::mlp;
  const bool contended = st.get_string("reduction") == "on";
  const mlp::Config cfg = mlp::bench_config(st.get_int("width", 1), st.get_int("depth", 1));
  const int batch = st.get_int("batch", 1);
  std::unique_ptr<par::nccl::LocalGroup> g;
  try {
    g = std::make_unique<par::nccl::LocalGroup>(par::Collective::all_reduce,
                                                std::size_t(st.get_double("bucket_mb") * par::kMiB),
                                                par::nccl::DType::fp32, kSeed, par::nccl::LocalGroup::Scope::this_process);
  } catch (const par::Unavailable& e) {
    throw gtb::Skip(e.what());
  }
  const par::nccl::CheckResult rc = g->run_and_check();
  const mlp::Dataset data = mlp::make_clusters(batch, cfg.input, cfg.classes, kSeed);
  GTB_CUDA_CHECK(cudaSetDevice(0));
  gm::GpuMlp model(cfg, batch, 1, gm::Precision::fp32);
  model.load_data(data.x.data(), data.y.data(), gm::DataSource::device);
  mlp::StepCase checked = mlp::step_case(cfg, data, batch);
  const mlp::StepCheck step_check = mlp::check_step_f64(gm::step_probe(model), checked);
  const mlp::VerifyResult res{step_check.ok, step_check.detail, 0};
  const std::vector<float>& p0 = step_check.params_before;
  const std::vector<float>& o0 = step_check.opt_before;
  const mlp::ScaleState s0 = step_check.scale_before;
  // How many reductions cover a backward: measured once, outside the samples.
  model.set_params(p0);
  model.set_opt_state(o0);
  model.set_scale_state(s0);
  // No blocking kernel holds the stream while NCCL works (see gpu_dp_step).
  const gtb::cuda::EventTiming unblocked{gtb::Blocking::forbidden, 1};
  const auto backward = [&](cudaStream_t) { model.backward(0); };
  model.forward(0);
  const double t_bwd = gtb::cuda::probe(model.stream(), backward, unblocked, gtb::ProbeRule{1, 0.02, 1});
  const double t_red = st.probe([&] { g->enqueue(1); }, [&] { g->sync(); }, gtb::ProbeRule{1, 0.02, 3});
  const auto k = std::int64_t(std::clamp(std::ceil(2.0 * t_bwd / t_red), 1.0, 1000.0));
  // Backward alone and with reductions in flight, from the same forward: the gradients must agree
  // (bias gradients are summed with atomics, so their order and last bits may differ).
  model.forward(0);
  model.backward(0);
  const std::vector<float> ga = model.grads();
  model.forward(0);
  g->enqueue(k);
  model.backward(0);
  model.sync();
  g->sync();
  const std::vector<float> gb = model.grads();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ga.size(); ++i) {
    num += (double(gb[i]) - ga[i]) * (double(gb[i]) - ga[i]);
    den += double(ga[i]) * ga[i];
  }
  const double diff = std::sqrt(num / (den > 0 ? den : 1));
  const bool ok = rc.ok && res.ok && diff <= 1e-5;
  st.check(ok, !rc.ok ? rc.detail : !res.ok ? res.detail
                                 : diff > 1e-5 ? "backward under contention differs from backward alone: " +
                                                     std::to_string(diff) + " (relative norm of the gradients)"
                                               : res.detail + "; backward gives the same gradients with reductions in flight");
  if (!ok) return;
  // Backward repeats from the one forward above: the same kernels on the same shapes every time (the
  // bias gradients keep accumulating, which changes no work).
  st.set_work(1);
  // Each repetition in a region of its own: the reductions are queued before it and waited for after.
  gtb::cuda::AroundEachRep around;
  if (contended) around = {[&](cudaStream_t) { g->enqueue(k); }, [&] { g->sync(); }};
  gtb::cuda::exec_each(st, model.stream(), backward, around, unblocked);
  st.counter("backward_ms", st.record().stats->median * 1e3, "ms");
  st.counter("reductions_in_flight", double(contended ? k : 0), "count");
  st.counter("reduction_bytes", double(g->bytes()), "bytes");
  st.counter("reduction_alone_ms", t_red * 1e3, "ms");
  st.info("gpus", g->ranks());
  st.info("processes", mpi::size());
  st.info("note", "backward alone (weight and input gradients of every layer) timed with CUDA events on its "
                  "stream; forward ran once before, outside the timed region");
}
#else
void gpu_collective(gtb::State&) { throw gtb::Skip("built without CUDA"); }
void gpu_interference(gtb::State&) { throw gtb::Skip("built without CUDA"); }
void gpu_dp_step(gtb::State&) { throw gtb::Skip("built without CUDA"); }
#endif

using I = std::vector<std::int64_t>;
using S = std::vector<std::string>;
const std::vector<std::string> kCollectives = gtb::names_of(par::kCollectiveNames);
const std::vector<std::int64_t> kBytesFull = {4096, 65536, 1 << 20, 16 << 20, 256 << 20, 1 << 30};
const std::vector<std::int64_t> kBytesQuick = {4096, 1 << 20, 16 << 20};

[[maybe_unused]] auto& b_mpi = gtb::add("parallel", "collective", "mpi", gtb::Backend::cpu, cpu_collective)
                                   .axis("ranks", I{kRanks})
                                   .axis("collective", kCollectives)
                                   .axis("bytes", kBytesFull, kBytesQuick)
                                   .option("dtype", S{"fp32"})
                                   .rate("algbw", "GB/s", 1e9)
                                   .rule(gtb::Suite::quick, kQuickRule)
                                   .describe("MPI collective, float32 sum; algbw = bytes / time (nccl-tests' sizes)");
[[maybe_unused]] auto& b_plain = gtb::add("parallel", "collective", "mpi_plain_loop", gtb::Backend::cpu, cpu_collective)
                                     .axis("ranks", I{kRanks})
                                     .axis("collective", S{"all_reduce"})
                                     .axis("bytes", I{kBytesFull.back()}, I{kBytesQuick.back()})
                                     .option("dtype", S{"fp32"})
                                     .rate("algbw", "GB/s", 1e9)
                                     .rule(gtb::Suite::quick, kQuickRule)
                                     .describe("A bare MPI_Allreduce loop timed on rank 0: the yardstick for the mpi records");
[[maybe_unused]] auto& b_nccl = gtb::add("parallel", "collective", "nccl", gtb::Backend::cuda, gpu_collective)
                                    .axis("gpus", S{"all_local"})
                                    .axis("collective", kCollectives)
                                    .axis("bytes", kBytesFull, kBytesQuick)
                                    .option("dtype", S{"fp32", "bf16"})
                                    .rate("algbw", "GB/s", 1e9)
                                    .describe("NCCL collective over every local GPU from one process (ncclCommInitAll)");
[[maybe_unused]] auto& b_intf = gtb::add("parallel", "interference", "nccl", gtb::Backend::cuda, gpu_interference)
                                    .axis("width", I{2048, 4096}, I{2048})
                                    .axis("depth", I{4})
                                    .axis("batch", I{256})
                                    .axis("bucket_mb", std::vector<double>{25})
                                    .option("reduction", S{"off", "on"})
                                    .time("backward_time", "ms", 1e-3)
                                    .describe("One GPU: the training step's backward alone and with bucket-sized "
                                              "NCCL all-reduces in flight on another stream");
// The step's axes, shared by the CPU and GPU data-parallel records and their one-rank denominators.
gtb::Bench& model_axes(gtb::Bench& b) {
  return b.axis("ranks", I{kRanks})
      .axis("width", I{1024, 2048}, I{512})
      .axis("depth", I{4, 7}, I{3})
      .axis("rows_per_rank", I{64}, I{16})
      .rate("throughput", "samples/s", 1.0)
      .rule(gtb::Suite::quick, kQuickRule);
}
gtb::Bench& bucket_axes(gtb::Bench& b) {
  return model_axes(b)
      .axis("bucket_mb", std::vector<double>{1, 25, 100}, std::vector<double>{1})
      .option("overlap", S{"off", "on"});
}
[[maybe_unused]] auto& b_dp = bucket_axes(gtb::add("parallel", "dp_step", "mpi", gtb::Backend::cpu, cpu_dp_step))
                                  .describe("Data-parallel MLP step: shard of the global batch per rank, "
                                            "DDP-style buckets (first 1 MiB), MPI all-reduce");
[[maybe_unused]] auto& b_one = model_axes(gtb::add("parallel", "dp_step", "one_rank", gtb::Backend::cpu, cpu_dp_step))
                                   .describe("The same step on rank 0 alone without communication: the "
                                             "one-rank throughput that scaling efficiency divides by");
[[maybe_unused]] auto& b_gpu_dp =
    bucket_axes(gtb::add("parallel", "dp_step", "nccl", gtb::Backend::cuda, gpu_dp_step))
        .describe("Data-parallel MLP step on GPUs (the train family's CUDA step): shard of the global batch "
                  "per GPU, DDP-style buckets (first 1 MiB) averaged with NCCL, overlap on a second stream");
[[maybe_unused]] auto& b_gpu_one =
    model_axes(gtb::add("parallel", "dp_step", "one_rank", gtb::Backend::cuda, gpu_dp_step))
        .describe("The same GPU step on rank 0's GPU alone without communication: the one-GPU throughput "
                  "that scaling efficiency divides by, and the compute of the projection");

}  // namespace
