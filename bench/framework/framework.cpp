// Framework family: PyTorch, found at run time, measured beside gtb's own kernels: its cost per eager
// operator, the articles' Python loop, its training steps (eager, torch.compile, CUDA graph), its
// DataLoader, mixed precision and habits. A Python worker runs the work; the harness times it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "bench/framework/findings.h"
#include "bench/framework/worker.h"
#include "gtb/gtb.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/train/mlp.h"
#include "kernels/train/reference.h"
#include "kernels/vectorize/cpu/vectorize.h"
#include "kernels/vectorize/elementwise.h"

namespace {

namespace fw = gtb::framework;
using gtb::Backend;
using gtb::json;
using gtb::State;

constexpr std::uint64_t kSeed = 20260601;
// The train family's data: the same cluster set, the same seed (bench/train/train.cpp).
constexpr std::uint64_t kTrainDataSeed = 8086;
// The vectorize family's chain (bench/vectorize/vectorize.cpp): y = gelu_tanh(1.5 x + 0.25).
constexpr gtb::ChainParams kChain{1.5f, 0.25f};

// ---- files the worker reads and writes ------------------------------------------------------------

std::string path_in(const std::string& name) { return fw::Worker::get().folder() + "/" + name; }

template <class T>
void write_file(const std::string& name, const std::vector<T>& v) {
  std::ofstream f(path_in(name), std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
  if (!f) throw std::runtime_error("cannot write " + path_in(name));
}

std::vector<float> read_floats(const std::string& name, std::size_t n) {
  std::vector<float> v(n);
  std::ifstream f(path_in(name), std::ios::binary);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * sizeof(float)));
  if (!f || f.gcount() != std::streamsize(n * sizeof(float)))
    throw std::runtime_error("the worker wrote no " + name + " of " + std::to_string(n) + " floats");
  return v;
}

// Poisons an output before the worker writes it: a worker that writes nothing leaves NaNs.
void poison_file(const std::string& name, std::size_t n) {
  std::vector<float> v(n);
  gtb::poison(v.data(), n);
  write_file(name, v);
}

// ---- the exchange every case goes through -----------------------------------------------------------

fw::Worker& worker() {
  fw::Worker& w = fw::Worker::get();
  if (w.unavailable()) throw gtb::Skip(*w.unavailable());
  return w;
}

// The unit of a number the worker counted: bytes for a name ending in _bytes.
std::string unit_of(const std::string& key) {
  const std::string tail = "_bytes";
  return key.size() > tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0 ? "bytes" : "1";
}

// Asks the worker to prepare the case's work; a skip or an error in the worker becomes the record's.
json prepare(State& st, const json& extra_params = json::object()) {
  fw::Worker& w = worker();
  const gtb::Record& r = st.record();
  json params = r.params;
  params.update(extra_params);
  const json a = w.request({{"op", "prepare"}, {"workload", r.workload}, {"variant", r.variant},
                            {"device", r.backend == Backend::cuda ? "cuda" : "cpu"}, {"params", params},
                            {"options", r.options}, {"dir", w.folder()}});
  if (!a.value("ok", false)) {
    if (a.contains("skip")) throw gtb::Skip(a["skip"].get<std::string>());
    throw std::runtime_error("PyTorch: " + a.value("error", std::string("the worker failed")));
  }
  for (auto it = a["info"].begin(); it != a["info"].end(); ++it)
    if (it.value().is_number()) st.counter(it.key(), it.value().get<double>(), unit_of(it.key()));
  return a;
}

// The harness samples; each sample is `reps` repetitions the worker times on its host clock
// (time.perf_counter, after torch.cuda.synchronize on the GPU).
void time_in_worker(State& st) {
  fw::Worker& w = worker();
  st.exec_batch_self_timed(gtb::Clock::host_wall, [&](std::int64_t reps) {
    const json a = w.request({{"op", "run"}, {"reps", reps}});
    if (!a.value("ok", false)) throw std::runtime_error("PyTorch: " + a.value("error", std::string("run failed")));
    return a.at("seconds").get<double>();
  });
  const json s = w.request({{"op", "stats"}});
  if (s.value("ok", false))
    for (auto it = s["stats"].begin(); it != s["stats"].end(); ++it)
      if (it.value().is_number()) st.counter(it.key(), it.value().get<double>(), unit_of(it.key()));
  w.request({{"op", "release"}});
}

void note_worker(State& st) {
  const json& h = fw::Worker::get().hello();
  st.info("torch", h.value("torch", json()));
  st.info("torch_threads", h.value("threads", json()));
  st.info("torch_flush_denormal", h.value("flush_denormal", json()));
  const gtb::Record& r = st.record();
  // gtb's records of the same work: the merge pairs them (counter time_vs_same_work).
  if (auto ids = fw::same_work_ids(r.workload, r.backend, r.params, r.options); !ids.empty()) st.info("same_work_as", ids);
}

// ---- per-operator cost: the vectorize family's chain in eager PyTorch ------------------------------

std::size_t elements(State& st) {
  const std::int64_t n = st.get_int("n");
  if (n <= 0) throw std::invalid_argument("framework: n must be > 0, got " + std::to_string(n));
  return std::size_t(n);
}

void op_chain_case(State& st) {
  worker();
  const std::size_t n = elements(st);
  std::vector<float> x(n);
  gtb::fill_uniform(x.data(), n, kSeed, -3.0f, 3.0f);
  write_file("x.f32", x);
  poison_file("y.f32", n);
  prepare(st);
  const std::vector<float> y = read_floats("y.f32", n);
  std::vector<double> ref(n);
  gtb::cpu::chain_reference(kChain, x.data(), ref.data(), n);
  const gtb::ErrorReport e = gtb::compare_elementwise(y.data(), ref.data(), n, gtb::kChainRtol, gtb::kChainAtol);
  st.check(e.ok, e.detail);
  if (!e.ok) return;
  note_worker(st);
  st.set_work(double(gtb::kChainArrays) * 4.0 * double(n));
  time_in_worker(st);
}

// ---- the articles' loop against the vectorized product ------------------------------------------------

void loop_case(State& st) {
  worker();
  const std::size_t n = elements(st);
  std::vector<float> a(n), b(n);
  gtb::fill_uniform(a.data(), n, kSeed + 1);
  gtb::fill_uniform(b.data(), n, kSeed + 2);
  write_file("a.f32", a);
  write_file("b.f32", b);
  poison_file("y.f32", n);
  prepare(st);
  const std::vector<float> y = read_floats("y.f32", n);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = double(a[i]) * double(b[i]);
  const gtb::ErrorReport e = gtb::compare_elementwise(y.data(), ref.data(), n, 1e-6, 1e-7);
  st.check(e.ok, e.detail);
  if (!e.ok) return;
  note_worker(st);
  st.set_work(double(n));
  time_in_worker(st);
}

// ---- the train family's step in PyTorch --------------------------------------------------------------

gtb::mlp::Config mlp_config(State& st) {
  const auto act = st.has("activation") ? gtb::mlp::act_from_string(st.get_string("activation")) : gtb::mlp::Act::relu;
  return gtb::mlp::bench_config(st.get_int("width", 1), st.get_int("depth", 1), act);
}

double tolerance(State& st) {
  const std::string p = st.has("precision") ? st.get_string("precision") : "fp32";
  return p == "fp32" ? 1e-4 : 3e-2;  // FP32 against float64; BF16/FP16 operands (train's CPU bf16 rule, loosened)
}

// The step's files the worker writes for the check: each layer's Z, dZ (and A below the top), the
// gradients and the parameters after, all poisoned first.
std::string layer_file(gtb::mlp::Tensor t, int l) {
  const char* stem = t == gtb::mlp::Tensor::z ? "z" : t == gtb::mlp::Tensor::a ? "a" : "dz";
  return stem + std::to_string(l) + ".f32";
}

void poison_step_files(const gtb::mlp::Layout& lay, int batch) {
  for (int l = 1; l <= lay.layers(); ++l) {
    const std::size_t n = std::size_t(batch) * std::size_t(lay.dims[std::size_t(l)]);
    poison_file(layer_file(gtb::mlp::Tensor::z, l), n);
    poison_file(layer_file(gtb::mlp::Tensor::dz, l), n);
    if (l < lay.layers()) poison_file(layer_file(gtb::mlp::Tensor::a, l), n);
  }
  poison_file("grads.f32", lay.total);
  poison_file("params_after.f32", lay.total);
}

// Mean softmax cross-entropy of logits (rows x classes) in float64.
double xent(const std::vector<float>& logits, const std::vector<int>& labels, int rows, int classes) {
  double sum = 0;
  for (int r = 0; r < rows; ++r) {
    const float* z = logits.data() + std::size_t(r) * std::size_t(classes);
    double m = -std::numeric_limits<double>::infinity(), e = 0;
    for (int j = 0; j < classes; ++j) m = std::max(m, double(z[j]));
    for (int j = 0; j < classes; ++j) e += std::exp(double(z[j]) - m);
    sum += m + std::log(e) - double(z[labels[std::size_t(r)]]);
  }
  return sum / std::max(rows, 1);
}

// The check of the step the case times, on its whole batch: the train family's layer-local float64
// verification (every row of every layer's Z through probes, sampled rows elementwise, every A, the
// loss gradient, every bias gradient, the weight gradients through probes, every parameter's update)
// and the loss against the float64 cross-entropy of the logits. Its cost is O(rows x parameters)
// for a few rows plus O(batch x widths): no float64 GEMM of the whole batch.
bool check_mlp_step(State& st, const gtb::mlp::Config& cfg, const gtb::mlp::Layout& lay, const gtb::mlp::Dataset& data,
                    const std::vector<float>& p0, const json& check) {
  const int batch = data.rows;
  const std::vector<float> grads = read_floats("grads.f32", lay.total), after = read_floats("params_after.f32", lay.total);
  const std::vector<float> opt0(lay.total, 0.0f);
  gtb::mlp::StepView v;
  v.cfg = &cfg;
  v.rows = batch;
  v.x = data.x.data();
  v.labels = data.y.data();
  v.norm_rows = batch;
  v.fetch = [&](gtb::mlp::Tensor t, int l) {
    return read_floats(layer_file(t, l), std::size_t(batch) * std::size_t(lay.dims[std::size_t(l)]));
  };
  v.params_before = p0.data();
  v.opt_before = opt0.data();
  v.grads = grads.data();
  v.params_after = after.data();
  v.step_skipped = check.value("skipped", false);
  v.rtol = tolerance(st);
  const gtb::mlp::VerifyResult r = gtb::mlp::verify_step(v);
  const std::vector<float> logits = v.fetch(gtb::mlp::Tensor::z, lay.layers());
  const double want = xent(logits, data.y, batch, cfg.classes);
  const double loss = check.value("loss", std::numeric_limits<double>::quiet_NaN());
  const double loss_err = std::fabs(loss - want) / std::max(std::fabs(want), 1e-30);
  const bool ok = r.ok && loss_err <= v.rtol;
  char detail[200];
  std::snprintf(detail, sizeof detail, "; loss relative error %.2e against the float64 cross-entropy of its logits (tolerance %g)",
                loss_err, v.rtol);
  st.check(ok, "one step on the whole batch (" + std::to_string(batch) + (batch == 1 ? " row" : " rows") +
                   ") from gtb's initial parameters: " + r.detail + detail);
  return ok;
}

void mlp_case(State& st) {
  worker();
  const gtb::mlp::Config cfg = mlp_config(st);
  if (cfg.act != gtb::mlp::Act::relu) throw std::invalid_argument("framework: the step runs ReLU");
  const int batch = st.get_int("batch", 1);
  const gtb::mlp::Layout lay(cfg);
  const std::vector<float> p0 = gtb::mlp::init_params(cfg, lay);
  const gtb::mlp::Dataset data = gtb::mlp::make_clusters(batch, cfg.input, cfg.classes, kTrainDataSeed);
  write_file("params.f32", p0);
  write_file("x.f32", data.x);
  write_file("labels.i32", data.y);
  poison_step_files(lay, batch);
  json w_off = json::array(), b_off = json::array();
  for (std::size_t o : lay.w) w_off.push_back(o);
  for (std::size_t o : lay.b) b_off.push_back(o);
  // Mixed precision also reports the loss after k steps from the same start, beside fp32's.
  const int k_steps = st.record().workload == "mixed_precision" ? 20 : 0;
  const json a = prepare(st, {{"dims", lay.dims}, {"w_offsets", w_off}, {"b_offsets", b_off}, {"total", lay.total},
                              {"k_steps", k_steps}});
  if (!check_mlp_step(st, cfg, lay, data, p0, a.at("check"))) return;
  note_worker(st);
  st.counter("step_gflop", gtb::mlp::step_flops(lay, batch) / 1e9, "GFLOP");
  st.set_work(double(batch));
  time_in_worker(st);
}

// ---- PyTorch's own kernels at a training step's shapes: GEMMs and the optimizer step ---------------

// Rows of C checked against float64 (the reference costs rows x n x k).
constexpr std::int64_t kMatmulCheckRows = 16;

// Up to `rows` evenly spaced rows of C = A B (row-major, A m x k, B k x n; the first and the last
// among them) as computed (`got`) and in float64 from the operands (`ref`), appended; returns how
// many rows.
std::int64_t rows_against_float64(const float* a, const float* b, const float* c, std::int64_t m, std::int64_t n,
                                  std::int64_t k, std::int64_t rows, std::vector<float>& got, std::vector<double>& ref) {
  const std::int64_t checked = std::min(m, rows);
  for (std::int64_t r = 0; r < checked; ++r) {
    const std::int64_t i = checked == 1 ? 0 : r * (m - 1) / (checked - 1);
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * double(b[p * n + j]);
      ref.push_back(acc);
      got.push_back(c[i * n + j]);
    }
  }
  return checked;
}

void matmul_case(State& st) {
  worker();
  const std::int64_t rows = st.get_int("rows"), in = st.get_int("in"), out = st.get_int("out");
  if (rows <= 0 || in <= 0 || out <= 0) throw std::invalid_argument("framework: rows, in and out must be > 0");
  const auto [m, n, k] = fw::step_gemm(st.get_string("orientation"), rows, in, out);
  std::vector<float> a(std::size_t(m * k)), b(std::size_t(k * n));
  gtb::fill_uniform(a.data(), a.size(), kSeed + 3, -1.0f, 1.0f);
  gtb::fill_uniform(b.data(), b.size(), kSeed + 4, -1.0f, 1.0f);
  write_file("a.f32", a);
  write_file("b.f32", b);
  poison_file("c.f32", std::size_t(m * n));
  prepare(st, {{"m", m}, {"n", n}, {"k", k}});
  const std::vector<float> c = read_floats("c.f32", std::size_t(m * n));
  std::vector<float> got;
  std::vector<double> ref;
  const std::int64_t checked = rows_against_float64(a.data(), b.data(), c.data(), m, n, k, kMatmulCheckRows, got, ref);
  const gtb::ErrorReport e = gtb::compare_relative_norm(got.data(), ref.data(), got.size(), 1e-5);
  st.check(e.ok, std::to_string(checked) + " rows of C against float64: " + e.detail);
  if (!e.ok) return;
  note_worker(st);
  st.set_work(2.0 * double(m) * double(n) * double(k));
  time_in_worker(st);
}

// PyTorch's batched matmul at attention's per-head shapes: `count` products C[m x n] = op(A) op(B)
// over k with torch.bmm, nt the scores (Q K^T: B stored n x k), nn the context (P V) and the query and
// key gradients, tn the value gradient (P^T dO: A stored k x m). gtb writes A (count x m x k) and B
// (count x k x n) row-major; rows of the first and the last product are checked against float64.
void bmm_case(State& st) {
  worker();
  const std::int64_t count = st.get_int("count"), m = st.get_int("m"), n = st.get_int("n"), k = st.get_int("k");
  if (count <= 0 || m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("framework: count, m, n and k must be > 0");
  std::vector<float> a(std::size_t(count * m * k)), b(std::size_t(count * k * n));
  gtb::fill_uniform(a.data(), a.size(), kSeed + 5, -1.0f, 1.0f);
  gtb::fill_uniform(b.data(), b.size(), kSeed + 6, -1.0f, 1.0f);
  write_file("a.f32", a);
  write_file("b.f32", b);
  poison_file("c.f32", std::size_t(count * m * n));
  prepare(st, {{"count", count}, {"m", m}, {"n", n}, {"k", k}});
  const std::vector<float> c = read_floats("c.f32", std::size_t(count * m * n));
  std::vector<float> got;
  std::vector<double> ref;
  std::int64_t checked = 0;
  for (const std::int64_t q : {std::int64_t(0), count - 1})
    checked = rows_against_float64(a.data() + q * m * k, b.data() + q * k * n, c.data() + q * m * n, m, n, k,
                                   kMatmulCheckRows / 2, got, ref);
  const gtb::ErrorReport e = gtb::compare_relative_norm(got.data(), ref.data(), got.size(), 1e-5);
  st.check(e.ok, std::to_string(checked) + " rows of the first and the last product against float64: " + e.detail);
  if (!e.ok) return;
  note_worker(st);
  st.set_work(2.0 * double(count) * double(m) * double(n) * double(k));
  time_in_worker(st);
}

// gtb's optimizers, one step from (p, g) in float64: SGD momentum 0.9 lr 0.05 from a zero buffer,
// AdamW lr 1e-3 (betas 0.9, 0.999, eps 1e-8, weight decay 0.01) from zero moments.
double optimizer_reference(const std::string& kind, double p, double g) {
  if (kind == "sgd") return p - 0.05 * g;
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  const double m = (1 - b1) * g / (1 - b1), v = (1 - b2) * g * g / (1 - b2);
  return p * (1 - lr * wd) - lr * m / (std::sqrt(v) + eps);
}

void optimizer_case(State& st) {
  worker();
  const std::int64_t params = st.get_int("params"), tensors = st.get_int("tensors");
  if (tensors <= 0 || params < tensors)
    throw std::invalid_argument("framework: params must be at least tensors > 0, got " + std::to_string(params) + ", " +
                                std::to_string(tensors));
  const std::string kind = st.get_string("optimizer");
  std::vector<float> p(std::size_t(params), 0.0f), g(std::size_t(params), 0.0f);
  gtb::fill_uniform(p.data(), p.size(), kSeed + 5, -1.0f, 1.0f);
  gtb::fill_uniform(g.data(), g.size(), kSeed + 6, -1.0f, 1.0f);
  write_file("params.f32", p);
  write_file("grads.f32", g);
  poison_file("params_after.f32", p.size());
  prepare(st);
  const std::vector<float> after = read_floats("params_after.f32", p.size());
  std::vector<double> ref(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) ref[i] = optimizer_reference(kind, double(p[i]), double(g[i]));
  const gtb::ErrorReport e = gtb::compare_elementwise(after.data(), ref.data(), ref.size(), 1e-5, 1e-6);
  st.check(e.ok, "one " + kind + " step against float64: " + e.detail);
  if (!e.ok) return;
  note_worker(st);
  st.set_work(double(params));
  time_in_worker(st);
}

// ---- checks made by the worker (its own float64 copy, or an exact comparison) -------------------------

void worker_checked_case(State& st) {
  const json a = prepare(st);
  const json c = a.value("check", json::object());
  st.check(c.value("ok", false), c.value("detail", std::string("the worker reported no check")));
  if (!c.value("ok", false)) return;
  note_worker(st);
  if (st.has("batch")) st.set_work(double(st.get_int("batch", 1)) * (st.has("seq_len") ? double(st.get_int("seq_len", 1)) : 1.0));
  if (st.has("bytes")) st.set_work(double(st.get_int("bytes", 1)));
  time_in_worker(st);
}

// ---- registration --------------------------------------------------------------------------------------

using I = std::int64_t;
const gtb::RuleChange kQuickRule = gtb::RuleChange().min_samples(5).budget_seconds(0.25).warmup_seconds(0.01);
// A step of a wide model takes tens of ms on two cores: three samples, a short budget.
const gtb::RuleChange kStepQuickRule = gtb::RuleChange().min_samples(3).budget_seconds(0.2);

// num_workers 0, 1, 2, 4, ... up to the cores this machine has.
std::vector<I> worker_counts() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<I> v = {0, 1};
  for (I w = 2; w <= I(cores); w *= 2) v.push_back(w);
  if (v.back() != I(cores) && cores > 1) v.push_back(I(cores));
  return v;
}

// The train family's quick CPU configurations (batch sweep at width 256, model sweep at batch 256),
// and the full suite's batches beside them.
const std::vector<std::vector<I>> kStepFull = {{256, 4, 1},    {256, 4, 8},    {256, 4, 32},  {256, 4, 128},
                                               {256, 4, 512},  {256, 4, 2048}, {256, 4, 4096}, {64, 4, 256},
                                               {256, 4, 256},  {1024, 4, 256}, {1024, 4, 32}, {1024, 4, 1024}};
const std::vector<std::vector<I>> kStepQuick = {{256, 4, 1}, {256, 4, 32}, {256, 4, 512}, {256, 4, 4096},
                                                {64, 4, 256}, {1024, 4, 256}};

const char* kStepDoc =
    "the train family's step in PyTorch (input = width, depth Linear layers, 16 classes, ReLU, cross-entropy, SGD "
    "momentum 0.9 lr 0.05; gtb's initial parameters and data): zero_grad + forward + backward + step; samples/s";

// The registrations the GPU's first cases (below) share with their workloads: the same axes in the same
// order (a case's id reads them in order), with the values given.
using Points = std::vector<std::vector<I>>;
using Names = std::vector<std::string>;

// The MLP step in PyTorch with one option varied (mode or precision); `extra` ends its description.
gtb::Bench& add_step(const char* workload, Backend be, const Points& full, const Points& quick, const char* option,
                     const Names& values, const char* extra) {
  return gtb::add("framework", workload, "pytorch", be, mlp_case)
      .zip({"width", "depth", "batch"}, full, quick)
      .option(option, values)
      .rate("throughput", "samples/s", 1.0)
      .rule(gtb::Suite::quick, kStepQuickRule)
      .describe(std::string(kStepDoc) + extra);
}

gtb::Bench& add_mlp_step(Backend be, const Points& full, const Points& quick, const Names& modes) {
  return add_step("mlp_step", be, full, quick, "mode", modes,
                  "; mode eager, compiled (torch.compile) or graph (a CUDA graph replayed)");
}

gtb::Bench& add_mixed_precision(Backend be, const Points& full, const Points& quick, const Names& precisions) {
  return add_step("mixed_precision", be, full, quick, "precision", precisions,
                  "; precision fp32, bf16 (torch.autocast, FP32 master weights) or fp16 (autocast + GradScaler); "
                  "counters: the loss after k_steps steps from the same start, step_memory_bytes (the tensors one "
                  "step holds, counted: docs/framework.md), peak_memory_bytes on the GPU (measured)");
}

gtb::Bench& add_transformer_step(Backend be, const Points& full, const Points& quick, const Names& attention,
                                 const Names& precisions, const Names& quick_precisions) {
  return gtb::add("framework", "transformer_step", "pytorch", be, worker_checked_case)
      .zip({"layers", "d_model", "heads", "seq_len", "batch"}, full, quick)
      .option("attention", attention)
      .option("precision", precisions, quick_precisions)
      .rate("throughput", "tokens/s", 1.0)
      .rule(gtb::Suite::quick, kStepQuickRule)
      .describe("the transformer family's block stack in PyTorch (pre-LN blocks, causal attention written out or "
                "F.scaled_dot_product_attention, AdamW, 0.5 mean squared error), eager; checked against the same "
                "model in float64 (loss and first update); tokens/s");
}

gtb::Bench& add_matmul(Backend be, const Points& layers, const std::vector<I>& rows, const std::vector<I>& quick_rows,
                       const Names& orientations) {
  return gtb::add("framework", "matmul", "pytorch", be, matmul_case)
      .zip({"in", "out"}, layers, layers)
      .axis("rows", rows, quick_rows)
      .option("orientation", orientations)
      .rate("rate", "GFLOP/s", 1e9)
      .rule(gtb::Suite::quick, kQuickRule)
      .describe("torch.mm at a layer in -> out's GEMMs over `rows` samples: nn the forward (rows x out over in), tn the "
                "weight gradient through a transposed view (in x out over rows), nt the input gradient (rows x in over "
                "out); FP32; 16 rows of C checked against float64");
}

// The GPU's first cases: ci/gpu-check.sh's first minutes on a GPU take the first two of every family's
// GPU quick cases and then, in this family's phase (bench/framework/ci.sh), the rest of its first eight:
// these, one case of each GPU workload a training step's time is made of (the MLP step eager and as a
// CUDA graph, mixed precision in bf16 and in fp16 with GradScaler, the transformer block step, a GEMM,
// the batch's copy to the GPU from pageable and from pinned memory). They are registered on the GPU
// before the family's other cases, from their workloads' registrations with these values only; each
// workload's registration leaves them out (without()).
struct GpuLeads {
  const gtb::Bench* mlp_step = nullptr;
  const gtb::Bench* mixed_precision = nullptr;
  const gtb::Bench* transformer_step = nullptr;
  const gtb::Bench* matmul = nullptr;
};

GpuLeads register_gpu_leads() {
  GpuLeads lead;
  lead.mlp_step = &add_mlp_step(Backend::cuda, {{1024, 4, 256}}, {}, {"eager", "graph"});
  lead.mixed_precision = &add_mixed_precision(Backend::cuda, {{512, 4, 512}}, {}, {"bf16", "fp16"});
  lead.transformer_step = &add_transformer_step(Backend::cuda, {{2, 256, 4, 128, 4}}, {}, {"fused"}, {"fp32"}, {});
  lead.matmul = &add_matmul(Backend::cuda, {{1024, 1024}}, {4096}, {}, {"nn"});
  gtb::add("framework", "to_device", "pytorch", Backend::cuda, worker_checked_case)
      .axis("bytes", std::vector<I>{1 << 20, 1 << 26}, std::vector<I>{1 << 24})
      .option("memory", std::vector<std::string>{"pageable", "pinned"})
      .rate("bandwidth", "GB/s", 1e9)
      .rule(gtb::Suite::quick, kQuickRule)
      .describe("a batch copied to the GPU with .to('cuda'): from pageable memory, or from pinned memory with "
                "non_blocking=True; checked byte for byte");
  return lead;
}

// Whether a case is one of `b`'s: each of b's axes holds the case's values.
bool among(const gtb::Bench& b, const json& params, const json& options, gtb::Suite s) {
  for (const gtb::Axis& a : b.axes()) {
    const json& of = a.is_option ? options : params;
    bool held = false;
    for (const auto& point : a.values(s)) {
      bool same = true;
      for (std::size_t j = 0; j < a.names.size() && same; ++j)
        same = of.contains(a.names[j]) && std::visit([&](const auto& v) { return of.at(a.names[j]) == json(v); }, point[j]);
      held = held || same;
    }
    if (!held) return false;
  }
  return true;
}

// `b` without the cases of `lead` (none when it is null: on the CPU).
gtb::Bench& without(gtb::Bench& b, const gtb::Bench* lead) {
  if (lead) b.filter([lead](const json& p, const json& o, gtb::Suite s) { return !among(*lead, p, o, s); });
  return b;
}

// PyTorch's own kernels, the terms its steps are priced with (docs/framework.md): torch.mm at the
// GEMM shapes the train family's steps run (each layer's forward and two backward forms, over the
// rows), and the optimizer step alone by size and tensor count.
void register_kernels(const GpuLeads& lead) {
  const Points kLayers = {{64, 64}, {64, 16}, {256, 256}, {256, 16}, {1024, 1024}, {1024, 16}};
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    without(add_matmul(be, kLayers, {1, 8, 32, 128, 512, 2048, 4096}, {1, 32, 512, 4096}, {"nn", "tn", "nt"}),
            be == Backend::cuda ? lead.matmul : nullptr);
    // Attention's per-head products of a block stack (batch x heads products of sequence x head_dim):
    // the scores (nt, S x S over dh), the context and the query/key gradients (nn, S x dh over S), the
    // value gradient (tn, S x dh over S); 16 products, S 128 and 512, dh 32 and 64.
    for (const char* o : {"nt", "nn", "tn"}) {
      const bool scores = std::string(o) == "nt";
      std::vector<std::vector<I>> shapes;
      for (I S : {128, 512})
        for (I dh : {32, 64}) shapes.push_back(scores ? std::vector<I>{S, S, dh} : std::vector<I>{S, dh, S});
      gtb::add("framework", "bmm", "pytorch", be, bmm_case)
          .axis("count", std::vector<I>{16})
          .zip({"m", "n", "k"}, shapes, shapes)
          .option("orientation", std::vector<std::string>{o})
          .rate("rate", "GFLOP/s", 1e9)
          .rule(gtb::Suite::quick, kQuickRule)
          .describe("torch.bmm over `count` products of attention's per-head shapes (batch x heads): nt the scores "
                    "Q K^T through a transposed view, nn the context P V and the query and key gradients, tn the value "
                    "gradient P^T dO through a transposed view; FP32; rows of the first and the last product checked "
                    "against float64");
    }
    gtb::add("framework", "optimizer", "pytorch", be, optimizer_case)
        .axis("params", std::vector<I>{1 << 12, 1 << 16, 1 << 20, 1 << 22}, std::vector<I>{1 << 12, 1 << 16, 1 << 20, 1 << 22})
        .axis("tensors", std::vector<I>{8, 24, 48}, std::vector<I>{8, 24})
        .option("optimizer", std::vector<std::string>{"sgd", "adamw"})
        .rate("rate", "parameters/s", 1.0)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe("optimizer.step() alone over `tensors` parameter tensors of `params` values in all, gradients set: gtb's "
                  "SGD (momentum 0.9, lr 0.05) or AdamW (lr 1e-3, weight decay 0.01); one step checked against float64");
  }
}

bool register_all() {
  GpuLeads lead;  // none on the CPU
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const bool cpu = be == Backend::cpu;
    if (!cpu) lead = register_gpu_leads();
    gtb::add("framework", "op_chain", "eager", be, op_chain_case)
        // The quick suite's sizes include the vectorize family's quick chain sizes (2^18, 2^24), so
        // that gtb's own time for the same chain stands beside PyTorch's in the report and figure.
        .axis("n", std::vector<I>{1 << 8, 1 << 12, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24},
              std::vector<I>{1 << 8, 1 << 14, 1 << 18, 1 << 24})
        .time("per_op", "us", 3e-6)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe("the vectorize family's chain y = gelu_tanh(1.5 x + 0.25) as three eager PyTorch operators (mul, add, "
                  "gelu) on n FP32 elements; per_op = time of the three / 3; checked against gtb's float64 chain");
    gtb::add("framework", "autograd_chain", "eager", be, op_chain_case)
        .axis("n", std::vector<I>{1 << 8, 1 << 12, 1 << 16, 1 << 20}, std::vector<I>{1 << 8, 1 << 14})
        .time("time", "us", 1e-6)
        .rule(gtb::Suite::quick, kQuickRule)
        .describe("the same chain as a training step runs it: recorded by autograd on an input that requires a gradient "
                  "and run backward from its sum; counter operators_per_rep (forward and backward, PyTorch's profiler); "
                  "the forward output checked against gtb's float64 chain");
    for (const char* v : {"python_loop", "vectorized"}) {
      const bool loop = std::string(v) == "python_loop";
      gtb::add("framework", "loop_vs_vector", v, be, loop_case)
          .axis("n", std::vector<I>{16, 256, 4096, 65536}, std::vector<I>{256, 4096})
          .time("time", "us", 1e-6)
          .rule(gtb::Suite::quick, kQuickRule)
          .describe(loop ? "the articles' loop: result.append(a[i] * b[i]) for i in range(n) over two tensors; time per loop"
                         : "the same product as one operator, a * b; time per call");
    }
    std::vector<std::string> modes = {"eager", "compiled"};
    if (!cpu) modes.push_back("graph");
    without(add_mlp_step(be, kStepFull, kStepQuick, modes), lead.mlp_step);
    without(add_mixed_precision(be, {{512, 4, 512}, {1024, 4, 1024}}, {{512, 4, 512}},
                                cpu ? Names{"fp32", "bf16"} : Names{"fp32", "bf16", "fp16"}),
            lead.mixed_precision);
    gtb::add("framework", "loss_read", "pytorch", be, mlp_case)
        .zip({"width", "depth", "batch"}, {{256, 4, 32}, {1024, 4, 256}}, {{256, 4, 32}})
        .option("loss_read_every", std::vector<I>{1, 100})
        .time("step_time", "us", 1e-6)
        .rule(gtb::Suite::quick, kStepQuickRule)
        .describe(std::string(kStepDoc) + "; loss.item() every loss_read_every steps (a host sync on the GPU)");
    without(add_transformer_step(be, {{2, 128, 4, 128, 4}, {2, 256, 4, 128, 4}, {2, 320, 5, 128, 4}},
                                 {{2, 128, 4, 128, 4}, {2, 256, 4, 128, 4}}, {"materialised", "fused"}, {"fp32", "bf16"},
                                 {"fp32"}),
            lead.transformer_step);
  }
  register_kernels(lead);
  gtb::add("framework", "dataloader", "pytorch", Backend::cpu, worker_checked_case)
      .axis("sample_us", std::vector<I>{0, 50, 200, 1000, 4000}, std::vector<I>{50, 1000})
      .axis("num_workers", worker_counts())
      .axis("batch", std::vector<I>{16})
      .axis("step_ms", std::vector<I>{10})
      .option("pin_memory", std::vector<std::string>{"off", "on"}, std::vector<std::string>{"off"})
      .option("persistent_workers", std::vector<std::string>{"off", "on"})
      // No workers, nothing to keep: workers 0 runs without persistence; the quick suite keeps its workers.
      .filter([](const json& p, const json& o, gtb::Suite s) {
        const bool none = p.at("num_workers") == 0, kept = o.at("persistent_workers") == "on";
        return s == gtb::Suite::quick ? none != kept : !(none && kept);
      })
      .rate("delivered", "samples/s", 1.0)
      .rule(gtb::Suite::quick, gtb::RuleChange().min_samples(8).budget_seconds(0.4))
      .describe("torch.utils.data.DataLoader over samples that each cost sample_us of CPU preprocessing, feeding a "
                "consumer whose step takes step_ms (a sleep, as a GPU step leaves the host); one repetition = one batch "
                "taken and consumed; samples/s delivered, counter idle_fraction = the consumer's wait for batches; "
                "checked: an epoch delivers every sample once, in order");
  for (const char* v : {"data_parallel", "ddp"})
    gtb::add("framework", "multi_gpu", v, Backend::cuda, worker_checked_case)
        .zip({"width", "depth", "batch"}, {{1024, 4, 1024}})
        .rate("throughput", "samples/s", 1.0)
        .describe(std::string(v) == "ddp" ? "DistributedDataParallel at the same global batch (two or more GPUs)"
                                          : "nn.DataParallel over every GPU at one global batch (two or more GPUs)");
  return true;
}
const bool kRegistered = register_all();

const bool kPrecheck = gtb::set_precheck("framework", [] { return fw::precheck(); });

// The worker is the family's cooperating process: started before the first case (so that the
// context says which PyTorch ran), stopped after the last.
const bool kGroup = gtb::set_process_group(
    "framework", gtb::ProcessGroup{nullptr, [](json& context) { context["framework"] = fw::Worker::get().context(); },
                                   nullptr, [] { fw::Worker::get().stop(); }, nullptr});

}  // namespace
