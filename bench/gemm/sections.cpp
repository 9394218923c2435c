// The gemm family's findings for the report and plots: the best rate per backend and precision,
// its error, GPU over CPU at the same precision, misaligned shapes.
#include <algorithm>
#include <cmath>
#include <map>

#include "bench/gemm/findings.h"
#include "harness/runtime/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;

void best_rates(const std::vector<gtb::Record>& recs, fx::Family& f) {
  auto& s = f.section("best", "Best rate per backend and precision");
  struct Acc {
    double best = 0, worst_err = -1, tol = -1, pct_peak = -1;
    std::string shape, variant;
  };
  std::map<std::string, std::map<std::string, Acc>> acc;
  for (const auto& r : recs) {
    if (!gtb::usable(r)) continue;
    std::string prec = fx::option_text(r, "precision");
    if (prec.empty()) prec = "fp32";
    Acc& a = acc[gtb::to_string(r.backend)][prec];
    if (*r.value > a.best) {
      a.best = *r.value;
      a.shape = fx::params_text(r.params);
      a.variant = r.variant;
      if (r.counters.count("pct_of_datasheet_peak")) a.pct_peak = r.counters.at("pct_of_datasheet_peak").value;
    }
    for (const char* c : {"rel_fro_err", "max_rel_error"})
      if (r.counters.count(c)) a.worst_err = std::max(a.worst_err, r.counters.at(c).value);
    if (r.counters.count("tolerance")) a.tol = std::max(a.tol, r.counters.at("tolerance").value);
  }
  auto& t = s.table("best", {{"backend"}, {"precision"}, {"best", "TFLOP/s", Hint::rate}, {"best over best FP32", "", Hint::ratio},
                             {"worst relative error", "", Hint::number}, {"tolerance", "", Hint::number},
                             {"of datasheet peak", "", Hint::percent}, {"at"}});
  auto or_null = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  for (const auto& [be, precs] : acc) {
    const double fp32 = precs.count("fp32") ? precs.at("fp32").best : 0;
    for (const auto& [prec, a] : precs)
      t.rows.push_back({be, prec, a.best, fp32 > 0 ? json(a.best / fp32) : json(nullptr), or_null(a.worst_err),
                        a.tol > 0 ? json(a.tol) : json(nullptr), or_null(a.pct_peak), a.variant + ", " + a.shape});
  }
  if (t.rows.empty()) s.not_measured = "no gemm record has a number (" + fx::why_none(recs, gtb::Backend::cuda) + ")";
  if (!fx::any_number(recs, gtb::Backend::cuda)) s.say("GPU: not measured (" + fx::why_none(recs, gtb::Backend::cuda) + ").");
  // One line joins only a sweep of one kind of shape: square matrices growing. The skinny, training
  // and misaligned shapes are other questions (the table and the lines below answer them); joined
  // to the squares by their cube root they draw a line through unrelated shapes.
  auto& g = s.figure("gemm_tflops", "GEMM throughput vs size of square matrices (m = n = k), per precision");
  g.where = {{"workload", "gemm"}, {"options.l2", {"warm", nullptr}}, {"info.shape_class", "square"}};
  g.x = {"params.m"};
  g.series = {"backend", "options.precision"};
  g.reduce = "max";
  g.logx = 2;
  g.logy = true;
  g.xlabel = "matrix size m = n = k";
  g.ylabel = "TFLOP/s (2*m*n*k / time), best library";
  // The datasheet peak of each precision the GPU ran, as a dotted line.
  std::map<std::string, double> peaks;
  for (const auto& r : recs)
    if (gtb::usable(r) && r.info.contains("datasheet") && r.info.at("datasheet").is_object() &&
        r.info.at("datasheet").contains("peak_tflops") && r.info.at("datasheet").at("peak_tflops").is_number())
      peaks[fx::option_text(r, "precision")] = r.info.at("datasheet").at("peak_tflops").get<double>();
  for (const auto& [prec, peak] : peaks) g.hlines.push_back({peak, prec + " datasheet peak"});
}

void against(const gtb::gemm::Findings& found, fx::Family& f) {
  auto& s = f.section("comparisons", "GPU over CPU and misaligned shapes");
  double lo = INFINITY, hi = 0;
  for (const auto& e : found.gpu_vs_cpu_same_precision) lo = std::min(lo, e.gpu_over_cpu), hi = std::max(hi, e.gpu_over_cpu);
  if (hi > 0) {
    s.line("gpu_over_cpu_low", "GPU over CPU at the same precision and shape, lowest", lo, "", Hint::ratio);
    s.line("gpu_over_cpu_high", "GPU over CPU at the same precision and shape, highest", hi, "", Hint::ratio);
  }
  double worst = INFINITY;
  for (const auto& e : found.alignment) worst = std::min(worst, e.ratio);
  if (std::isfinite(worst))
    s.line("misaligned_worst", "misaligned shapes at their worst, of the aligned shape's rate", worst, "", Hint::fraction);
  if (s.lines.empty()) s.not_measured = "needs GPU and CPU records of the same precision, or misaligned shapes beside aligned ones";
}

const bool kFindings = gtb::add_family_findings<gtb::gemm::Findings>(
    "gemm", "Matrix multiply", 40, gtb::gemm::compute_findings, gtb::gemm::to_json,
    [](const std::vector<gtb::Record>& recs, const gtb::gemm::Findings& found, fx::Family& f) {
      best_rates(recs, f);
      against(found, f);
    });

}  // namespace
