// Host tests of the GPU transformer step's host decisions: attention batching, device memory
// accounting, tolerances, the checked configuration and the registered GPU sweeps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "gtb/gtb.h"
#include "kernels/transformer/cuda/step_plan.h"
#include "tests/common/small_configs.h"

namespace xf = gtb::xfmr;
namespace xg = gtb::xfmr::gpu;

namespace {
xf::Config cfg(int layers, int d, int heads, int seq, int batch) {
  return gtb::test::xfmr_config(layers, d, heads, seq, batch);
}
}  // namespace

// Every (sample, head) matrix is reached exactly once, at the offsets of the step's layouts.
TEST(TransformerGpuHost, AttentionBatchingReachesEveryHeadOnce) {
  for (const auto& c : {cfg(1, 64, 4, 8, 2), cfg(1, 64, 2, 8, 5), cfg(1, 96, 3, 4, 3), cfg(1, 32, 1, 16, 7)}) {
    const xg::AttentionBatching a = xg::attention_batching(c);
    const long long S = c.seq_len, d = c.d_model, dh = c.head_dim(), H = c.heads;
    EXPECT_EQ(a.calls, std::min(c.batch, c.heads));
    EXPECT_EQ(a.calls * a.count, c.batch * c.heads);
    std::set<std::tuple<long long, long long, long long>> seen, want;
    for (int call = 0; call < a.calls; ++call)
      for (int i = 0; i < a.count; ++i)
        seen.insert({call * a.qkv_step + i * a.qkv_stride, call * a.ctx_step + i * a.ctx_stride,
                     call * a.p_step + i * a.p_stride});
    for (long long b = 0; b < c.batch; ++b)
      for (long long h = 0; h < H; ++h) want.insert({b * S * 3 * d + h * dh, b * S * d + h * dh, (b * H + h) * S * S});
    EXPECT_EQ(seen, want) << "batch " << c.batch << " heads " << c.heads;
  }
}

TEST(TransformerGpuHost, MemoryAccountingGrowsAsEachAttentionStores) {
  const xf::Config c = cfg(2, 256, 4, 1024, 2);
  const xg::Buffers mat = xg::buffers(c, xf::Attention::materialised, gtb::Precision::fp32);
  const xg::Buffers fus = xg::buffers(c, xf::Attention::fused, gtb::Precision::fp32);
  const xg::Buffers m16 = xg::buffers(c, xf::Attention::materialised, gtb::Precision::bf16);
  EXPECT_EQ(mat.per_layer_attention, std::size_t(2) * 4 * 1024 * 1024);  // B H S^2
  EXPECT_EQ(fus.per_layer_attention, std::size_t(2) * 4 * 1024);         // B H S
  EXPECT_EQ(mat.params, xf::Layout(c).total);
  EXPECT_EQ(mat.bf16_weights, 0u);
  EXPECT_EQ(m16.bf16_weights, mat.params);
  // A BF16 slot holds every operand cast into it: activations up to T x 4d and the probabilities.
  EXPECT_GE(m16.bf16_slot, std::size_t(c.tokens()) * 4 * 256);
  EXPECT_GE(m16.bf16_slot, mat.per_layer_attention);
  EXPECT_LT(fus.bytes(c.layers), mat.bytes(c.layers));
  EXPECT_GT(m16.bytes(c.layers), mat.bytes(c.layers));
  // Doubling seq_len at fixed tokens doubles materialised attention's bytes, leaves the fused one's.
  const xf::Config c2 = cfg(2, 256, 4, 2048, 1);
  EXPECT_EQ(xg::buffers(c2, xf::Attention::materialised, gtb::Precision::fp32).per_layer_attention,
            2 * mat.per_layer_attention);
  EXPECT_EQ(xg::buffers(c2, xf::Attention::fused, gtb::Precision::fp32).per_layer_attention, fus.per_layer_attention);
  // One more layer adds exactly one layer's stored activations and one more residual-stream slice.
  const xf::Config c3 = cfg(3, 256, 4, 1024, 2);
  const xg::Buffers b3 = xg::buffers(c3, xf::Attention::fused, gtb::Precision::fp32);
  EXPECT_EQ(b3.bytes(3) - fus.bytes(2),
            4 * (4 * (b3.params - fus.params) + fus.per_layer + fus.per_layer_attention + std::size_t(c.tokens()) * 256));
}

TEST(TransformerGpuHost, TolerancePerPrecisionAndBadPrecision) {
  const xf::Config c = cfg(2, 128, 4, 64, 2);
  const xf::Tolerance f = xg::tolerance(c, gtb::Precision::fp32), t = xg::tolerance(c, gtb::Precision::tf32),
                      b = xg::tolerance(c, gtb::Precision::bf16);
  EXPECT_EQ(f.grad_rtol, xf::fp32_tolerance().grad_rtol);
  EXPECT_EQ(b.grad_rtol, xf::bf16_tolerance(c).grad_rtol);
  EXPECT_GT(t.grad_rtol, f.grad_rtol);
  EXPECT_LT(t.grad_rtol, b.grad_rtol);
  // A rounded BF16 product's sqrt(2/3) 2^-8 against a truncated TF32 product's bias 2^-10.
  EXPECT_NEAR(b.grad_rtol / t.grad_rtol, 4.0 * std::sqrt(2.0 / 3.0), 1e-9);
  try {
    xg::tolerance(c, gtb::Precision::fp16);
    FAIL() << "fp16 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp16"), std::string::npos) << e.what();
  }
}

TEST(TransformerGpuHost, CheckedConfigurationKeepsTheCodePathAndBoundsTheReference) {
  const xg::CheckedConfig small = xg::checked_config(cfg(2, 256, 4, 256, 4));
  EXPECT_FALSE(small.reduced);
  EXPECT_EQ(small.config.batch, 4);
  for (const auto& c : {cfg(2, 4096, 32, 8192, 1), cfg(2, 1024, 16, 128, 128), cfg(4, 1024, 16, 8192, 2),
                        cfg(2, 256, 4, 128, 256)}) {
    const xg::CheckedConfig r = xg::checked_config(c);
    EXPECT_TRUE(r.reduced);
    EXPECT_EQ(r.config.d_model, c.d_model);
    EXPECT_EQ(r.config.heads, c.heads);
    EXPECT_EQ(r.config.layers, 1);
    // The fewest sequences that take the record's own batching of the attention GEMMs.
    EXPECT_EQ(xg::attention_batching(r.config).over_heads, xg::attention_batching(c).over_heads) << c.batch;
    EXPECT_EQ(r.config.batch, c.batch <= c.heads ? 1 : c.heads + 1);
    EXPECT_LE(r.config.seq_len, xg::kCheckedSeqMax);
    EXPECT_GE(r.config.seq_len, std::min(c.seq_len, xg::kCheckedSeqMin));
    EXPECT_TRUE(xg::reference_affordable(r.config) || r.config.seq_len == xg::kCheckedSeqMin)
        << r.config.seq_len << " at d_model " << c.d_model;
    EXPECT_NE(r.note.find("reduced"), std::string::npos);
    EXPECT_NE(r.note.find(std::to_string(c.d_model)), std::string::npos);
  }
  // Just over the FLOP bound: reduced; at d_model 4096 even the clamped sequence halves to the floor.
  EXPECT_EQ(xg::checked_config(cfg(2, 4096, 32, 2048, 2)).config.seq_len, xg::kCheckedSeqMin);
}

TEST(TransformerGpuHost, SweepRowsSpanTheIssuesRanges) {
  const auto seq = xg::seq_rows(16384);
  ASSERT_FALSE(seq.empty());
  EXPECT_EQ(seq.front()[0], 128);
  EXPECT_EQ(seq.back()[0], 8192);
  for (const auto& r : seq) EXPECT_EQ(r[0] * r[1], 16384);
  EXPECT_EQ(xg::seq_rows(1000).size(), 0u);  // no power of two from 128 divides 1000 tokens
  const auto w = xg::width_rows();
  EXPECT_EQ(w.front()[0], 256);
  EXPECT_EQ(w.back()[0], 4096);
  for (const auto& r : w) {
    EXPECT_EQ(r[0] % r[1], 0) << r[0];
    EXPECT_LE(r[0] / r[1], 128);
  }
}

// The GPU records are registered in every build (skipped without CUDA), with the CPU records'
// workload and variant names, and the quick list stays small (the GPU check's budget).
TEST(TransformerGpuHost, RegisteredGpuRecords) {
  const auto quick = gtb::planned_records("transformer", gtb::Suite::quick);
  const auto full = gtb::planned_records("transformer", gtb::Suite::full);
  std::size_t quick_gpu = 0;
  for (const auto& r : quick)
    if (r.backend == gtb::Backend::cuda) {
      ++quick_gpu;
      EXPECT_TRUE(r.workload == "configs" || r.workload == "seq_sweep") << r.id;
    }
  EXPECT_GT(quick_gpu, 0u);
  EXPECT_LE(quick_gpu, 12u);
  std::set<std::string> workloads, variants;
  std::set<std::int64_t> seqs, widths;
  std::set<std::string> precisions, modes;
  for (const auto& r : full) {
    if (r.backend != gtb::Backend::cuda) continue;
    workloads.insert(r.workload), variants.insert(r.variant);
    for (const char* k : {"layers", "d_model", "heads", "seq_len", "batch"}) ASSERT_TRUE(r.params.contains(k)) << r.id;
    seqs.insert(r.params["seq_len"].get<std::int64_t>());
    widths.insert(r.params["d_model"].get<std::int64_t>());
    if (r.options.contains("precision")) precisions.insert(r.options["precision"].get<std::string>());
    if (r.options.contains("mode")) modes.insert(r.options["mode"].get<std::string>());
  }
  EXPECT_EQ(workloads, (std::set<std::string>{"batch_sweep", "configs", "heads_sweep", "seq_sweep", "width_sweep"}));
  EXPECT_EQ(variants, (std::set<std::string>{"fused", "materialised"}));
  EXPECT_EQ(*seqs.begin(), 128);
  EXPECT_EQ(*seqs.rbegin(), 8192);
  EXPECT_EQ(*widths.begin(), 128);  // the CPU's smallest configuration, paired
  EXPECT_EQ(*widths.rbegin(), 4096);
  EXPECT_EQ(precisions, (std::set<std::string>{"bf16", "fp32", "tf32"}));
  EXPECT_EQ(modes, (std::set<std::string>{"eager", "graph"}));
  // The batch sweep keeps the CPU's params (layers 2, d_model 256, heads 4, seq_len 128, batch
  // 1..32): the pairs give the crossover in tokens per step.
  std::set<std::int64_t> batches;
  for (const auto& r : full)
    if (r.backend == gtb::Backend::cuda && r.workload == "batch_sweep") {
      EXPECT_EQ(r.params["d_model"].get<std::int64_t>(), 256) << r.id;
      EXPECT_EQ(r.params["seq_len"].get<std::int64_t>(), 128) << r.id;
      batches.insert(r.params["batch"].get<std::int64_t>());
    }
  for (std::int64_t b : {1, 2, 4, 8, 16, 32}) EXPECT_EQ(batches.count(b), 1u) << "batch " << b;
}

// ---- the GEMM calls the step makes, emulated with column-major BLAS semantics in double ----
namespace {
std::vector<double> rnd(std::size_t n, std::uint64_t seed) {
  std::vector<double> v(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    e = double(x % 2001) / 1000.0 - 1.0;
  }
  return v;
}
// What cuBLAS computes: C = op(A) op(B), column-major, C m x n, over `count` matrices.
void blas(const xg::ColumnMajorGemm& g, const double* A, long long sA, const double* B, long long sB, double* C,
          long long sC, int count) {
  for (int q = 0; q < count; ++q)
    for (int j = 0; j < g.n; ++j)
      for (int i = 0; i < g.m; ++i) {
        double s = 0;
        for (int p = 0; p < g.k; ++p) {
          const double a = g.trans_a ? A[q * sA + p + std::size_t(i) * g.lda] : A[q * sA + i + std::size_t(p) * g.lda];
          const double b = g.trans_b ? B[q * sB + j + std::size_t(p) * g.ldb] : B[q * sB + p + std::size_t(j) * g.ldb];
          s += a * b;
        }
        C[q * sC + i + std::size_t(j) * g.ldc] = s;
      }
}
}  // namespace

TEST(TransformerGpuHost, ColumnMajorCallComputesTheRowMajorProduct) {
  const int M = 5, N = 7, K = 3;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int lda = (ta ? M : K) + 2, ldb = (tb ? K : N) + 1, ldc = N + 3;  // row-major leading dims, padded
      const auto A = rnd(std::size_t(ta ? K : M) * lda, 1), B = rnd(std::size_t(tb ? N : K) * ldb, 2);
      std::vector<double> C(std::size_t(M) * ldc, -7.0);
      const xg::ColumnMajorGemm g = xg::column_major(ta, tb, M, N, K, lda, ldb, ldc);
      EXPECT_LE(g.a_rows, g.lda);
      EXPECT_LE(g.b_rows, g.ldb);
      EXPECT_LE(g.m, g.ldc);
      EXPECT_EQ(g.trans_a ? g.a_cols : g.a_rows, g.m);
      EXPECT_EQ(g.trans_b ? g.b_rows : g.b_cols, g.n);
      blas(g, B.data(), 0, A.data(), 0, C.data(), 0, 1);  // cuBLAS's A is the row-major B
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double want = 0;
          for (int p = 0; p < K; ++p)
            want += (ta ? A[std::size_t(p) * lda + i] : A[std::size_t(i) * lda + p]) *
                    (tb ? B[std::size_t(j) * ldb + p] : B[std::size_t(p) * ldb + j]);
          EXPECT_NEAR(C[std::size_t(i) * ldc + j], want, 1e-12) << "ta " << ta << " tb " << tb << " at " << i << "," << j;
        }
    }
}

// The materialised attention's calls (the same lists and views step.cpp runs), emulated, against
// attention written out per (sample, head): forward context and every part of dqkv, both batchings.
TEST(TransformerGpuHost, MaterialisedAttentionCallsComputeAttention) {
  for (const auto& c : {cfg(1, 12, 3, 5, 2), cfg(1, 8, 2, 4, 3)}) {
    const int S = c.seq_len, d = c.d_model, H = c.heads, B = c.batch, dh = c.head_dim();
    const std::size_t T = std::size_t(c.tokens());
    const double scale = 1.0 / std::sqrt(double(dh));
    const xg::AttentionBatching ab = xg::attention_batching(c);
    const auto qkv = rnd(T * 3 * d, 3), dctx = rnd(T * d, 4);
    std::vector<double> P(std::size_t(B) * H * S * S, 9.0), dP(P.size(), 9.0), ctx(T * d, 9.0), dqkv(T * 3 * d, 9.0);
    auto buf = [&](xg::Buf b) -> double* {
      switch (b) {
        case xg::Buf::qkv: return const_cast<double*>(qkv.data());
        case xg::Buf::probs: return P.data();
        case xg::Buf::ctx: return ctx.data();
        case xg::Buf::dctx: return const_cast<double*>(dctx.data());
        case xg::Buf::dqkv: return dqkv.data();
        case xg::Buf::dprobs: return dP.data();
      }
      return nullptr;
    };
    auto run = [&](const xg::AttentionGemm& gm) {
      const xg::View va = xg::view(c, ab, gm.a), vb = xg::view(c, ab, gm.b), vc = xg::view(c, ab, gm.c);
      const xg::ColumnMajorGemm g = xg::column_major(gm.ta, gm.tb, gm.M, gm.N, gm.K, va.ld, vb.ld, vc.ld);
      for (int i = 0; i < ab.calls; ++i)
        blas(g, buf(gm.b.buf) + vb.offset + i * vb.step, vb.stride, buf(gm.a.buf) + va.offset + i * va.step, va.stride,
             buf(gm.c.buf) + vc.offset + i * vc.step, vc.stride, ab.count);
    };
    auto softmax = [&](bool backward) {
      for (std::size_t r = 0; r < std::size_t(B) * H * S; ++r) {
        const int i = int(r % std::size_t(S));
        double* p = P.data() + r * S;
        double* dp = dP.data() + r * S;
        if (!backward) {
          double mx = -1e300, sum = 0;
          for (int j = 0; j <= i; ++j) mx = std::max(mx, scale * p[j]);
          for (int j = 0; j <= i; ++j) sum += std::exp(scale * p[j] - mx);
          for (int j = 0; j < S; ++j) p[j] = j <= i ? xf::softmax_p(p[j], scale, mx, 1.0 / sum) : 0.0;
        } else {
          double dot = 0;
          for (int j = 0; j <= i; ++j) dot += p[j] * dp[j];
          for (int j = 0; j < S; ++j) dp[j] = j <= i ? xf::softmax_backward(p[j], dp[j], dot, scale) : 0.0;
        }
      }
    };
    const auto fw = xg::attention_forward_gemms(c), bw = xg::attention_backward_gemms(c);
    run(fw[0]);
    softmax(false);
    run(fw[1]);
    run(bw[0]);
    run(bw[1]);
    softmax(true);
    run(bw[2]);
    run(bw[3]);
    // Written out: per (b, h), with q(i, e) = qkv[(b S + i) 3d + h dh + e], k at + d, v at + 2d.
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        auto at = [&](int part, int i, int e) { return qkv[(std::size_t(b) * S + i) * 3 * d + part * d + h * dh + e]; };
        auto dO = [&](int i, int e) { return dctx[(std::size_t(b) * S + i) * d + h * dh + e]; };
        std::vector<double> p(std::size_t(S) * S, 0.0), ds(p.size(), 0.0);
        for (int i = 0; i < S; ++i) {
          double mx = -1e300, sum = 0;
          std::vector<double> s(std::size_t(i) + 1);
          for (int j = 0; j <= i; ++j) {
            for (int e = 0; e < dh; ++e) s[std::size_t(j)] += at(0, i, e) * at(1, j, e);
            mx = std::max(mx, scale * s[std::size_t(j)]);
          }
          for (int j = 0; j <= i; ++j) sum += std::exp(scale * s[std::size_t(j)] - mx);
          for (int j = 0; j <= i; ++j) p[std::size_t(i) * S + j] = std::exp(scale * s[std::size_t(j)] - mx) / sum;
          double dot = 0;
          std::vector<double> dpr(std::size_t(i) + 1, 0.0);
          for (int j = 0; j <= i; ++j) {
            for (int e = 0; e < dh; ++e) dpr[std::size_t(j)] += dO(i, e) * at(2, j, e);
            dot += p[std::size_t(i) * S + j] * dpr[std::size_t(j)];
          }
          for (int j = 0; j <= i; ++j) ds[std::size_t(i) * S + j] = p[std::size_t(i) * S + j] * (dpr[std::size_t(j)] - dot) * scale;
        }
        for (int i = 0; i < S; ++i)
          for (int e = 0; e < dh; ++e) {
            double o = 0, dq = 0, dk = 0, dv = 0;
            for (int j = 0; j < S; ++j) {
              o += p[std::size_t(i) * S + j] * at(2, j, e);
              dq += ds[std::size_t(i) * S + j] * at(1, j, e);
              dk += ds[std::size_t(j) * S + i] * at(0, j, e);
              dv += p[std::size_t(j) * S + i] * dO(j, e);
            }
            const std::size_t row = std::size_t(b) * S + i;
            EXPECT_NEAR(ctx[row * d + h * dh + e], o, 1e-12) << "ctx b " << b << " h " << h << " i " << i;
            EXPECT_NEAR(dqkv[row * 3 * d + h * dh + e], dq, 1e-12) << "dq b " << b << " h " << h << " i " << i;
            EXPECT_NEAR(dqkv[row * 3 * d + d + h * dh + e], dk, 1e-12) << "dk b " << b << " h " << h << " i " << i;
            EXPECT_NEAR(dqkv[row * 3 * d + 2 * d + h * dh + e], dv, 1e-12) << "dv b " << b << " h " << h << " i " << i;
          }
      }
  }
}

// ---- the tf32 tolerance against a float64 model of the step with TF32 operands ----
namespace {
// The worst gradient error of a step whose GEMM operands are TF32 against the exact float64 step:
// the check's own measure (check_step), every parameter tensor.
double tf32_model_error(const xf::Config& c, xf::Attention a, bool truncate) {
  const xf::Data data = xf::make_data(c, 99);
  const std::vector<float> p0 = xf::init_params(c, xf::Layout(c)), zeros(p0.size(), 0.0f);
  const std::vector<double> pd(p0.begin(), p0.end());
  const xf::RefStep exact = xf::reference_step(c, pd, {}, {}, 0, data.x.data(), data.target.data());
  // Fused attention runs in FP32 on CUDA cores: only the materialised attention's GEMMs are TF32.
  const xf::GemmOperands tf32{[truncate](double x) { return double(gtb::tf32_operand(float(x), !truncate)); },
                              a == xf::Attention::materialised};
  const xf::RefStep model = xf::reference_step(c, pd, {}, {}, 0, data.x.data(), data.target.data(), tf32);
  auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  const std::vector<float> g = f(model.grads), p1 = f(model.params_after), m1 = f(model.m_after), v1 = f(model.v_after);
  const xf::CheckResult r = xf::check_step(c, exact, p0, zeros, zeros, 0,
                                           xf::StepOutputs{model.loss, g.data(), p1.data(), m1.data(), v1.data()},
                                           xf::Tolerance{1.0, 1.0, 1.0});
  return r.worst_grad_rel;
}
}  // namespace

// The GPU step's tf32 check must hold when the tensor cores truncate: the model's worst gradient
// error stays under half the tolerance (a margin of 2) for the configurations the GPU test and the
// tf32 records check, in both attentions. Rounding to nearest errs less than truncating (the model
// can tell them apart).
TEST(TransformerGpuHost, Tf32ToleranceHoldsForTruncatedOperands) {
  // The GPU test's two configurations (both batchings), then what the tf32 records check.
  std::vector<xf::Config> checked = {cfg(2, 64, 4, 48, 2), cfg(1, 64, 2, 64, 5)};
  for (const xf::Config& c : {cfg(2, 128, 4, 128, 4), cfg(2, 256, 4, 256, 4), cfg(2, 384, 6, 256, 4)})
    checked.push_back(xg::checked_config(c).config);
  for (const xf::Config& c : checked)
    for (xf::Attention a : {xf::Attention::materialised, xf::Attention::fused}) {
      const double trunc = tf32_model_error(c, a, true);
      const double tol = xg::tolerance(c, gtb::Precision::tf32).grad_rtol;
      std::printf("tf32 model: layers %d d_model %d heads %d seq %d batch %d %s: worst gradient error %.2e with "
                  "truncated operands; tolerance %.2e (margin %.1f)\n",
                  c.layers, c.d_model, c.heads, c.seq_len, c.batch, xf::to_string(a), trunc, tol, tol / trunc);
      EXPECT_LE(2.0 * trunc, tol) << "layers " << c.layers << " d_model " << c.d_model << " " << xf::to_string(a);
      EXPECT_GT(trunc, 1e-4) << "the model's operands were not truncated";
    }
  // Rounding to nearest errs far less than truncating: the model tells the two apart.
  const double nearest = tf32_model_error(checked[0], xf::Attention::materialised, false);
  EXPECT_LT(4.0 * nearest, tf32_model_error(checked[0], xf::Attention::materialised, true));
}
